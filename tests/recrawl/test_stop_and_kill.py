"""Stopping and crashing: SIGTERM drains and seals, a second signal exits at once, SIGKILL at random
moments (mid-seal included) loses nothing and, after resuming, duplicates nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def start_run(wl: Path, out: Path, state: Path, *extra: str, delay: str = "150ms",
              writers: str = "2") -> subprocess.Popen[bytes]:
    """A run in a subprocess; ``writers=""`` leaves --writers out (a fetch-only run then writes in its
    fetch processes)."""
    cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
           "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "24",
           "--delay", delay, "--timeout", "5s", "--shard-size", "20KB", "--progress", "none",
           "--journal", str(out.parent / "journal.jsonl"), *(["--writers", writers] if writers else []), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)


def finish(proc: subprocess.Popen[bytes], timeout: float = 60) -> tuple[int, str]:
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err.decode()


def checkpoints_in(journal: Path) -> int:
    return journal.read_text().count('"event": "checkpoint"') if journal.exists() else 0


def wait_for_checkpoint(journal: Path, timeout: float = 20, after: int = 0) -> None:
    """Until the journal holds more than ``after`` checkpoint events."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if checkpoints_in(journal) > after:
            return
        time.sleep(0.02)
    raise AssertionError("the run wrote no checkpoint in time")


def warc_urls(out: Path) -> list[str]:
    urls = []
    for f in out.glob("*.warc.gz"):
        with open(f, "rb") as fh:
            urls += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                     if r.rec_type == "response"]
    return urls


def test_sigterm_drains_seals_checkpoints_and_exits_zero(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    # 500 ms a host: with host-ready scheduling every host runs at once, so the list takes
    # 11 x the delay; at 150 ms it could end before the signal lands on a loaded machine
    proc = start_run(wl, out, state, delay="500ms")
    wait_for_checkpoint(tmp_path / "journal.jsonl")
    proc.send_signal(signal.SIGTERM)
    code, err = finish(proc)
    assert code == 0, err
    assert "stopped by signal" in err
    cp = json.loads(state.read_text())
    assert not cp["done"] and not list(out.glob("*.tmp"))
    got = read_captures(out).column("url").to_pylist()
    assert 0 < len(got) < len(urls) and cp["fetched"] == len(got)
    code, err = finish(start_run(wl, out, state, delay="0s"))
    assert code == 0, err
    assert json.loads(state.read_text())["done"]
    assert Counter(read_captures(out).column("url").to_pylist()) == Counter(urls)


def test_second_signal_exits_at_once_and_the_checkpoint_still_resumes(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    proc = start_run(wl, out, state, delay="400ms")
    wait_for_checkpoint(tmp_path / "journal.jsonl")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code, _ = finish(proc)
    assert code == 128 + signal.SIGINT and time.monotonic() - t0 < 3
    json.loads(state.read_text())  # whole and parseable
    code, err = finish(start_run(wl, out, state, delay="0s"))
    assert code == 0, err
    assert Counter(read_captures(out).column("url").to_pylist()) == Counter(urls)


@pytest.mark.parametrize("fmt", ["parquet", "warc", "parquet-fetch-only"])
def test_sigkill_at_random_moments_then_resume_loses_nothing_and_duplicates_nothing(
    web: SynthWeb, tmp_path: Path, fmt: str, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=3)
    out, state = tmp_path / "out", tmp_path / "s.json"
    rng = random.Random(int(os.environ.get("CCRAWL_KILL_SEED", "20261129")))
    kills = 2 if fmt == "warc" else 4
    # fetch-only Parquet with no --writers: the two fetch processes write (and seal) their own files
    flags = ["--no-extract", "--fetchers", "2"] if fmt == "parquet-fetch-only" else ["--format", fmt]
    writers = "" if fmt == "parquet-fetch-only" else "2"
    progress = []
    for _ in range(kills):
        before = checkpoints_in(tmp_path / "journal.jsonl")
        proc = start_run(wl, out, state, *flags, "--batch", "10", delay="300ms", writers=writers)
        wait_for_checkpoint(tmp_path / "journal.jsonl", after=before)
        time.sleep(rng.uniform(0.0, 1.5))  # seals land every few rows: some kills hit one mid-way
        proc.kill()
        proc.wait()
        cp = json.loads(state.read_text())
        if cp["done"]:
            break  # this run walked the list out before the kill landed
        progress.append(cp["fetched"])
    assert len(progress) >= 2 and progress[-1] > 0, "at least two kills landed mid-run, after durable progress"
    code, err = finish(start_run(wl, out, state, *flags, "--batch", "10", delay="0s", writers=writers))
    assert code == 0, err
    assert json.loads(state.read_text())["done"]
    if fmt == "parquet-fetch-only":
        names = [p.name for p in out.glob("*.parquet")]
        assert names and all("-f0-" in n or "-f1-" in n for n in names), names
    got = warc_urls(out) if fmt == "warc" else read_captures(out).column("url").to_pylist()
    counts = Counter(got)
    missing = set(urls) - set(counts)
    duplicates = sum(n - 1 for n in counts.values())
    print(f"kill test {fmt}: {kills} kills, durable after each {progress}, "
          f"{len(got)} rows for {len(urls)} URLs, {duplicates} duplicates")
    assert not missing, f"{len(missing)} rows lost"
    assert duplicates == 0
