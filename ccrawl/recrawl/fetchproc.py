"""A fetch process: hundreds of concurrent fetches on one event loop, results into shared memory.

The parent sends :class:`~ccrawl.recrawl.messages.WorkBatch` messages down this process's pipe
and :class:`~ccrawl.recrawl.messages.StopFeed` to stop. Items wait in per-host queues of a
:class:`~ccrawl.recrawl.hostsched.HostScheduler`; a slot (one of this process's share of
``--workers``) only ever takes an item whose host is ready, so a host's politeness clock never
holds a slot that another host could use. Every item becomes exactly one row (a failure is a
row), copied into the next stage's ring by a helper thread so a full ring holds back the task
that produced it (the "waiting for the sink" phase) without stalling the event loop. Credit (the
bytes of the items done) goes back to the parent as rows leave, which bounds the read-ahead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from ccrawl.fetch.config import FetchConfig
from ccrawl.fetch.result import FetchResult
from ccrawl.procs import child_setup, peak_rss_mb
from ccrawl.recrawl.fetchwriter import FetchWriter, WriterFailed
from ccrawl.recrawl.hostsched import HostScheduler, host_of, retry_after
from ccrawl.recrawl.messages import (
    CaptureRow,
    Crash,
    Credit,
    Drained,
    DropWaiting,
    EventSink,
    Exit,
    FetchReport,
    Ready,
    RowHeader,
    Seal,
    StopFeed,
    WorkBatch,
    WorkItem,
    WriterReport,
)
from ccrawl.recrawl.ring import Ring
from ccrawl.recrawl.stats import FetchProcessStats

#: One encoder for every row (``json.dumps`` with arguments builds one per call); most rows have no
#: extra context at all and take the literal ``{}`` it would have written.
_META_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def capture_row(result: FetchResult, seq: int, *, warc: bool) -> CaptureRow:
    """The capture row of a FetchResult (everything but the body): header and seed columns."""
    failed = bool(result.error)
    meta_extra = result.meta()
    columns: dict[str, Any] = {
        "url": result.url,
        "host": result.host,
        "status": int(result.status),
        "fetched_at": int(result.fetched_at),
        "content_type": "" if failed else result.content_type,
        "body_length": 0 if failed else len(result.body),
        "digest": "" if failed else result.digest,
        "unchanged": bool(result.unchanged),
        "etag": "" if failed else result.etag,
        "last_modified": "" if failed else result.last_modified,
        "error": result.error,
        "meta_json": _META_JSON.encode(meta_extra) if meta_extra else "{}",
        "ttfb_ms": int(result.ttfb_ms),
        "fetch_duration_ms": int(result.fetch_duration_ms),
        "final_url": result.final_url,
        "ip_address": result.ip_address,
        "resp_headers": "" if failed else result.headers_json(),
        "req_headers": result.req_headers_json(),
    }
    header = RowHeader(seq)
    if not failed:
        for name, value in result.resp_headers:
            if name.lower() == "content-encoding":
                header.content_encoding = value
    if warc and not failed:
        header.request_head = result.request_head()
        header.response_head = result.stored_response_head()
        header.truncated = bool(result.body_truncated)
        header.target_url = result.target_url
    return CaptureRow(header, columns)


class RowOutbox(Protocol):
    """Where a fetch process puts its rows: the rings, its own writer, or a list in a test."""

    sink_wait: float
    """Seconds spent waiting for room."""

    async def put(self, row: CaptureRow, body: bytes) -> None: ...

    def close(self) -> None: ...


class _Outbox:
    """Round-robin over the downstream rings; a full ring is waited on in a helper thread.

    Rows that fit are copied in at once and announced together once per turn of the event loop
    (``Ring.try_put(defer=True)`` then :meth:`_announce`), so the consumer wakes per batch.
    """

    def __init__(self, rings: list[Ring]) -> None:
        self.rings = rings
        self._next = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ring-put")
        self._announcing = False
        self.sink_wait = 0.0

    async def put(self, row: CaptureRow, body: bytes) -> None:
        ring = self.rings[self._next % len(self.rings)]
        self._next += 1
        blob = row.pack()
        if ring.try_put(blob, body, defer=True):
            if not self._announcing:
                self._announcing = True
                asyncio.get_running_loop().call_soon(self._announce)
            return  # room right away: no hop to the helper thread
        ring.announce()  # what is held must reach the consumer before anyone waits for its room
        t0 = time.perf_counter()
        await asyncio.get_running_loop().run_in_executor(self._pool, ring.put, blob, body)
        self.sink_wait += time.perf_counter() - t0

    def _announce(self) -> None:
        self._announcing = False
        for ring in self.rings:
            ring.announce()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._announce()
        for ring in self.rings:
            ring.put_eof()


@dataclass(slots=True, frozen=True)
class FetchWriterConfig:
    """What a fetch process that writes its own rows needs (fetch-only Parquet runs)."""

    out: str
    stem: str
    """``<prefix>[-s<i>of<n>]-<run id>-f<k>``: this process's part files."""
    provenance: dict[str, str]
    shard_size: int
    row_group_bytes: int

    def open(self, idx: int, events: EventSink) -> FetchWriter:
        from ccrawl.recrawl.diskfail import disk_failure

        def on_disk(exc: BaseException) -> str | None:
            failure = disk_failure(exc, self.out)
            return failure.message() if failure is not None else None

        return FetchWriter(idx, self.out, self.stem, self.provenance, events, shard_size=self.shard_size,
                           row_group_bytes=self.row_group_bytes, disk_failure=on_disk)


