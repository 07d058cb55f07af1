"""A pipeline child that never starts, freezes, or is lost is named and the run fails resumably
(issue #37: a run sat at "fetched 0" for ten minutes with its fetch process gone, then exited 0).

Every test runs the CLI as a subprocess against the synthetic web on loopback, stops or kills
real pipeline processes, and leaves nothing running (SIGCONT and SIGKILL in cleanup, then a
check that every process the run started is gone)."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ccrawl.testing.procs import descendants, still_running_after
from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]
EX_TEMPFAIL = 75


def _cmd(wl: Path, out: Path, state: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
            "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "24",
            "--fetchers", "1", "--writers", "1", "--timeout", "5s", "--progress", "json",
            "--journal", str(out.parent / "journal.jsonl"), *extra]


@contextmanager
def running(cmd: list[str], **env: str) -> Iterator[subprocess.Popen[str]]:
    """The run as a subprocess; on the way out every process it started is continued, killed and
    required gone (a SIGSTOPped child must not outlive the test)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), **env})
    seen: set[int] = set()
    try:
        yield proc
    finally:
        seen.update(descendants(proc.pid))
        for pid in seen:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
        assert still_running_after(sorted(seen), 10) == [], "a process of the run outlived it"


def pipeline_child(root: int, role: str, timeout: float = 60) -> int:
    """The pid of the pipeline process named ``cc-<role>`` below ``root`` (``ps`` shows the name)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(root):
            try:
                with open(f"/proc/{pid}/comm") as fh:
                    if fh.read().strip() == f"cc-{role}":
                        return pid
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no cc-{role} process appeared")


def ticks(journal: Path) -> list[dict[str, Any]]:
    if not journal.exists():
        return []
    return [e for e in map(json.loads, journal.read_text().splitlines()) if e["event"] == "tick"]


def wait_for_fetched(journal: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(t["fetched"] > 0 for t in ticks(journal)):
            return
        time.sleep(0.05)
    raise AssertionError("no tick showed a fetched page in time")


def test_a_fetch_process_stopped_before_it_reports_ready_is_named_and_the_run_exits_75(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls(), parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    cmd = _cmd(wl, out, state, "--start-timeout", "8s", "--stall-timeout", "8s", "--delay", "0s")
    with running(cmd, CCRAWL_TEST_STOP_BEFORE_READY="fetch-0") as proc:
        t0 = time.monotonic()
        stopped = pipeline_child(proc.pid, "fetch-0")
        _, err = proc.communicate(timeout=90)
        took = time.monotonic() - t0
    assert proc.returncode == EX_TEMPFAIL, err
    assert f"fetch process 0 (pid {stopped}) did not report ready within 8 s of its start" in err, err
    assert took < 8 + 30, took  # the deadline, plus a loaded machine's start-up of the others
    assert "Traceback" not in err


def test_a_fetch_process_frozen_mid_run_is_named_the_run_exits_75_and_the_rerun_loses_nothing(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    # 12 hosts at 1 s a host: the list takes about 12 s, so the freeze lands with work left;
    # small seals (--shard-size, --batch) leave durable rows behind before it
    cmd = _cmd(wl, out, state, "--stall-timeout", "3s", "--delay", "1s", "--shard-size", "20KB")
    with running(cmd) as proc:
        fetch = pipeline_child(proc.pid, "fetch-0")
        wait_for_fetched(tmp_path / "journal.jsonl")
        os.kill(fetch, signal.SIGSTOP)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    assert proc.returncode == EX_TEMPFAIL, err
    m = re.search(rf"fetch process 0 \(pid {fetch}\) has sent nothing for (\d+) s while holding (\d+) URLs", err)
    assert m and int(m.group(1)) >= 3 and int(m.group(2)) > 0, err
    assert took < 3 + 15, took
    assert "checkpoint is saved" in err and "Traceback" not in err
    events = [json.loads(line)["event"] for line in (tmp_path / "journal.jsonl").read_text().splitlines()]
    assert "failed" in events
    cp = json.loads(state.read_text())
    assert not cp["done"]
    # the rerun resumes from the checkpoint: every URL at least once (duplicates at most, never gaps)
    rerun = subprocess.run(_cmd(wl, out, state, "--delay", "0s", "--shard-size", "20KB"), capture_output=True,
                           text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(state.read_text())["done"]
    assert set(read_captures(out).column("url").to_pylist()) == set(urls)


def test_fetched_in_json_progress_ticks_grows_mid_run_before_any_shard_seals(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    # every slot busy all the time (each answer takes 0.3 s, no host delay): the fetch process's
    # main path runs, where credit every 0.1 s used to hold back the once-a-second report
    urls = [f"http://site{i % 12}.test:{web.port}/fault/slow-ttfb?s=0.3&n={i}" for i in range(640)]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    with running(_cmd(wl, out, state, "--delay", "0s", "--no-extract")) as proc:
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    progress = [json.loads(line) for line in err.splitlines() if line.startswith('{"event": "tick"')]
    before_seal = [t["fetched"] for t in progress if t["files"] == 0]
    growing = [b for a, b in itertools.pairwise(before_seal) if 0 < a < b]
    assert len(growing) >= 2, before_seal  # it moved mid-run, more than once, not only at the end


def test_a_run_whose_children_all_die_exits_non_zero(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls(), parts=1)
    out, state = tmp_path / "out", tmp_path / "s.json"
    with running(_cmd(wl, out, state, "--delay", "1s")) as proc:
        children = [pipeline_child(proc.pid, role) for role in ("fetch-0", "extract-0", "writer-0")]
        wait_for_fetched(tmp_path / "journal.jsonl")
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode not in (0, 130), err
    assert re.search(r"ccrawl-(fetch|extract|writer)-0 \(pid \d+\) died with exit code -9", err), err
    assert "Traceback" not in err


READER = textwrap.dedent("""
    import asyncio, multiprocessing as mp, sys, threading
    from ccrawl.fetch import run
    from ccrawl.recrawl.fetchproc import Inbox

    rx, tx = mp.Pipe(duplex=False)
    N, SIZE = 40, 200_000  # each message larger than a pipe holds: it always arrives in pieces

    def send() -> None:
        for i in range(N):
            tx.send(bytes([i]) * SIZE)

    async def main() -> int:
        box = Inbox()
        box.attach(rx)
        threading.Thread(target=send, daemon=True).start()
        got = 0
        for i in range(N):
            msg = await asyncio.wait_for(box.queue.get(), 30)
            assert msg == bytes([i]) * SIZE
            got += 1
        box.detach()
        return got

    print(run(main()))
""")


def test_the_fetch_inbox_reads_messages_that_arrive_in_pieces_on_the_event_loop() -> None:
    """The root cause of issue #37: under uvloop the inbox's pipe became non-blocking, and a message
    split across writes ended the fetch process with exit code 0 (BlockingIOError mid-message)."""
    done = subprocess.run([sys.executable, "-c", READER], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and done.stdout.strip() == "40", (done.returncode, done.stdout, done.stderr)
