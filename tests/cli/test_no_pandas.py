"""No command imports pandas (pyarrow would, on its first ``pa.array``: 0.5-1.4 s of a command here).

Each command runs in its own interpreter, which says at exit whether ``pandas`` and ``pyarrow`` are in
``sys.modules``: pandas must not be, pyarrow must (so the command did reach the Arrow code that used to
pull pandas in).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

URLS = b"https://www.example.com/a?b=1\nhttp://Example.org/\nnot a url\n"


_WRAPPER = """
import atexit, os, sys
def report():
    names = [n for n in ("pandas", "pyarrow") if n in sys.modules]
    os.write(2, ("\\nimported: " + ",".join(names) + "\\n").encode())
atexit.register(report)
sys.argv = ["ccrawl", *sys.argv[1:]]
from ccrawl._entry import run
run()
"""


def _imported(args: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> set[str]:
    """The modules of interest in ``sys.modules`` when the command's process ends (atexit, which every
    way out of the CLI runs)."""
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], input=stdin, capture_output=True,
                          env=env or os.environ.copy(), timeout=120)
    assert proc.returncode in (0, 3), proc.stderr.decode()[-2000:]
    last = proc.stderr.decode().rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("imported: "), proc.stderr.decode()[-2000:]
    return set(filter(None, last.removeprefix("imported: ").split(",")))


@pytest.mark.parametrize("args", [
    ["-o", "parquet", "url", "surt"],  # Table.from_pylist per record
    ["-o", "tsv", "url", "domain"],
    ["-o", "jsonl", "url", "shard", "--shards", "4"],
    ["-o", "csv", "url", "key", "--from", "-"],
])
def test_url_commands_do_not_import_pandas(args: list[str], tmp_path: Path) -> None:
    names = _imported(args, URLS)
    assert "pyarrow" in names
    assert "pandas" not in names


def test_columnar_count_with_the_native_engine_does_not_import_pandas(tmp_path: Path) -> None:
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
    from tests.commoncrawl.columnar.conftest import CRAWLS

    spec = SiteSpec(records=60, files=2, older_records=20, older_files=1, crawls=CRAWLS)
    with FakeCCServer(tmp_path / "cc", spec) as server:
        env = dict(os.environ, CCRAWL_COLLINFO_ENDPOINT=f"{server.url}/collinfo.json",
                   CCRAWL_DATA_ENDPOINT=server.url, CCRAWL_CDX_ENDPOINT=server.url,
                   CCRAWL_DATA_DIR=str(tmp_path / "data"), CCRAWL_GLOBAL_RATE="0",
                   CCRAWL_CONFIG_DIR=str(tmp_path / "config"))
        for args in (["columnar", "count", "--tld", "com", "--engine", "native", "-o", "jsonl"],
                     ["columnar", "urls", "--tld", "com", "--engine", "native", "-o", "jsonl"]):
            names = _imported(args, env=env)
            assert "pyarrow" in names, args
            assert "pandas" not in names, args
