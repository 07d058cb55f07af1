"""A fake Common Crawl serving a cc-index-table of several parts per crawl, and helpers to run the CLI."""

from __future__ import annotations

import os

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.columnar import many_hosts
from ccrawl.testing.fakecc.site import HOSTS

CRAWLS = ((2025, 26), (2025, 13))
CRAWL = "CC-MAIN-2025-26"


@pytest.fixture(scope="session")
def mirrorcc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    spec = SiteSpec(records=120, files=3, older_records=60, older_files=2, crawls=CRAWLS,
                    hosts=HOSTS + many_hosts(25))
    with FakeCCServer(tmp_path_factory.mktemp("mirrorcc"), spec) as server:
        yield server


def client_options(server: FakeCCServer, tmp: Path) -> dict[str, Any]:
    return server.client_options(data_dir=str(tmp / "ccdata"), no_cache=True, retries=3)  # type: ignore[no-any-return]


def cli_env(server: FakeCCServer, tmp: Path) -> dict[str, str]:
    return {
        "CCRAWL_DATA_ENDPOINT": server.url, "CCRAWL_COLLINFO_ENDPOINT": f"{server.url}/collinfo.json",
        "CCRAWL_CDX_ENDPOINT": server.url, "CCRAWL_GLOBAL_RATE": "0", "CCRAWL_DATA_DIR": str(tmp / "ccdata"),
        "CCRAWL_BACKOFF": "0.01", "CCRAWL_BACKOFF_MAX": "0.05", "CCRAWL_CONFIG_DIR": str(tmp / "config"),
        "HF_HUB_DISABLE_XET": "1",
    }


def run_cli(args: list[str], env_extra: dict[str, str], *, stdin: bytes | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env.pop("CCRAWL_HUB", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], input=stdin, capture_output=True, env=env,
                          timeout=timeout, stdin=None if stdin is not None else subprocess.DEVNULL)
