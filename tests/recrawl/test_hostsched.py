"""Host-ready scheduling: the scheduler on a fake clock, then the fetch loop alone against real servers.

The fetch loop (:func:`ccrawl.recrawl.fetchproc.serve`) runs in this process with an in-memory
inbox and outbox, against the synthetic web (and, for Retry-After, a small aiohttp app of this
file); request times are read from the server's own log, so spacing is measured where it matters.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ccrawl.fetch.config import FetchConfig
from ccrawl.recrawl.fetchproc import Inbox, serve
from ccrawl.recrawl.hostsched import HostScheduler, host_of, retry_after
from ccrawl.recrawl.messages import CaptureRow, Credit, FetchReport, StopFeed, WorkBatch, WorkItem
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread

# -- the scheduler on a fake clock ------------------------------------------------------------------


def drain(s: HostScheduler[int], start: float, step: float, limit: int = 10_000) -> list[tuple[float, str, int]]:
    """Take everything, one take per ready host, advancing a fake clock by ``step`` when none is."""
    now, out = start, []
    while len(s) and len(out) < limit:
        got = s.take(now)
        if got is None:
            ready = s.next_ready()
            assert ready is not None
            now = max(now + step, ready)
            continue
        host, item, unknown = got
        assert not unknown
        out.append((now, host, item))
    return out


def test_a_host_with_many_urls_does_not_starve_the_others() -> None:
    s: HostScheduler[int] = HostScheduler(0.0)
    for i in range(1000):
        s.add("big.test", i, 0.0)
    for h in range(9):
        s.add(f"h{h}.test", h, 0.0)
    first = [host for _, host, _ in drain(s, 0.0, 0.001, limit=20)]
    assert set(first[:10]) == {"big.test"} | {f"h{h}.test" for h in range(9)}, first
    assert first[:10].count("big.test") == 1, "ready hosts are served round robin, not the big one's backlog first"


def test_host_sorted_list_interleaves_hosts_and_keeps_each_hosts_spacing() -> None:
    s: HostScheduler[int] = HostScheduler(0.5)
    for h in range(20):  # every page of h0, then every page of h1, ...
        for page in range(5):
            s.add(f"h{h}.test", h * 100 + page, 0.0)
    takes = drain(s, 0.0, 0.01)
    assert len(takes) == 100
    by_host: dict[str, list[float]] = {}
    for t, host, _ in takes:
        by_host.setdefault(host, []).append(t)
    assert all(b - a >= 0.5 - 1e-9 for ts in by_host.values() for a, b in itertools.pairwise(ts))
    assert {host for t, host, _ in takes if t == 0.0} == set(by_host), "every host starts at once"
    assert takes[-1][0] == pytest.approx(2.0), "4 gaps of 0.5 s, whatever the list order"


def test_crawl_delay_learned_from_robots_spaces_that_host_only() -> None:
    s: HostScheduler[str] = HostScheduler(0.1, learn_delay=True)
    for i in range(3):
        s.add("slow.test", f"s{i}", 0.0)
        s.add("fast.test", f"f{i}", 0.0)
    first = s.take(0.0)
    assert first is not None and first[2], "the first item of a host waits for its robots.txt"
    second = s.take(0.0)
    assert second is not None and second[0] != first[0], "the host being resolved is out of the heap"
    assert s.take(0.0) is None
    s.learned("slow.test", 2.0, 0.0)
    s.learned("fast.test", 0.1, 0.0)
    takes = drain(s, 0.0, 0.05)
    slow = [t for t, h, _ in takes if h == "slow.test"]
    fast = [t for t, h, _ in takes if h == "fast.test"]
    assert slow == pytest.approx([2.0, 4.0]) and fast[-1] < 0.5


def test_retry_after_backs_off_one_host_and_is_capped() -> None:
    s: HostScheduler[int] = HostScheduler(0.0, max_backoff=30.0)
    for i in range(2):
        s.add("a.test", i, 0.0)
        s.add("b.test", i, 0.0)
    assert s.take(0.0) is not None  # a.test
    s.back_off("a.test", 3600.0, 0.0)
    takes = drain(s, 0.0, 0.5)
    a_times = [t for t, h, _ in takes if h == "a.test"]
    b_times = [t for t, h, _ in takes if h == "b.test"]
    assert a_times == [30.0], "backed off to the cap, not an hour"
    assert max(b_times) < 1.0, "the other host is not held back"


def test_retry_after_header_forms() -> None:
    assert retry_after([("Retry-After", "7")]) == 7.0
    assert retry_after([("retry-after", "Wed, 21 Oct 2015 07:28:10 GMT")], now_wall=1445412480.0) == 10.0
    assert retry_after([("Retry-After", "soon")]) == 0.0
    assert retry_after([("Content-Type", "text/html")]) == 0.0
    assert host_of("HTTP://Example.COM:8080/x") == "example.com" and host_of("not a url") == ""


# -- the fetch loop alone, with in-memory queues ----------------------------------------------------


class ListOutbox:
    """The fetch loop's outbox in memory: rows in a list, the same interface as the rings'."""

    def __init__(self) -> None:
        self.rows: list[tuple[CaptureRow, bytes]] = []
        self.sink_wait = 0.0
        self.closed = False

    async def put(self, row: CaptureRow, body: bytes) -> None:
        self.rows.append((row, body))

    def close(self) -> None:
        self.closed = True


class ListEvents:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def put(self, ev: Any) -> None:
        self.items.append(ev)


def run_fetch_loop(config: FetchConfig, urls: list[str]) -> tuple[ListOutbox, ListEvents, float]:
    events, outbox = ListEvents(), ListOutbox()

    async def main() -> float:
        inbox = Inbox()
        items = [WorkItem(i, u) for i, u in enumerate(urls)]
        inbox.queue.put_nowait(WorkBatch(items[: len(items) // 2]))
        inbox.queue.put_nowait(WorkBatch(items[len(items) // 2 :]))
        inbox.queue.put_nowait(StopFeed())
        t0 = time.monotonic()
        await serve(0, inbox, events, outbox, config, warc=False)
        return time.monotonic() - t0

    elapsed = asyncio.run(main())
    return outbox, events, elapsed


def gaps(log: list[tuple[float, str, str, dict[str, str]]], host: str, prefix: str = "/p/") -> list[float]:
    times = sorted(t for t, h, p, _ in log if h == host and p.startswith(prefix))
    return [b - a for a, b in itertools.pairwise(times)]


@pytest.fixture(scope="module")
def sweb() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=8, pages=6, page_bytes=2000, crawl_delay=0.6) as w:
        yield w


def test_fetch_loop_alone_crawls_a_host_sorted_list_at_the_politeness_bound(sweb: SynthWeb) -> None:
    hosts = [f"site{h}.test" for h in range(8)]
    urls = [sweb.url(h, f"/p/{n}") for h in hosts for n in range(4)]  # host by host
    before = len(sweb.stats.log)
    config = FetchConfig(delay=0.4, concurrency=4, resolve=sweb.resolve, timeout=10)
    outbox, events, elapsed = run_fetch_loop(config, urls)
    assert sorted(r.header.seq for r, _ in outbox.rows) == list(range(len(urls))), "every item is one row"
    assert all(r.columns["status"] == 200 for r, _ in outbox.rows)
    assert outbox.closed
    log = list(sweb.stats.log)[before:]
    for h in hosts:
        # the spacing is between request starts (fetched_at, ms); the server sees a host's first
        # request later by its connection set-up, so its own log gets a small allowance
        starts = sorted(r.columns["fetched_at"] for r, _ in outbox.rows if r.columns["host"] == h)
        assert min(b - a for a, b in itertools.pairwise(starts)) >= 400 - 1, (h, starts)
        # the server's own log (a thread of this process, so its times carry GIL and connection
        # set-up noise): four requests, spread over at least three delays
        times = sorted(t for t, host, path, _ in log if host == h and path.startswith("/p/"))
        assert len(times) == 4 and times[-1] - times[0] >= 3 * 0.4 - 0.05, (h, times)
    # 4 workers, 8 hosts, 3 gaps of 0.4 s each: about 1.2 s when hosts run side by side; the
    # list order (host by host at one slot per host clock) would take 32 x 0.4 / 4 = 3.2 s
    assert elapsed < 2.6, elapsed
    credit = sum(e.nbytes for e in events.items if isinstance(e, Credit | FetchReport))
    assert credit == sum(WorkItem(i, u).cost for i, u in enumerate(urls)), "all the read-ahead comes back"
    assert isinstance(events.items[-1], FetchReport) and events.items[-1].final


def test_fetch_loop_obeys_crawl_delay_under_robots(sweb: SynthWeb) -> None:
    urls = [sweb.url("rdelay-0.test", f"/p/{n}") for n in range(3)] + [
        sweb.url("site1.test", f"/p/{n}") for n in range(3)]
    bad = ["http://site3.test:99999/x", "ftp://site3.test/x"]  # robots.txt cannot be asked: still rows
    before = len(sweb.stats.log)
    config = FetchConfig(delay=0.05, robots=True, concurrency=4, resolve=sweb.resolve, timeout=10)
    outbox, events, _ = run_fetch_loop(config, urls + bad)
    assert not [e for e in events.items if type(e).__name__ == "Crash"], events.items
    assert len(outbox.rows) == 8
    assert all(r.columns["error"] and r.columns["status"] == 0 for r, _ in outbox.rows if r.columns["url"] in bad)
    log = list(sweb.stats.log)[before:]
    slow = gaps(log, "rdelay-0.test")
    assert len(slow) == 2 and sum(slow) >= 2 * 0.6 - 0.05, slow
    starts = sorted(r.columns["fetched_at"] for r, _ in outbox.rows if r.columns["host"] == "rdelay-0.test")
    assert min(b - a for a, b in itertools.pairwise(starts)) >= 600 - 1, starts
    assert max(gaps(log, "site1.test")) < 0.5, "Crawl-delay of one host does not slow the others"


class _RetryWeb:
    """``busy.test`` answers 429 with Retry-After: 1 to its first request; everything else 200."""

    def __init__(self) -> None:
        self.log: list[tuple[float, str, str, dict[str, str]]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        host = (request.host or "").split(":")[0]
        self.log.append((time.monotonic(), host, request.path, {}))
        if host == "busy.test" and sum(1 for _, h, _, _ in self.log if h == host) == 1:
            return web.Response(status=429, headers={"Retry-After": "1"}, text="slow down")
        return web.Response(text="<html><title>ok</title></html>", content_type="text/html")

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> _RetryWeb:
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)


def test_retry_after_backs_off_that_host_not_the_run() -> None:
    with _RetryWeb() as rw:
        urls = [f"http://busy.test:{rw.port}/{n}" for n in range(3)] + [
            f"http://calm{h}.test:{rw.port}/{n}" for h in range(3) for n in range(3)]
        config = FetchConfig(delay=0.1, concurrency=4, resolve={"*.test": "127.0.0.1"}, timeout=10)
        outbox, events, _ = run_fetch_loop(config, urls)
        log = list(rw.log)
    statuses = sorted(r.columns["status"] for r, _ in outbox.rows)
    assert statuses.count(429) == 1 and len(statuses) == 12, "one attempt per row; the 429 is a row"
    busy = sorted(r.columns["fetched_at"] for r, _ in outbox.rows if r.columns["host"] == "busy.test")
    assert busy[1] - busy[0] >= 1000 - 1, busy
    calm_last = max(t for t, h, _, _ in log if h.startswith("calm"))
    busy_first = min(t for t, h, _, _ in log if h == "busy.test")
    assert calm_last - busy_first < 0.9, "the other hosts finished while busy.test was backed off"
    report = [e for e in events.items if isinstance(e, FetchReport)][-1]
    assert report.stats.sched_backoffs == 1


# -- a stop does not wait out a host queue --------------------------------------------------------


def test_sigterm_drops_items_waiting_for_their_host_and_a_resume_takes_them(
    sweb: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    import json
    import os
    import signal
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    urls = [sweb.url("site2.test", f"/p/{n}?k={k}") for k in range(5) for n in range(6)]  # 30 URLs, one host
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    out, state, journal = tmp_path / "out", tmp_path / "s.json", tmp_path / "j.jsonl"

    def start(delay: str) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
               "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "8",
               "--delay", delay, "--shard-size", "4KB", "--no-extract", "--progress", "none",
               "--journal", str(journal)]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo)

    proc = start("400ms")  # 30 x 0.4 s = 12 s to walk the host's queue
    deadline = time.monotonic() + 30
    while '"event": "checkpoint"' not in (journal.read_text() if journal.exists() else ""):
        assert time.monotonic() < deadline, "no checkpoint"
        time.sleep(0.02)
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - signalled < 6, "the stop waited out the host's queue"
    assert "stopped by signal" in err.decode()
    first = read_captures(out).column("url").to_pylist()
    assert 0 < len(first) < len(urls) and not json.loads(state.read_text())["done"]
    proc = start("0s")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    got = read_captures(out).column("url").to_pylist()
    assert sorted(got) == sorted(urls), "no gap and no duplicate across the stop"
    assert json.loads(state.read_text())["done"]
