"""The DuckDB engine: the same SQL the cluster gets, over the same ranged reads, never an extension.

The parts are read through :func:`~ccrawl.commoncrawl.columnar.source.fsspec_filesystem` registered on
a connection from :func:`ccrawl.store.duck.connect` (extension autoinstall and autoload off, so DuckDB
never reaches for httpfs), behind a view ``ccindex`` with the partition columns from the paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ccrawl.commoncrawl.columnar.native import Part
from ccrawl.commoncrawl.columnar.source import RangeSource, fsspec_filesystem
from ccrawl.commoncrawl.columnar.sql import quote

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

PROTOCOL = "ccrange"


def part_urls(parts: Sequence[Part]) -> list[str]:
    """The paths the view ``ccindex`` reads ``parts`` at (what a sandbox must still allow)."""
    return [f"{PROTOCOL}://{p.path}" for p in parts]


def connect_index(source: RangeSource, parts: Sequence[Part], *, con: DuckDBPyConnection | None = None,
                  threads: int | None = None) -> DuckDBPyConnection:
    """A DuckDB connection with the view ``ccindex`` over ``parts`` read through ``source``."""
    from ccrawl.store.duck import connect

    con = con if con is not None else connect()
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.register_filesystem(fsspec_filesystem(source, PROTOCOL))
    if parts:
        files = ", ".join(quote(url) for url in part_urls(parts))
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW ccindex AS SELECT * FROM read_parquet([{files}], "
            "hive_partitioning = true, hive_types_autocast = false)"
        )
    else:
        import pyarrow as pa

        from ccrawl.commoncrawl.columnar.schema import with_partitions

        empty = pa.Table.from_batches([], schema=with_partitions())
        con.register("ccindex_empty", empty)
        con.execute("CREATE OR REPLACE TEMP VIEW ccindex AS SELECT * FROM ccindex_empty")
    return con


def run_sql(con: DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of ``sql``."""
    cur = con.execute(sql)
    names = [d[0] for d in cur.description] if cur.description else []
    return names, cur.fetchall()
