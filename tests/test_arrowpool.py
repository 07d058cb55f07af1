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


def _pool_after(env: dict[str, str]) -> str:
    code = ("from ccrawl.arrowpool import prefer_retaining_pool; import pyarrow as pa; "
            "print(prefer_retaining_pool(), pa.default_memory_pool().backend_name)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
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
