"""Progress that tells a healthy run from a stuck one (issue #37, item 2).

Every test runs ``ccrawl recrawl run`` as a subprocess against the synthetic web on loopback and
reads its ticks: JSON on stderr (``--progress json``) or the journal, the live line under a
pseudo-terminal, the Prometheus gauges over HTTP. The shards are large, so nothing seals before
the end: every figure that moves mid-run moves from the rows as they are written, not at a seal.
"""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _cmd(wl: Path, tmp: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
            "--out", str(tmp / "out"), "--state", str(tmp / "s.json"), "--resolve", "*.test=127.0.0.1",
            "--workers", "32", "--fetchers", "1", "--writers", "1", "--timeout", "5s", "--shard-size", "1GB",
            "--journal", str(tmp / "journal.jsonl"), *extra]


def _slow_urls(web: SynthWeb, n: int, resets: int) -> list[str]:
    """``n`` pages answering after 50 ms (32 workers: about 600 a second at most) and ``resets`` that fail."""
    urls = [f"http://site{i % 12}.test:{web.port}/fault/slow-ttfb?s=0.05&n={i}" for i in range(n)]
    return urls + [f"http://site{i % 12}.test:{web.port}/fault/reset?n={i}" for i in range(resets)]


def _journal(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_json_ticks_carry_done_total_rate_eta_bytes_and_errors_from_the_first_tick_and_move_before_any_seal(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    urls = _slow_urls(web, 3000, 30)
    wl = write_worklist(tmp_path / "wl", urls, parts=2, row_group_size=500)
    done = subprocess.run(_cmd(wl, tmp_path, "--progress", "json", "--delay", "0s"), capture_output=True,
                          text=True, cwd=REPO, env=ENV, timeout=240)
    assert done.returncode == 0, done.stderr
    ticks = [json.loads(line) for line in done.stderr.splitlines() if line.startswith('{"event": "tick"')]
    assert len(ticks) >= 3, done.stderr
    first, last = ticks[0], ticks[-1]
    # the list's size from the first tick, taken before anything was fetched
    assert first["total"] == len(urls) and first["total_of"] == "worklist", first
    assert first["done"] == 0 and first["percent"] == 0.0 and "eta_s" in first and "rate" in first, first
    for t in ticks:
        assert t["total"] == len(urls)
        assert t["percent"] == round(100 * t["done"] / t["total"], 1), t
        assert t["eta_s"] is None or 0 <= t["eta_s"] < 3600, t
        assert 0 <= t["rate"] < 100_000, t
        assert {"fetched", "written", "durable", "bytes", "errors", "held", "quiet_s", "waiting"} <= t.keys()
    for a, b in itertools.pairwise(ticks):
        assert a["done"] <= b["done"] and a["written"] <= b["written"] and a["bytes"] <= b["bytes"], (a, b)
    # before the one seal at the end: rows written, done and bytes rise, more than once
    before_seal = [t for t in ticks if t["files"] == 0 and not t["final"]]
    assert all(t["durable"] == 0 for t in before_seal), before_seal
    for key in ("done", "written", "bytes"):
        rising = [b for a, b in itertools.pairwise(t[key] for t in before_seal) if b > a]
        assert len(rising) >= 2, (key, [t[key] for t in before_seal])
    mid = [t for t in before_seal if 0 < t["done"] < t["total"]]
    assert mid and all(t["rate"] > 0 and t["eta_s"] is not None for t in mid[1:]), mid
    # the pace is the pages' 50 ms over 32 workers at most: the last minute's rate cannot be above it
    assert all(t["rate"] <= 32 / 0.05 * 1.5 for t in ticks), [t["rate"] for t in ticks]
    # the last tick: everything done, and its errors by class are the summary's
    end = next(e for e in _journal(tmp_path) if e["event"] == "end")
    assert last["final"] and last["done"] == last["total"] and last["percent"] == 100.0 and last["eta_s"] == 0
    assert last["errors"] == end["errors"] and sum(last["errors"].values()) == 30, (last["errors"], end["errors"])
    assert last["fetched"] == end["ok"] + end["failed"] and last["bytes"] == end["bytes"]
    assert last["waiting"] == []


def test_a_resumed_run_counts_what_the_earlier_run_did_as_done_and_max_pages_is_the_total(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    urls = _slow_urls(web, 400, 0)
    wl = write_worklist(tmp_path / "wl", urls, parts=2, row_group_size=50)
    first = subprocess.run(_cmd(wl, tmp_path, "--progress", "json", "--delay", "0s", "--max-pages", "150"),
                           capture_output=True, text=True, cwd=REPO, env=ENV, timeout=120)
    assert first.returncode == 0, first.stderr
    ticks = [json.loads(x) for x in first.stderr.splitlines() if x.startswith('{"event": "tick"')]
    assert ticks[0]["total_of"] == "max_pages" and ticks[0]["total"] == 150, ticks[0]
    assert ticks[-1]["done"] == 150 and ticks[-1]["percent"] == 100.0, ticks[-1]
    rest = subprocess.run(_cmd(wl, tmp_path, "--progress", "json", "--delay", "0s"), capture_output=True,
                          text=True, cwd=REPO, env=ENV, timeout=120)
    assert rest.returncode == 0, rest.stderr
    ticks = [json.loads(x) for x in rest.stderr.splitlines() if x.startswith('{"event": "tick"')]
    assert ticks[0]["total"] == 400 and ticks[0]["done"] == 150, ticks[0]  # the first run's rows are done
    assert ticks[-1]["done"] == 400 and ticks[-1]["written"] == 250, ticks[-1]


def _stage_pid(root: int, role: str, timeout: float = 60) -> int:
    from ccrawl.testing.procs import descendants

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(root):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == f"cc-{role}":
                    return pid
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no cc-{role} process appeared")


def _wait_for_tick(tmp: Path, test: Any, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for e in _journal(tmp):
            if e["event"] == "tick" and test(e):
                return e
        time.sleep(0.1)
    raise AssertionError(f"no tick as wanted in {timeout} s: {[e for e in _journal(tmp) if e['event'] == 'tick']}")


def _frozen_run(web: SynthWeb, tmp: Path, write_worklist: Any, role: str,
                also: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
    """Freeze ``cc-<role>`` mid-run until a tick names it (and, for each of ``also``, a waiting line starting
    so: the stages downstream fall quiet a moment later on a loaded machine); continue it; the run then
    ends well."""
    wl = write_worklist(tmp / "wl", web.page_urls(), parts=1)
    # 12 hosts at 1 s a host: the list takes about 12 s; the stall detector's 120 s never comes
    cmd = _cmd(wl, tmp, "--progress", "json", "--delay", "1s", "--waiting-after", "2s", "--stall-timeout", "120s")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=ENV)
    try:
        pid = _stage_pid(proc.pid, role)
        _wait_for_tick(tmp, lambda t: t["written"] > 0, 60)
        os.kill(pid, signal.SIGSTOP)
        try:
            tick = _wait_for_tick(tmp, lambda t: any(f"cc-{role} (pid {pid}) silent" in w for w in t["waiting"])
                                  and all(any(w.startswith(a) for w in t["waiting"]) for a in also), 30)
        finally:
            os.kill(pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return pid, tick, err


def test_a_frozen_fetch_process_is_named_in_the_ticks_with_the_urls_it_holds_and_the_stages_waiting_on_it(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    pid, tick, err = _frozen_run(web, tmp_path, write_worklist, "fetch-0",
                                 also=("writers waiting on extract", "extract waiting on fetch"))
    waiting = tick["waiting"]
    assert "writers waiting on extract (queue 0 B)" in waiting, waiting
    assert "extract waiting on fetch (queue 0 B)" in waiting, waiting
    fetch = next(w for w in waiting if w.startswith("fetch:"))
    m = re.match(rf"fetch: (\d+) URLs held \(\d+ waiting for their host's turn, \d+ in flight\), 0 done in (\d+) s "
                 rf"\(cc-fetch-0 \(pid {pid}\) silent (\d+) s\)$", fetch)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) >= 2, fetch
    assert tick["quiet_s"] >= 2 and tick["held"] == int(m.group(1)), tick
    ticks = [json.loads(x) for x in err.splitlines() if x.startswith('{"event": "tick"')]
    assert ticks[-1]["final"] and ticks[-1]["waiting"] == [] and ticks[-1]["done"] == ticks[-1]["total"]


def test_a_frozen_extract_process_is_named_in_the_ticks_while_fetch_goes_on(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    pid, tick, _ = _frozen_run(web, tmp_path, write_worklist, "extract-0", also=("writers waiting on extract",))
    waiting = tick["waiting"]
    assert "writers waiting on extract (queue 0 B)" in waiting, waiting
    extract = next(w for w in waiting if w.startswith("extract"))
    assert re.match(rf"extract: queue [\d.]+ [KM]?B of [\d.]+ MB, 0 rendered in \d+ s \(cc-extract-0 \(pid {pid}\) "
                    r"silent \d+ s\)$", extract), extract
    assert not any(w.startswith("fetch") for w in waiting), waiting  # fetch still moves: not listed


def test_the_gauges_carry_the_tick_fields(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    urls = _slow_urls(web, 600, 5)
    wl = write_worklist(tmp_path / "wl", urls, parts=1, row_group_size=100)
    proc = subprocess.Popen(_cmd(wl, tmp_path, "--progress", "none", "--delay", "0s", "--workers", "4",
                                 "--metrics-addr", f"127.0.0.1:{port}"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=ENV)
    try:
        _wait_for_tick(tmp_path, lambda t: t["written"] > 0 and t["rate"] > 0, 60)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    gauges = dict(re.findall(r"^(ccrawl_recrawl_\w+(?:\{[^}]*\})?) (\S+)$", body, re.M))
    assert float(gauges["ccrawl_recrawl_total"]) == len(urls)
    assert float(gauges["ccrawl_recrawl_done"]) > 0 and float(gauges["ccrawl_recrawl_written"]) > 0, gauges
    assert float(gauges["ccrawl_recrawl_rows"]) == 0  # durable only at the seal: written is what moved
    for name in ("percent", "rate", "eta_s", "body_bytes", "held", "quiet_s", "waiting"):
        assert f"ccrawl_recrawl_{name}" in gauges, name


def _under_pty(cmd: list[str], timeout: float) -> tuple[int, str]:
    """Run ``cmd`` with a pseudo-terminal as its stdin, stdout and stderr; its output and exit status."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(REPO)
        os.execvpe(cmd[0], cmd, ENV)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            out += data
    finally:
        os.close(fd)
    for _ in range(100):
        waited, status = os.waitpid(pid, os.WNOHANG)
        if waited:
            return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the run under a terminal did not end: {out[-2000:]!r}")


def test_on_a_terminal_the_live_line_shows_done_of_total_and_the_percentage(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    urls = _slow_urls(web, 1500, 3)
    wl = write_worklist(tmp_path / "wl", urls, parts=1, row_group_size=100)
    # no --progress: on a terminal that is the live line
    code, out = _under_pty(_cmd(wl, tmp_path, "--delay", "0s"), timeout=180)
    assert code == 0, out
    frames = [f for f in re.split(r"[\r\n]+", out) if f.startswith("recrawl: ") and "%|" in f]
    shown = [re.match(r"recrawl:\s+(\d+)%\|[^|]*\| (\d+)/(\d+), (\d+)/s, ETA (\S+), ", f) for f in frames]
    shown = [m for m in shown if m]
    assert len(shown) >= 3, out
    assert {int(m.group(3)) for m in shown if m} == {len(urls)}
    pcts = [int(m.group(1)) for m in shown if m]
    assert pcts[-1] == 100 and any(0 < p < 100 for p in pcts), pcts
    assert '{"event"' not in out  # a terminal gets the line, not JSON
    assert "recrawl: 1503 fetched" in out  # the summary after it
