"""DuckDB connections that never reach for the network, and ``--db``: tee a record stream into a table.

DuckDB wheels do not ship httpfs and, left at their defaults, try to download extensions at run
time; every connection made here turns extension autoinstall and autoload off first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ccrawl.errors import CcrawlError, UsageError

_BATCH = 5_000


def connect(path: str = ":memory:", *, read_only: bool = False) -> Any:
    """A DuckDB connection with extension autoinstall and autoload disabled."""
    import duckdb

    config: dict[str, Any] = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    return duckdb.connect(path, read_only=read_only, config=config)


@contextmanager
def duck_errors(say: str, error: type[CcrawlError] = UsageError) -> Iterator[None]:
    """DuckDB's own exceptions inside the block become one line, ``<say>: <DuckDB's first line>``."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.startswith(("duckdb", "_duckdb")):
            raise error(f"{say}: {str(exc).splitlines()[0]}") from exc
        raise


def table_name_for(command_path: str) -> str:
    """``ccrawl url surt`` -> ``url_surt``: the table a command's records are teed into."""
    words = command_path.split()[1:] or ["records"]
    name = re.sub(r"[^A-Za-z0-9_]", "_", "_".join(words)).strip("_").lower()
    return name or "records"


def _check_target(target: str) -> None:
    if "://" in target:
        scheme = target.split("://", 1)[0]
        raise UsageError(f"--db: {scheme}:// stores are not supported; give a DuckDB file path such as out.db")


def tee(
    records: Iterable[Mapping[str, Any]], target: str, table: str, *, columns: Sequence[str] = ()
) -> Iterator[Mapping[str, Any]]:
    """Yield ``records`` unchanged while appending them, in batches, to ``table`` in the DuckDB file ``target``.

    The table is created from the first batch's shape; later batches insert by column name, so a
    missing value is NULL. A value that is a container is stored as JSON text.
    """
    _check_target(target)
    import json

    import pyarrow as pa

    con = connect(target)
    batch: list[Mapping[str, Any]] = []
    names: list[str] = []
    created = False

    def flush() -> None:
        nonlocal created, names
        if not batch:
            return
        if not names:
            names = list(columns) or list(batch[0].keys())
        rows = [
            {c: (json.dumps(v) if isinstance(v, dict | list) else v) for c, v in ((c, r.get(c)) for c in names)}
            for r in batch
        ]
        arrow = pa.Table.from_pylist(rows)
        con.register("ccrawl_batch", arrow)
        if not created:
            con.execute(f'CREATE TABLE IF NOT EXISTS "{table}" AS SELECT * FROM ccrawl_batch LIMIT 0')
            created = True
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM ccrawl_batch')
        con.unregister("ccrawl_batch")
        batch.clear()

    try:
        for record in records:
            batch.append(record)
            if len(batch) >= _BATCH:
                flush()
            yield record
    finally:
        flush()
        con.close()
