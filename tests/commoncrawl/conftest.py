"""The fake Common Crawl for the commoncrawl tests: one server per session, faults cleared per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec


@pytest.fixture(scope="session")
def fakecc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    with FakeCCServer(tmp_path_factory.mktemp("fakecc"), SiteSpec(records=12, files=2)) as server:
        yield server


@pytest.fixture
def fakecc(fakecc_server: FakeCCServer) -> Iterator[FakeCCServer]:
    fakecc_server.faults.clear()
    yield fakecc_server
    fakecc_server.faults.clear()
