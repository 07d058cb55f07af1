"""Fixtures for the datasets tests: capture shards written the way the crawl seals them, and hubs.

The fake Hub is driven through the real huggingface_hub client, which must upload over plain LFS:
``HF_HUB_DISABLE_XET`` is set before huggingface_hub is first imported.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.hub.hfhub import HfRepo
from ccrawl.hub.localhub import LocalRepo
from ccrawl.testing.fakehub import FakeHub

TOKEN = "hf_test_token"  # the same as capture_shards.TOKEN (test modules import that one)


@pytest.fixture
def fakehub(tmp_path: Path) -> Iterator[FakeHub]:
    with FakeHub(tmp_path / "fakehub-root", page_size=3) as hub:
        yield hub


@pytest.fixture
def hf_repo(fakehub: FakeHub) -> HfRepo:
    return HfRepo("fleet/recrawl", endpoint=fakehub.url, token=TOKEN, xet=False)


@pytest.fixture
def local_repo(tmp_path: Path) -> LocalRepo:
    return LocalRepo(tmp_path / "localhub", "fleet/recrawl")


@pytest.fixture(params=["local", "fakehub"])
def any_repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalRepo | HfRepo]:
    """The same contract over both hub implementations."""
    if request.param == "local":
        yield LocalRepo(tmp_path / "localhub", "fleet/recrawl")
    else:
        with FakeHub(tmp_path / "fakehub-root", page_size=3) as hub:
            yield HfRepo("fleet/recrawl", endpoint=hub.url, token=TOKEN, xet=False)
