"""A fetch process: hundreds of concurrent fetches on one event loop, results into shared memory.

The parent sends lists of work items ``(seq, url, etag, last_modified)`` down this process's
pipe and ``None`` to stop. Every item becomes exactly one result (a failure is a row), copied
into the next stage's ring by a helper thread so a full ring holds back the fetch task that
produced the row (the "waiting for the sink" phase) without stalling the event loop. Credits go
back to the parent as results leave, which is what bounds the items held here.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from ccrawl.recrawl.procs import child_setup, pack_meta, peak_rss_mb
from ccrawl.recrawl.ring import Ring

#: One encoder for every row (``json.dumps`` with arguments builds one per call); most rows have no
#: extra context at all and take the literal ``{}`` it would have written.
_META_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def result_meta(result: Any, seq: int, *, warc: bool) -> dict[str, Any]:
    """The capture-row fields of a FetchResult (everything but the body), plus routing keys."""
    failed = bool(result.error)
    meta_extra = result.meta()
    meta: dict[str, Any] = {
        "_seq": seq,
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
    if not failed:
        for name, value in result.resp_headers:
            if name.lower() == "content-encoding":
                meta["_content_encoding"] = value
    if warc and not failed:
        meta["_request_head"] = result.request_head()
        meta["_response_head"] = result.stored_response_head()
        meta["_truncated"] = bool(result.body_truncated)
        meta["_target_url"] = result.target_url
    return meta


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

    async def put(self, meta: dict[str, Any], body: bytes) -> None:
        ring = self.rings[self._next % len(self.rings)]
        self._next += 1
        blob = pack_meta(meta)
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


async def _serve(
    idx: int, inbox: Connection, events: Any, rings: list[Ring], fetch_kwargs: dict[str, Any], warc: bool
) -> None:
    from ccrawl.fetch import FetchConfig, Fetcher

    loop = asyncio.get_running_loop()
    inbox_q: asyncio.Queue[Any] = asyncio.Queue()

    def on_readable() -> None:
        try:
            inbox_q.put_nowait(inbox.recv())
        except (EOFError, OSError):
            os._exit(0)  # the parent is gone: leave nothing half-sealed behind, the next run replays

    loop.add_reader(inbox.fileno(), on_readable)
    outbox = _Outbox(rings)
    tasks: set[asyncio.Task[None]] = set()
    credits = 0
    last_report = time.monotonic()
    # The process's own CPU time against its wall clock: the timing line's "on CPU" share,
    # which tells a pool whose free slots wait on this process from one waiting on the network.
    cpu0, wall0 = time.process_time(), time.monotonic()
    # Credits go back as soon as a few results have left, not on the stats cadence: the parent
    # feeds only against credits, so holding them for the 0.1 s tick capped a process at about
    # credit_limit / 0.1 s (16 workers: ~600 pages/s on loopback, whatever the server could do).
    # An eighth of the slots at a time: the parent grants twice the slots, so the items held here
    # never fall below the slots, and each message (a queue put, a wake-up of the parent and a
    # batch fed back) is paid once per concurrency/8 rows rather than per concurrency/16.
    credit_every = max(1, int(fetch_kwargs.get("concurrency", 64)) // 8)

    async with Fetcher(FetchConfig(**fetch_kwargs)) as fetcher:

        async def one(seq: int, url: str, etag: str, last_modified: str) -> None:
            nonlocal credits
            try:
                result = await fetcher.fetch(url, etag=etag, last_modified=last_modified)
                body = b"" if result.error else result.body
                await outbox.put(result_meta(result, seq, warc=warc), body)
            except Exception as exc:  # a bug, not a network failure (those are rows): stop the run
                events.put(("crash", f"fetch process {idx}", f"{type(exc).__name__}: {exc} (url {url})"))
                return
            credits += 1
            if credits >= credit_every:
                events.put(("credit", idx, credits))
                credits = 0

        def report(final: bool = False) -> None:
            nonlocal credits, last_report
            stats = fetcher.stats()
            stats["sink_wait_s"] = outbox.sink_wait
            stats["peak_rss_mb"] = peak_rss_mb()
            stats["cpu_s"] = time.process_time() - cpu0
            stats["wall_s"] = time.monotonic() - wall0
            events.put(("fetch", idx, credits, stats, final))
            credits = 0
            last_report = time.monotonic()

        stopping = False
        while not stopping or tasks:
            try:
                msg = await asyncio.wait_for(inbox_q.get(), timeout=0.1) if not stopping else None
            except TimeoutError:
                msg = ()
            if stopping:
                await asyncio.wait(tasks, timeout=0.1)
            elif msg is None:
                stopping = True
                loop.remove_reader(inbox.fileno())
            else:
                for seq, url, etag, lm in msg:
                    task = loop.create_task(one(seq, url, etag, lm))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
            since = time.monotonic() - last_report
            if (credits and (credits >= 64 or since > 0.1)) or since > 1.0:
                report()
        report(final=True)
    outbox.close()


def fetch_main(
    idx: int, inbox: Connection, events: Any, rings: list[Ring], fetch_kwargs: dict[str, Any], warc: bool
) -> None:
    """Entry point of fetch process ``idx``."""
    child_setup()
    from ccrawl.fetch import run
    from ccrawl.profiling.session import heap_profile

    with heap_profile(f"fetch-{idx}"):
        run(_serve(idx, inbox, events, rings, fetch_kwargs, warc))
