"""A fake Common Crawl with enough hosts for the cc-index-table to be worth pruning, one per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.columnar import many_hosts
from ccrawl.testing.fakecc.site import HOSTS

#: Three crawls (two of them with overlapping URLs: every 7th capture is a host's home page).
CRAWLS = ((2025, 26), (2025, 13), (2024, 51))


@pytest.fixture(scope="session")
def colcc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    spec = SiteSpec(records=120, files=3, older_records=60, older_files=2, crawls=CRAWLS,
                    hosts=HOSTS + many_hosts(25))
    with FakeCCServer(tmp_path_factory.mktemp("colcc"), spec) as server:
        yield server


@pytest.fixture(scope="session")
def colroot(colcc: FakeCCServer) -> Path:
    return Path(colcc.site.root)
