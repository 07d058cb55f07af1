"""``crawl run``: workers on one event loop take URLs from the frontier, fetch, archive, follow links.

A worker takes the earliest ready host's next URL, asks robots.txt (once per host, cached, RFC
9309 via :class:`ccrawl.fetch.robots.RobotsCache`), fetches it with :class:`ccrawl.fetch.Fetcher`
(redirects are not followed inline: a 3xx is archived and its target queued like a link, so the
target's host gets its own robots.txt and clock), writes the exchange to WARC, queues the page's
outlinks one level deeper up to ``max_depth``, and hands the host back with its next allowed time.

Only the frontier and the WARC writer hold state, and both are touched without an ``await`` in
between (write, then ``done``), so a seal never splits a page from its bookkeeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccrawl.crawl.frontier import Frontier, FrontierConfig, Item
from ccrawl.crawl.links import page_links, redirect_target
from ccrawl.crawl.state import StateFile
from ccrawl.crawl.warc import Encoded, WarcFiles, encode_exchange, stored_body
from ccrawl.errors import NothingMatched, UsageError
from ccrawl.fetch.config import DEFAULT_USER_AGENT
from ccrawl.fetch.result import FetchResult

Notice = Callable[[str], None]


@dataclass(slots=True)
class CrawlOptions:
    """Every limit of a crawl run (the CLI passes its flags through as these)."""

    state: Path
    out: Path | None = None
    delay: float = 1.0
    max_depth: int = 0
    max_pages: int = 0
    same_host: bool = False
    robots: bool = True
    warc_size: int = 1 << 30
    prefix: str = "ccrawl"
    shard: int = 0
    shards: int = 1
    workers: int = 64
    timeout: float = 30.0
    max_body: int = 10 * 1024 * 1024
    max_outlinks: int = 1000
    max_crawl_delay: float = 60.0
    user_agent: str = DEFAULT_USER_AGENT
    resolve: Mapping[str, str] = field(default_factory=dict)
    max_active_hosts: int = 4096

    def validate(self) -> CrawlOptions:
        if self.shards < 1:
            raise UsageError(f"--shards must be at least 1 (got {self.shards})")
        if not 0 <= self.shard < self.shards:
            raise UsageError(f"--shard {self.shard} is outside 0..{self.shards - 1} (--shards {self.shards})")
        if self.delay < 0:
            raise UsageError("--delay must be >= 0 (0 turns spacing off)")
        if self.max_depth < 0 or self.max_pages < 0:
            raise UsageError("--max-depth and --max-pages must be >= 0")
        if self.workers < 1:
            raise UsageError("-j/--workers must be at least 1")
        if self.warc_size < 1024:
            raise UsageError("--warc-size must be at least 1 KB")
        return self


@dataclass(slots=True)
class CrawlSummary:
    fetched: int = 0
    """Fetch attempts this run (failures and robots skips included)."""
    archived: int = 0
    failed: int = 0
    robots_skipped: int = 0
    admitted: int = 0
    duplicates: int = 0
    warc_files: list[str] = field(default_factory=list)
    recovered_done: int = 0
    requeued: int = 0
    aborted_files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    total_fetched: int = 0
    queued: int = 0
    seen: int = 0
    finished: bool = False
    """True when the frontier ran dry; False when --max-pages or a signal stopped the run."""
    errors: dict[str, int] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        rate = self.fetched / self.seconds if self.seconds > 0 else 0.0
        return {
            "fetched": self.fetched, "archived": self.archived, "failed": self.failed,
            "robots_skipped": self.robots_skipped, "admitted": self.admitted, "duplicates": self.duplicates,
            "pages_per_second": round(rate, 1), "seconds": round(self.seconds, 3),
            "warc_files": len(self.warc_files), "recovered_done": self.recovered_done, "requeued": self.requeued,
            "aborted_files": len(self.aborted_files), "total_fetched": self.total_fetched, "queued": self.queued,
            "seen": self.seen, "finished": self.finished, "errors": dict(self.errors),
        }


def _header(result: FetchResult, name: str) -> str:
    low = name.lower()
    for n, v in result.resp_headers:
        if n.lower() == low:
            return v
    return ""


def _encode_pool() -> Executor:
    """Threads compress and digest WARC records (zlib and hashlib let go of the GIL). A process pool
    measured the same here (bench/README.md, "Discovery crawl"), so the simpler one stays."""
    return ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="warc-encode")


class _Crawl:
    def __init__(self, options: CrawlOptions, frontier: Frontier, warc: WarcFiles | None, summary: CrawlSummary,
                 notice: Notice) -> None:
        self.o = options
        self.frontier = frontier
        self.warc = warc
        self.summary = summary
        self.notice = notice
        self.stop = False
        self.robots: Any = None
        self.agent = ""
        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._idle = 0
        self.pool = _encode_pool()

    def seal(self) -> None:
        if self.warc is None:
            return
        self.frontier.flush()
        name = self.warc.seal()
        if name:
            self.frontier.sealed(name)
            self.summary.warc_files.append(name)

    async def dispatch(self, workers: int) -> None:
        """The one task that asks the frontier: hands a ready URL to an idle worker, else sleeps until
        the next host's clock or until a fetch ends. Idle workers wait on the queue and cost nothing,
        so 256 workers over 200 hosts do not spin asking for work that is not there."""
        o, frontier = self.o, self.frontier
        self._idle = workers
        try:
            while not self.stop:
                if o.max_pages and frontier.fetched + frontier.in_flight >= o.max_pages:
                    break
                if self._idle == 0:
                    await self._changed.wait()
                    self._changed.clear()
                    continue
                got = frontier.take()
                if got is None:
                    break
                if isinstance(got, Item):
                    self._idle -= 1
                    self._queue.put_nowait(got)
                    continue
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=got)
        finally:
            for _ in range(workers):
                self._queue.put_nowait(None)

    async def worker(self, fetcher: Any) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            try:
                await self.visit(fetcher, item)
            finally:
                self._idle += 1
                self._changed.set()

    async def visit(self, fetcher: Any, item: Item) -> None:
        frontier = self.frontier
        started = time.time()
        crawl_delay = 0.0
        try:
            if self.robots is not None:
                verdict = await self.robots.verdict(item.url)
                crawl_delay = verdict.crawl_delay(self.agent)
                if not verdict.can_fetch(item.url, self.agent) or crawl_delay > self.o.max_crawl_delay:
                    self.summary.robots_skipped += 1
                    self.summary.fetched += 1
                    frontier.done(item, started=time.time(), file=None, crawl_delay=min(crawl_delay, 3600.0))
                    return
                started = time.time()
            result = await fetcher.fetch(item.url)
            encoded = None
            if result.status and self.warc is not None:
                # compression and digests in a thread (zlib and hashlib let go of the GIL)
                info_id = self.warc.warcinfo_id()
                request, response = await asyncio.get_running_loop().run_in_executor(
                    self.pool, encode_exchange, result, info_id, self.o.max_body)
                encoded = Encoded(result, info_id, request, response)
        except BaseException:
            frontier.done(item, started=started, file=None, crawl_delay=crawl_delay)
            raise
        # From here to done(): no await, so no seal can come between the record and its bookkeeping.
        self.summary.fetched += 1
        file: str | None = None
        if result.status:
            if self.warc is not None and encoded is not None:
                file = self.warc.append(encoded)
                self.summary.archived += 1
            self.follow(item, result)
        else:
            self.summary.failed += 1
            self.summary.errors[result.error] = self.summary.errors.get(result.error, 0) + 1
        frontier.done(item, started=started, file=file, crawl_delay=crawl_delay)
        if self.warc is not None and self.warc.full():
            self.seal()

    def follow(self, item: Item, result: FetchResult) -> None:
        if 300 <= result.status < 400:
            target = redirect_target(result.url, _header(result, "Location"))
            if target:
                self.frontier.add(target, item.depth)
            return
        if item.depth >= self.o.max_depth or result.status != 200:
            return
        ctype = result.content_type.split(";", 1)[0].strip().lower()
        if ctype not in ("text/html", "application/xhtml+xml", ""):
            return
        body = stored_body(result, self.o.max_body).body
        try:
            links = page_links(body, result.url, self.o.max_outlinks)
        except Exception:  # a page the parser rejects has no links to follow, and that is all
            return
        self.frontier.add_many(links, item.depth + 1)


async def _crawl(options: CrawlOptions, seeds: Iterable[str], notice: Notice) -> CrawlSummary:
    import aiohttp

    from ccrawl.fetch import FetchConfig, Fetcher
    from ccrawl.fetch.dns import CachingResolver
    from ccrawl.fetch.robots import RobotsCache

    summary = CrawlSummary()
    state = StateFile(options.state)
    try:
        warc = WarcFiles(options.out, prefix=options.prefix, max_bytes=options.warc_size,
                         max_body=options.max_body) if options.out else None
        if warc is not None:
            summary.aborted_files = warc.abandon_leftovers()
            out = warc.directory
            summary.recovered_done, summary.requeued = state.recover(lambda name: (out / name).is_file())
        else:
            summary.recovered_done, summary.requeued = state.recover(lambda name: False)
        frontier = Frontier(state, FrontierConfig(
            delay=options.delay, max_depth=options.max_depth, same_host=options.same_host, shard=options.shard,
            shards=options.shards, max_active=options.max_active_hosts))
        start_fetched = frontier.fetched
        if state.get("seeds_loaded") != "1":
            for url in seeds:
                frontier.add(url, 0, seed=True)
            frontier.flush()
            if frontier.admitted == 0:
                dropped = ", ".join(f"{k} {v}" for k, v in frontier.dropped.items() if v)
                why = f"every seed was dropped: {dropped}" if dropped else "the seed list was empty"
                raise NothingMatched(f"no seed URL to crawl ({why})")
            state.put("seeds_loaded", 1)
        crawl = _Crawl(options, frontier, warc, summary, notice)
        config = FetchConfig(delay=0.0, robots=False, follow_redirects=False, concurrency=max(1, options.workers),
                             timeout=options.timeout, max_body=options.max_body, user_agent=options.user_agent,
                             resolve=dict(options.resolve))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, lambda: setattr(crawl, "stop", True))
        started = time.perf_counter()
        session = None
        try:
            if options.robots:
                resolver = CachingResolver(override=dict(options.resolve))
                session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(resolver=resolver, limit=0, family=socket.AF_INET),
                    cookie_jar=aiohttp.DummyCookieJar(), trust_env=False)
                crawl.robots = RobotsCache(session, user_agent=options.user_agent, timeout=10.0, retries=1,
                                           ttl=86400.0, unreachable_ttl=600.0, max_entries=50_000)
                crawl.agent = crawl.robots.agent
            async with Fetcher(config) as fetcher:
                await asyncio.gather(crawl.dispatch(options.workers),
                                     *(crawl.worker(fetcher) for _ in range(options.workers)))
        finally:
            if session is not None:
                await session.close()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
            crawl.pool.shutdown(wait=True)
            crawl.seal()
            frontier.flush()
        summary.seconds = time.perf_counter() - started
        summary.admitted = frontier.admitted
        summary.duplicates = frontier.dropped["seen"]
        summary.total_fetched = frontier.fetched
        counts = state.counts()
        summary.queued, summary.seen = counts["queued"], counts["seen"]
        summary.finished = not crawl.stop and counts["queued"] == 0
        summary.fetched = frontier.fetched - start_fetched
        return summary
    finally:
        state.close()


def crawl_run(options: CrawlOptions, seeds: Iterable[str], notice: Notice | None = None) -> CrawlSummary:
    """Run (or resume) the crawl in ``options.state``; seeds are read only on the first run."""
    from ccrawl.fetch import run

    options.validate()
    say = notice or (lambda msg: None)
    return run(_crawl(options, seeds, say))
