"""``url`` over stdin imports pyarrow without numpy and cloudpickle, and writes the same bytes as with them.

Each command runs in its own interpreter (the test process has numpy imported already, where the lean
import does nothing). The second run imports numpy before the CLI, the way a process that uses numpy
would, and must write exactly the same output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = (b"https://www.Example.com/a/../b?z=1&a=2#f\nhttp://example.org:8080/\n"
        b"https://b\xc3\xbccher.example/\xe2\x80\xa8x\n{\"url\": \"http://json.example/\"}\n") * 3
BAD = GOOD + b"\nnot a url\nmailto:x@y\n"  # bad rows: pyarrow.compute (which imports numpy) filters them

_WRAPPER = """
import atexit, os, sys
if os.environ.get("PRE_IMPORT_NUMPY"):
    import numpy
def report():
    names = [n for n in ("numpy", "cloudpickle", "pyarrow") if n in sys.modules]
    os.write(2, ("\\nimported: " + ",".join(names) + "\\n").encode())
atexit.register(report)
sys.argv = ["ccrawl", *sys.argv[1:]]
from ccrawl._entry import run
run()
"""


def _run(args: list[str], tmp_path: Path, urls: bytes, *, numpy_first: bool) -> tuple[bytes, set[str], int]:
    env = os.environ.copy()
    env.pop("PRE_IMPORT_NUMPY", None)
    if numpy_first:
        env["PRE_IMPORT_NUMPY"] = "1"
    out = tmp_path / ("numpy.out" if numpy_first else "lean.out")
    with out.open("wb") as fh:
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], input=urls, stdout=fh,
                              stderr=subprocess.PIPE, env=env, timeout=120)
    err = proc.stderr.decode()
    last = err.rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("imported: "), err[-2000:]
    return out.read_bytes(), set(filter(None, last.removeprefix("imported: ").split(","))), proc.returncode


@pytest.mark.parametrize("args", [
    ["-o", "tsv", "url", "surt"],
    ["-o", "jsonl", "url", "surt"],
    ["-o", "csv", "url", "canon"],
    ["-o", "json", "url", "key"],
    ["-o", "parquet", "url", "surt"],
    ["-o", "jsonl", "url", "domain"],
    ["-o", "tsv", "url", "shard", "--shards", "4"],
])
def test_url_over_stdin_needs_no_numpy_and_writes_the_same(args: list[str], tmp_path: Path) -> None:
    for urls in (GOOD, BAD):
        lean, names, code = _run(args, tmp_path, urls, numpy_first=False)
        assert "pyarrow" in names
        # pyarrow.parquet and pyarrow.compute (url domain and shard use it) import numpy themselves
        if urls is GOOD and "parquet" not in args and not {"domain", "shard"} & set(args):
            assert not names & {"numpy", "cloudpickle"}, names
        with_numpy, names_np, code_np = _run(args, tmp_path, urls, numpy_first=True)
        assert "numpy" in names_np
        assert lean and lean == with_numpy
        assert code == code_np


def test_numpy_still_imports_after_the_lean_import() -> None:
    code = ("import sys; from ccrawl.leanarrow import import_pyarrow_lean; import_pyarrow_lean(); "
            "assert 'pyarrow' in sys.modules and 'numpy' not in sys.modules; import pyarrow as pa; "
            "assert pa.array(['a', None]).to_pylist() == ['a', None]; import numpy; print(numpy.arange(3).sum())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "3"
