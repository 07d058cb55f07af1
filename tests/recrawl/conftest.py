"""Fixtures of the recrawl tests: a synthetic web on loopback, work lists written as Parquet parts,
and capture shards read back with DuckDB (helpers are fixtures: the suite imports in importlib mode)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.testing.synthweb import SynthWeb, SynthWebThread


@pytest.fixture(scope="session")
def web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=12, pages=12, page_bytes=6000) as w:
        yield w


def write_worklist(directory: Path, values: list[str], *, column: str = "url", parts: int = 2,
                   row_group_size: int = 7) -> Path:
    """``values`` split over ``parts`` Parquet parts named with unequal number widths."""
    directory.mkdir(parents=True, exist_ok=True)
    step = -(-len(values) // parts)
    for i in range(parts):
        chunk = values[i * step : (i + 1) * step]
        name = f"part-{i:03d}.parquet" if i % 2 == 0 else f"part-{i:05d}.parquet"
        pq.write_table(pa.table({column: chunk, "other": [1] * len(chunk)}), directory / name,
                       row_group_size=row_group_size)
    return directory


def read_captures(out: Path) -> pa.Table:
    """Every sealed capture shard in ``out`` through DuckDB, with extension loading off."""
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    files = sorted(str(p) for p in out.glob("*.parquet"))
    if not files:
        return pa.table({"url": pa.array([], pa.string())})
    return con.read_parquet(files).to_arrow_table()


@pytest.fixture(name="write_worklist")
def write_worklist_fixture() -> Callable[..., Path]:
    return write_worklist


@pytest.fixture(name="read_captures")
def read_captures_fixture() -> Callable[[Path], pa.Table]:
    return read_captures
