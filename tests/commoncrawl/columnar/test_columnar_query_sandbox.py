"""columnar.query's sandbox over HTTP: the parts still come through ``ccrange://``, nothing else does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ccrawl.errors import UsageError
from ccrawl.ops.columnar import columnar_query
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer

sys.path.insert(0, str(Path(__file__).parent))
import oracle


def test_sandboxed_query_over_http_reads_the_parts_and_nothing_else(colcc: FakeCCServer, colroot: Path,
                                                                      tmp_path: Path) -> None:
    rows = oracle.all_rows(colroot)
    options = colcc.client_options(no_cache=True)
    got = list(columnar_query(sql="SELECT count(*) AS n FROM ccindex", crawl="all", ctx=OpContext.of(options), jobs=2))
    assert got == [{"n": len(rows)}]
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-http")
    out = tmp_path / "out.csv"
    for sql in (f"SELECT * FROM read_text('{secret}')", f"COPY (SELECT * FROM ccindex) TO '{out}'",
                "SELECT * FROM read_text('ccrange://collinfo.json')"):
        with pytest.raises(UsageError) as info:
            list(columnar_query(sql=sql, crawl="all", ctx=OpContext.of(options), jobs=2))
        assert "\n" not in str(info.value) and "TOPSECRET" not in str(info.value)
    assert not out.exists()