#: HTTP statuses whose ``Retry-After`` backs the host off (that host only, never the run).
BACKOFF_STATUSES = frozenset({429, 503})


@dataclass(slots=True, frozen=True)
class _InboxFailed:
    """The inbox thread could not read the parent's pipe (not an EOF): the fetch process fails."""

    error: BaseException


class Inbox:
    """The parent's messages, as an asyncio queue: from a pipe (a real run) or pushed by a test."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[WorkBatch | StopFeed | DropWaiting | Seal | Exit | _InboxFailed] = asyncio.Queue()

    def attach(self, conn: Connection) -> None:
        """Read ``conn`` in a thread of its own, handing each message to the event loop.

        Never ``loop.add_reader`` on the pipe: uvloop (libuv) makes a watched descriptor
        non-blocking, and ``Connection.recv`` on a non-blocking pipe raises ``BlockingIOError``
        when a message arrives in pieces (a ``WorkBatch`` over 16 KiB is written as a header and
        then a payload): that ended the fetch process with exit code 0 and no word to the parent
        (issue #37). Here the descriptor stays blocking and a message is read whole.
        """
        loop = asyncio.get_running_loop()
        detached = threading.Event()

        def deliver(msg: object) -> None:
            if not detached.is_set():
                self.queue.put_nowait(msg)  # type: ignore[arg-type]

        def read() -> None:
            while not detached.is_set():
                try:
                    msg: object = conn.recv()
                except EOFError:
                    os._exit(0)  # the parent is gone: leave nothing half-sealed behind, the next run replays
                except BaseException as exc:  # handed to the loop, which fails the process
                    msg = _InboxFailed(exc)
                try:
                    loop.call_soon_threadsafe(deliver, msg)
                except RuntimeError:
                    return  # the loop is closed: the process is ending
                if isinstance(msg, _InboxFailed):
                    return

        threading.Thread(target=read, name="inbox", daemon=True).start()
        self._detach = detached.set

    def detach(self) -> None:
        getattr(self, "_detach", lambda: None)()


async def serve(
    idx: int, inbox: Inbox, events: EventSink, outbox: RowOutbox, config: FetchConfig, warc: bool
) -> None:
    """The fetch process's loop: take work batches, schedule them by host readiness, fetch, put rows.

    ``events`` needs only ``put``; ``outbox`` needs ``async put(row, body)`` and ``close()`` (the
    shared-memory rings in a run, a list in a test), so the loop runs alone with in-memory queues.

    When ``outbox`` is a :class:`~ccrawl.recrawl.fetchwriter.FetchWriter` (a fetch-only Parquet
    run) this process is also its rows' writer: it takes ``Seal`` and ``Exit`` on its inbox as a
    writer process does on its control pipe, reports ``Drained`` when its work is done, and
    waits for the parent's final seal and ``Exit`` before it ends.
    """
    from ccrawl.fetch import Fetcher

    loop = asyncio.get_running_loop()
    sched: HostScheduler[WorkItem] = HostScheduler(
        config.delay, learn_delay=config.robots, max_backoff=config.max_crawl_delay
    )
    wake = asyncio.Event()
    slots = asyncio.Semaphore(config.concurrency)
    tasks: set[asyncio.Task[None]] = set()
    credit = 0
    last_report = time.monotonic()
    cpu0, wall0 = time.process_time(), time.monotonic()
    # Credit (bytes of items done) goes back after every eighth of the slots' worth of results,
    # not on the stats cadence: the parent feeds against it, so holding it back caps the rate.
    credit_every = max(1, config.concurrency // 8)
    done_since_credit = 0
    host_wait = 0.0
    own_writer = outbox if isinstance(outbox, FetchWriter) else None
    writes = own_writer is not None
    exit_now = asyncio.Event()  # a writing fetch process: the parent said Exit
    sealing: asyncio.Task[None] | None = None

    async def seal_after(previous: asyncio.Task[None] | None, round_: int, final: bool) -> None:
        if previous is not None:
            await previous  # seals answer in the order the parent sent them
        assert own_writer is not None  # seals come only to a fetch process that writes
        await own_writer.seal(round_, final)

    async with Fetcher(config) as fetcher:
        events.put(Ready("fetch", idx, os.getpid()))

        async def one(host: str, item: WorkItem, unknown_delay: bool) -> None:
            nonlocal credit, done_since_credit
            try:
                if unknown_delay:
                    try:
                        delay = await fetcher.host_delay(item.url)
                    except ValueError:  # a URL robots.txt cannot be asked about (a bad port): fetch() makes its row
                        delay = config.delay
                    sched.learned(host, delay, time.monotonic())
                    wake.set()
                result = await fetcher.fetch(item.url, etag=item.etag, last_modified=item.last_modified, paced=True,
                                             on_start=lambda: sched.started(host, time.monotonic()))
                if result.status in BACKOFF_STATUSES:
                    pause = retry_after(result.resp_headers)
                    if pause > 0:
                        sched.back_off(host, pause, time.monotonic())
                body = b"" if result.error else result.body
                await outbox.put(capture_row(result, item.seq, warc=warc), body)
            except WriterFailed:
                return  # reported to the parent as a Crash already; the run stops
            except Exception as exc:  # a bug, not a network failure (those are rows): stop the run
                events.put(Crash(f"fetch process {idx}", f"{type(exc).__name__}: {exc} (url {item.url})"))
                return
            finally:
                slots.release()
            credit += item.cost
            done_since_credit += 1
            if done_since_credit >= credit_every:
                events.put(Credit(idx, credit, done_since_credit))
                credit = done_since_credit = 0

        def report(final: bool = False) -> None:
            nonlocal credit, done_since_credit, last_report
            stats = FetchProcessStats(
                fetch=fetcher.snapshot(),
                sink_wait_s=outbox.sink_wait,
                cpu_s=time.process_time() - cpu0,
                wall_s=time.monotonic() - wall0,
                peak_rss_mb=peak_rss_mb(),
                sched_hosts=sched.hosts,
                sched_waiting=len(sched),
                sched_backoffs=sched.backoffs,
                sched_host_wait_s=host_wait,
                sched_dropped=dropped,
                # rows in this process's open shard too (progress, not durability)
                written=own_writer.rows if own_writer is not None else 0,
            )
            # the slowest hosts and last failures of the last second ride along for the status page
            events.put(FetchReport(idx, credit, stats, final, done_since_credit, fetcher.recent()))
            credit = done_since_credit = 0
            last_report = time.monotonic()

        fed = asyncio.Event()  # set once the parent says no more items will come
        dropped = 0

        async def receive() -> None:
            """Take the parent's messages into the scheduler, until the loop ends."""
            nonlocal dropped, sealing
            while True:
                msg = await inbox.queue.get()
                match msg:
                    case WorkBatch(items=items):
                        now = time.monotonic()
                        for item in items:
                            sched.add(host_of(item.url), item, now)
                    case StopFeed():
                        fed.set()
                    case DropWaiting():
                        dropped += sched.drop_waiting()
                    case Seal(round=round_, final=final) if writes:
                        sealing = loop.create_task(seal_after(sealing, round_, final))
                    case Exit() if writes:
                        exit_now.set()
                    case _InboxFailed(error=error):
                        raise RuntimeError(f"fetch process {idx}: reading the parent's pipe failed") from error
                    case _:
                        raise TypeError(f"fetch process {idx}: unexpected message {msg!r}")
                wake.set()

        async def heartbeat() -> None:
            """Credit every 0.1 s when there is some, the full report once a second, whatever else runs.

            The report is the process's heartbeat too: the parent names a fetch process that sends
            nothing for ``--stall-timeout``. It runs as a task of its own, so it goes out while every
            slot is busy; credit has its own clock (it once reset the report's, and ``fetched`` froze
            at its first value while hundreds of pages were fetched: issue #37).
            """
            nonlocal credit, done_since_credit
            while True:
                await asyncio.sleep(0.1)
                if time.monotonic() - last_report >= 1.0:
                    report()
                elif credit:
                    events.put(Credit(idx, credit, done_since_credit))
                    credit = done_since_credit = 0

        receiver = loop.create_task(receive())
        beating = loop.create_task(heartbeat())
        swept = time.monotonic()
        while True:
            await slots.acquire()
            # a slot is free: wait (holding it, no host is ready to use it) until one host is ready
            got = None
            while got is None:
                now = time.monotonic()
                got = sched.take(now)
                if got is not None:
                    break
                if receiver.done():
                    raise RuntimeError("fetch process inbox failed") from receiver.exception()
                if fed.is_set() and not len(sched) and not tasks:
                    break
                ready_at = sched.next_ready()
                timeout = 0.1 if ready_at is None else min(0.1, max(0.0, ready_at - now))
                wake.clear()
                t0 = time.monotonic()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout)
                if ready_at is not None and len(sched):
                    host_wait += time.monotonic() - t0
            if got is None:
                slots.release()
                break
            host, item, unknown = got
            task = loop.create_task(one(host, item, unknown))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            now = time.monotonic()
            if now - swept > 5.0:
                sched.sweep(now)
                swept = now
        if writes:
            # the rows are in this process's open shard: the parent's final seal makes them durable
            events.put(Drained(idx))
            exit_wait = loop.create_task(exit_now.wait())
            await asyncio.wait([exit_wait, receiver], return_when=asyncio.FIRST_COMPLETED)
            if not exit_now.is_set():
                raise RuntimeError("fetch process inbox failed") from receiver.exception()
            if sealing is not None:
                with contextlib.suppress(WriterFailed):
                    await sealing
        receiver.cancel()
        beating.cancel()
        inbox.detach()
        report(final=True)
        if own_writer is not None:
            events.put(WriterReport(idx, own_writer.stats(), True))
    outbox.close()


def fetch_main(idx: int, inbox: Connection, events: EventSink, rings: list[Ring], config: FetchConfig, warc: bool,
               writer: FetchWriterConfig | None = None) -> None:
    """Entry point of fetch process ``idx``; with ``writer``, it writes its own rows (fetch-only Parquet)."""
    child_setup(f"fetch-{idx}")
    from ccrawl.fetch import run
    from ccrawl.profiling.session import heap_profile

    if writer is not None:
        import pyarrow.parquet  # noqa: F401 - before the first row, not in the middle of the fetches

        from ccrawl.recrawl.diskfail import apply_test_fsize_limit

        apply_test_fsize_limit()

    async def main() -> None:
        box = Inbox()
        box.attach(inbox)
        outbox: RowOutbox = _Outbox(rings) if writer is None else writer.open(idx, events)
        await serve(idx, box, events, outbox, config, warc)

    with heap_profile(f"fetch-{idx}"):
        run(main())
