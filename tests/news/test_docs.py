"""Every SQL block of docs/news.md runs in DuckDB against a published fake month."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import Published

DOC = Path(__file__).resolve().parents[2] / "docs" / "news.md"
URL = "https://huggingface.co/datasets/open-index/ccrawl-news/resolve/main/"


def _blocks() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S)


def test_the_docs_sql_runs_on_a_published_month(published: Published) -> None:
    import duckdb

    blocks = _blocks()
    assert len(blocks) >= 3
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    snap = str(published.snapshot) + "/"
    top = con.execute(
        f"SELECT url_host_registered_domain FROM '{snap}data/2026/07/*.parquet' WHERE fetch_status = 200 "
        "GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
    ).fetchone()
    assert top is not None
    results = []
    for sql in blocks:
        assert URL in sql
        local = sql.replace(URL, snap).replace("'bbc.co.uk'", f"'{top[0]}'")
        results.append(con.execute(local).fetchall())
    by_domain, disagree, biggest = results[0], results[1], results[2]
    assert by_domain and all(len(r) == 3 for r in by_domain)
    assert biggest[0][0] == top[0]
    assert isinstance(disagree, list)  # may be empty; it must run
