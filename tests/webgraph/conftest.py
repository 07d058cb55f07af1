"""One fake Common Crawl (with its web graph) per session, and the CLI pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec


@pytest.fixture(scope="session")
def graph_cc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    # the columnar index holds captures of the two top graph hosts (host enrich --cdx reads them)
    spec = SiteSpec(records=12, files=1, hosts=("www.facebook.com", "www.google.com"))
    with FakeCCServer(tmp_path_factory.mktemp("fakecc-graph"), spec) as server:
        yield server


@pytest.fixture
def cc_env(graph_cc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCCServer:
    monkeypatch.setenv("CCRAWL_COLLINFO_ENDPOINT", f"{graph_cc.url}/collinfo.json")
    monkeypatch.setenv("CCRAWL_DATA_ENDPOINT", graph_cc.url)
    monkeypatch.setenv("CCRAWL_CDX_ENDPOINT", graph_cc.url)
    monkeypatch.setenv("CCRAWL_GLOBAL_RATE", "0")
    monkeypatch.setenv("CCRAWL_BACKOFF", "10ms")
    monkeypatch.setenv("CCRAWL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CCRAWL_CONFIG_DIR", str(tmp_path / "no-config"))
    graph_cc.faults.clear()
    return graph_cc
