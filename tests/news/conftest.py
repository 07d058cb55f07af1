"""Fixtures for the CC-NEWS tests: the fake Common Crawl with its fake CC-NEWS, and one published month.

The fake CC-NEWS is generated from the shared corpus's real pages (never copied into the repo): tests
that need it skip with the reason when the corpus is absent. One month is published once per session
into a local hub, and the search, triple and DuckDB tests read it.
"""

from __future__ import annotations

import dataclasses
import os

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ccrawl.datasets.publish_news import NewsPublishStats
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.news import NewsSite, build_news

MONTH = "2026/07"
REPO = "test/news"


@pytest.fixture(scope="session")
def news_server(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Iterator[FakeCCServer]:
    root = tmp_path_factory.mktemp("fakecc-news")
    build_news(root, corpus=corpus_dir)
    with FakeCCServer(root, SiteSpec(records=3, files=1, older_records=1)) as server:
        yield server


@pytest.fixture(scope="session")
def news_site(news_server: FakeCCServer) -> NewsSite:
    from ccrawl.testing.fakecc.news import load_news

    return load_news(news_server.site.root)


@pytest.fixture
def fakecc(news_server: FakeCCServer) -> Iterator[FakeCCServer]:
    news_server.faults.clear()
    yield news_server
    news_server.faults.clear()


def client_options(server: FakeCCServer, tmp: Path) -> dict[str, Any]:
    return server.client_options(data_dir=str(tmp / "ccdata"), no_cache=True, retries=3)


@dataclass(slots=True)
class Published:
    hub: Path
    repo: str
    month: str
    records: list[dict[str, Any]]
    stats: NewsPublishStats
    notices: list[str] = dataclasses.field(default_factory=list)

    @property
    def snapshot(self) -> Path:
        from ccrawl.hub.localhub import LocalRepo

        return LocalRepo(self.hub, self.repo).snapshot_dir()


@pytest.fixture(scope="session")
def published(news_server: FakeCCServer, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """The whole fake month 2026/07 published into a local hub (once per session)."""
    from ccrawl.ops.news import news_publish

    tmp = tmp_path_factory.mktemp("published")
    stats = NewsPublishStats()
    notices: list[str] = []
    records = list(news_publish(
        months=MONTH, repo=REPO, hub=str(tmp / "hub"), staging=str(tmp / "staging"), commit_every=10, workers=2,
        ctx=OpContext.of(client_options(news_server, tmp), notice=notices.append), stats=stats,
    ))
    return Published(tmp / "hub", REPO, MONTH, records, stats, notices)


def run_cli(args: list[str], env_extra: dict[str, str], *, stdin: bytes | None = None,
            timeout: float = 120) -> Any:
    """``python -m ccrawl ARGS`` in a subprocess with this checkout on the path."""
    import subprocess
    import sys

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], input=stdin, capture_output=True, env=env,
                          timeout=timeout)


def cli_env(server: FakeCCServer, tmp: Path) -> dict[str, str]:
    return {
        "CCRAWL_DATA_ENDPOINT": server.url, "CCRAWL_COLLINFO_ENDPOINT": f"{server.url}/collinfo.json",
        "CCRAWL_CDX_ENDPOINT": server.url, "CCRAWL_GLOBAL_RATE": "0", "CCRAWL_DATA_DIR": str(tmp / "ccdata"),
        "CCRAWL_BACKOFF": "0.01", "CCRAWL_BACKOFF_MAX": "0.05", "CCRAWL_CONFIG_DIR": str(tmp / "config"),
        "HF_HUB_DISABLE_XET": "1",
    }
