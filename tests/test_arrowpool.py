"""The Arrow pool a batch command allocates from: jemalloc when this pyarrow has it, the user's choice first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


def _fresh(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)


def _pool_after(env: dict[str, str]) -> str:
    code = ("from ccrawl.arrowpool import prefer_retaining_pool; import pyarrow as pa; "
            "print(prefer_retaining_pool(), pa.default_memory_pool().backend_name)")
    out = _fresh(code, env)
    chosen, in_use = out.stdout.split()
    assert chosen == in_use, out.stdout  # what it says it chose is what pyarrow allocates from
    return in_use


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow build has no jemalloc pool to prefer")
def test_a_batch_process_allocates_from_jemalloc_when_pyarrow_has_it() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    assert _pool_after(env) == "jemalloc"


def test_a_pool_named_in_the_environment_is_kept() -> None:
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system"}
    assert _pool_after(env) == "system"


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow build has no jemalloc pool to prefer")
def test_chosen_before_pyarrow_loads_the_parquet_readers_own_buffers_come_from_jemalloc(tmp_path: Path) -> None:
    # The Parquet reader and writer allocate through Arrow's C++ default pool, which pa.set_memory_pool
    # does not reach: chosen after the import, mimalloc holds part of their buffers.
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"url": [f"https://h{i}.example/" for i in range(50_000)]}), src)
    code = (
        "import sys; {before}from ccrawl.arrowpool import prefer_retaining_pool; print(prefer_retaining_pool()); "
        "import pyarrow as pa, pyarrow.parquet as pq; "
        f"f = pq.ParquetFile({str(src)!r}); b = f.read_row_group(0); "
        f"w = pq.ParquetWriter({str(tmp_path / 'out.parquet')!r}, b.schema, compression='zstd'); w.write_table(b); "
        "print(pa.mimalloc_memory_pool().bytes_allocated(), pa.jemalloc_memory_pool().bytes_allocated()); w.close()"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    early = _fresh(code.format(before=""), env)
    late = _fresh(code.format(before="import pyarrow; "), env)
    assert early.stderr == ""  # nothing from Arrow's logging
    chosen, counts = early.stdout.splitlines()
    mimalloc, jemalloc = map(int, counts.split())
    assert chosen == "jemalloc" and mimalloc == 0 and jemalloc > 0
    assert int(late.stdout.splitlines()[1].split()[0]) > 0  # what the early choice avoids


def test_numpys_blas_threads_are_held_to_one_unless_the_user_says() -> None:
    code = ("from ccrawl.arrowpool import prefer_retaining_pool; prefer_retaining_pool(); import os; "
            "print(os.environ['OPENBLAS_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _fresh(code, env).stdout.strip() == "1"
    assert _fresh(code, {**env, "OPENBLAS_NUM_THREADS": "3"}).stdout.strip() == "3"


def test_url_from_parquet_under_the_chosen_pool_writes_every_row_in_order(tmp_path: Path) -> None:
    urls = [f"https://h{i}.example.org/p?i={i}" for i in range(5000)]
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"url": urls}), src, row_group_size=700)
    out = tmp_path / "out.parquet"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    subprocess.run([sys.executable, "-m", "ccrawl", "url", "surt", "--from", str(src), "-o", "parquet",
                    "--out", str(out), "-q"], env=env, check=True)
    table = pq.read_table(out)
    assert table.column("url").to_pylist() == urls
    assert table.column("surt").to_pylist()[:2] == ["org,example,h0)/p?i=0", "org,example,h1)/p?i=1"]
