"""An output directory has one owner: a second run on the same ``--out`` is refused while the first
lives, and sweeps nothing of it (issue #13, item 1). Two real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ccrawl.errors import TemporaryFailure
from ccrawl.recrawl.outlock import OutputLock
from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def _cmd(wl: Path, out: Path, state: Path, journal: Path, delay: str) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
            "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "8",
            "--delay", delay, "--timeout", "5s", "--shard-size", "20KB", "--format", "warc", "--batch", "4",
            "--progress", "none", "--journal", str(journal)]


def test_second_run_on_the_same_out_is_refused_and_the_first_loses_nothing(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    from warcio.archiveiterator import ArchiveIterator

    urls = web.page_urls()[:40]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    journal = tmp_path / "j1.jsonl"
    first = subprocess.Popen(_cmd(wl, out, tmp_path / "s1.json", journal, "2s"), env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not list(out.glob("*.warc.gz.tmp")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(out.glob("*.warc.gz.tmp")), "the first run has an open WARC file"
    second = subprocess.run(_cmd(wl, out, tmp_path / "s2.json", tmp_path / "j2.jsonl", "0s"), env=env,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 75, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "in use by another run" in lines[0] and f"pid {first.pid}" in lines[0], lines
    assert not (tmp_path / "s2.json").exists()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    assert json.loads((tmp_path / "s1.json").read_text())["done"]
    got = []
    for f in out.glob("*.warc.gz"):
        with open(f, "rb") as fh:
            got += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                    if r.rec_type == "response"]
    assert Counter(got) == Counter(urls), "the refused run swept nothing of the first"
    # the lock ends with its run: a third run on the same --out goes ahead
    third = subprocess.run(_cmd(wl, out, tmp_path / "s1.json", tmp_path / "j3.jsonl", "0s"), env=env,
                           capture_output=True, text=True, timeout=60)
    assert third.returncode == 0, third.stderr


def test_lock_is_exclusive_between_processes_and_released_on_exit(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys,time; from ccrawl.recrawl.outlock import OutputLock\n"
         f"l = OutputLock({str(tmp_path)!r}); l.acquire(); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)}, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(TemporaryFailure, match=rf"--out {tmp_path} is in use by another run \(pid {holder.pid}"):
        OutputLock(str(tmp_path)).acquire()
    holder.communicate("", timeout=10)  # the holder exits: the kernel drops its lock
    with OutputLock(str(tmp_path)):
        pass


def test_a_run_that_cannot_read_its_work_list_creates_no_out(tmp_path: Path) -> None:
    from ccrawl.errors import CcrawlError
    from ccrawl.recrawl import run_recrawl

    with pytest.raises(CcrawlError):
        run_recrawl(str(tmp_path / "missing"), column="url", out=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
