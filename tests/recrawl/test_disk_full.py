"""A full disk mid-run (simulated by a file-size limit, EFBIG, which needs no root) is one line,
exit 75, no leaked shared memory, and the resume loses nothing (issue #13, item 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def _cmd(wl: Path, out: Path, state: Path, fmt: str) -> list[str]:
    # parquet-fetch-only: --no-extract without --writers, so the fetch process writes (and fills the disk)
    flags = ["--format", "parquet", "--no-extract"] if fmt == "parquet-fetch-only" else ["--format", fmt]
    return [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
            "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "8",
            "--delay", "0s", "--timeout", "5s", "--shard-size", "4MB", *flags, "--batch", "4",
            "--progress", "none"]


def _urls(out: Path, fmt: str, read_captures: Any) -> list[str]:
    if fmt.startswith("parquet"):
        return list(read_captures(out).column("url").to_pylist())
    got = []
    for f in out.glob("*.warc.gz"):
        with open(f, "rb") as fh:
            got += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                    if r.rec_type == "response"]
    return got


@pytest.mark.parametrize("fmt", ["warc", "parquet", "parquet-fetch-only"])
def test_full_disk_is_one_line_exit_75_and_the_resume_is_lossless(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any, fmt: str
) -> None:
    urls = web.page_urls()[:60]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    full = subprocess.run(_cmd(wl, out, state, fmt), env={**env, "CCRAWL_TEST_FSIZE_LIMIT": "40000"},
                          capture_output=True, text=True, timeout=120)
    lines = full.stderr.strip().splitlines()
    assert full.returncode == 75, full.stderr
    assert len(lines) == 1, lines
    assert "--out" in lines[0] and "File too large" in lines[0] and "run again" in lines[0], lines
    assert "leaked" not in full.stderr and "Traceback" not in full.stderr
    resumed = subprocess.run(_cmd(wl, out, state, fmt), env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(state.read_text())["done"]
    got = Counter(_urls(out, fmt, read_captures))
    assert set(got) == set(urls), "the resume lost nothing"
    assert not list(out.glob("*.tmp"))
