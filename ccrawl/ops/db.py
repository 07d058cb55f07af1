"""``db.*`` operations: load columnar-index rows into the local DuckDB file, and query it.

The file is ``db_path`` (``CCRAWL_DB_PATH``), else ``<data_dir>/ccrawl.duckdb``. ``db.load`` appends
the matching rows, every published column plus ``crawl`` and ``subset``, to ``table`` (created on
first load); a row is written once per load, so loading the same filters twice doubles them (say
``--table`` to keep loads apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from ccrawl.errors import Absent, UsageError
from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, ReadPath, Sql, Value, WritePath
from ccrawl.ops.columnar import filters_from, open_filtered
from ccrawl.ops.context import OpContext

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def db_file(db_path: str | None, data_dir: str | None) -> Path:
    if db_path:
        return Path(db_path).expanduser()
    return Path(data_dir or "~/data/ccrawl").expanduser() / "ccrawl.duckdb"


@operation("db.load", summary="Load matching index records into local DuckDB", writes=True,
           columns=("db", "table", "rows"))
def db_load(
    db: WritePath[str],
    table: Value[str] = "ccindex",
    domain: Value[list[str] | None] = None,
    host: Value[list[str] | None] = None,
    tld: Value[list[str] | None] = None,
    mime: Value[list[str] | None] = None,
    status: Value[list[str] | None] = None,
    lang: Value[list[str] | None] = None,
    path_prefix: Value[str | None] = None,
    subset: Value[list[str] | None] = None,
    not_tld: Value[list[str] | None] = None,
    not_mime: Value[list[str] | None] = None,
    not_lang: Value[list[str] | None] = None,
    not_status: Value[list[str] | None] = None,
    hosts_file: ReadPath[str | None] = None,
    domains_file: ReadPath[str | None] = None,
    crawl: Value[str] = "latest",
    limit: Annotated[int | None, Cap.VALUE, Bounds(0, 10**12)] = None,
    jobs: Limit[int] = 4,
    local: ReadPath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
    explain: Injected[Any] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.columnar import native, query
    from ccrawl.store.duck import connect

    if not _TABLE.match(table):
        raise UsageError(f"--table {table!r}: use letters, digits and _ (not starting with a digit)")
    f = filters_from(locals())
    path = Path(db).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    loaded = 0
    with open_filtered(f, crawl=crawl, local=local, ctx=ctx, jobs=jobs) as (index, f):
        con = connect(str(path))
        try:
            stats = explain.stats if explain is not None else None
            for answer in native.scan(index.source, index.parts, f, "rows", jobs=jobs, limit=limit or None,
                                      stats=stats):
                for t in answer.tables:
                    if limit and loaded >= limit:
                        break
                    if limit:
                        t = t.slice(0, limit - loaded)
                    con.register("ccrawl_rows", t)
                    con.execute(f'CREATE TABLE IF NOT EXISTS "{table}" AS SELECT * FROM ccrawl_rows LIMIT 0')
                    con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM ccrawl_rows')
                    con.unregister("ccrawl_rows")
                    loaded += t.num_rows
        finally:
            con.close()
        if explain is not None:
            explain.engine = "native"
            explain.bytes_read = index.source.stats.bytes_read
            explain.index_bytes = sum(index.source.size(p.path) for p in index.parts if f.keeps_crawl(p.crawl))
    _ = query
    yield {"db": str(path), "table": table, "rows": loaded}


@operation("db.sql", summary="Run SQL against the local DuckDB database")
def db_sql(sql: Sql[str], db: ReadPath[str], trusted: Injected[bool] = False) -> Iterator[Record]:
    """The rows of ``sql`` over the database file ``db``, streamed.

    Unless ``trusted`` (set by the CLI for the user at their shell, never by a client of serve or
    mcp), the file is attached read-only to a sandboxed connection
    (:func:`ccrawl.store.duck.connect_sandboxed`): no other file, no extension, no config change,
    a memory and thread budget.
    """
    from ccrawl.commoncrawl.columnar.query import clean_record
    from ccrawl.store.duck import connect, connect_sandboxed, duck_errors, stream

    path = Path(db).expanduser()
    if not path.exists():
        raise Absent(f"{path}: no database yet; run `ccrawl db load` first")
    with duck_errors(str(path)):
        con = connect(str(path)) if trusted else connect_sandboxed(str(path))
    try:
        for row in stream(con, sql):
            yield clean_record(row)
    finally:
        con.close()
