"""``crawl run``: workers on one event loop take URLs from the frontier, fetch, archive, follow links.

A worker takes the earliest ready host's next URL, asks robots.txt (once per host, cached, RFC
9309 via :class:`ccrawl.fetch.robots.RobotsCache`), fetches it with :class:`ccrawl.fetch.Fetcher`
(redirects are not followed inline: a 3xx is archived and its target queued like a link, one level
deeper and one redirect hop further along its chain, so the target's host gets its own robots.txt and
clock), writes the exchange to WARC, queues the page's outlinks one level deeper up to ``max_depth``,
and hands the host back with its next allowed time.

**Redirect chains.** A queued URL carries the redirects followed to reach it (``hops``: 0 for a seed
or a link, its redirect's plus one for a redirect target, across partitions too). A 3xx whose target
would be hop ``max_redirects + 1`` is not archived: it is a failed fetch, ``too_many_redirects``,
the same cap and the same reason as ``crawl fetch``.

Only the frontier and the WARC writer hold state, and both are touched without an ``await`` in
between (write, then ``done``), so a seal never splits a page from its bookkeeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ccrawl.crawl.frontier import Frontier, FrontierConfig, Item, owners
from ccrawl.crawl.links import page_links, redirect_target
from ccrawl.crawl.state import StateFile, part_path
from ccrawl.crawl.summary import CrawlSummary
from ccrawl.crawl.warc import Encoded, WarcFiles, encode_exchange, stored_body
from ccrawl.errors import NothingMatched, UsageError
from ccrawl.fetch.addresses import REFUSED
from ccrawl.fetch.classify import BlockedAddress
from ccrawl.fetch.config import DEFAULT_USER_AGENT
from ccrawl.fetch.result import FetchResult

if TYPE_CHECKING:
    from ccrawl.crawl.progress import Ticker
    from ccrawl.fetch import Fetcher
    from ccrawl.fetch.robots import RobotsCache

Notice = Callable[[str], None]

MAX_REDIRECTS = 100
"""The highest ``--max-redirects`` (browsers stop at 20)."""
BLOCKED_ADDRESS = "blocked_address"
"""The error a URL on a loopback, private or link-local address is counted under, unless allowed."""
#: ``--max-depth`` when none is given: a seed, the target of its redirect (http to https, to www: one
#: level deeper) and links two levels on. wget -r's default is 5 but stays on the seed's host; this
#: crawl spans hosts unless ``--same-host``, so fewer levels already reach far (docs/crawl.md).
DEFAULT_MAX_DEPTH = 3

TOO_MANY_REDIRECTS = "too_many_redirects"
"""The error a 3xx past ``--max-redirects`` is counted under (``CrawlSummary.errors``)."""


@dataclass(slots=True)
class CrawlOptions:
    """Every limit of a crawl run (the CLI passes its flags through as these)."""

    state: Path
    out: Path | None = None
    delay: float = 1.0
    max_depth: int = DEFAULT_MAX_DEPTH
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
    max_redirects: int = 5
    """Redirects followed per chain; a 3xx past them is a failed fetch (``too_many_redirects``)."""
    max_crawl_delay: float = 60.0
    user_agent: str = DEFAULT_USER_AGENT
    resolve: Mapping[str, str] = field(default_factory=dict)
    allow_private_addresses: bool = False
    """Fetch (pages and robots.txt) from loopback, private and link-local addresses too; names pinned
    by ``resolve`` are fetched either way (:mod:`ccrawl.fetch.addresses`)."""
    max_active_hosts: int = 4096
    host_budget: int = 5000
    """Trap budget: URLs a host may have admitted per registered domain linking to it, plus one (a
    seed's vote); 0: no budgets (:meth:`ccrawl.crawl.frontier.Frontier._admit_batch`)."""
    domain_budget: int = 20000
    """The same for all the hosts of a registered domain together."""
    fetchers: int | None = None
    """Fetch processes, each crawling its partition of the registered domains (:mod:`ccrawl.crawl.parts`);
    None: the count the state file was started with, else one per core up to one per 16 workers."""
    progress: str = "none"
    """``text`` (a live line on a terminal, a line per tick elsewhere), ``json`` (one object per tick) or ``none``."""
    tick_seconds: float = 2.0
    """Seconds between progress ticks."""
    encode_threads: int | None = None
    """Threads per fetch process that compress and digest WARC records beside its event loop; 0: on
    the loop itself. None: 0 with ISA-L (handing a record to a thread costs about what encoding it
    does, and the thread's GIL round trips stall the loop), else (zlib) one per core up to 4."""

    def validate(self) -> CrawlOptions:
        if self.shards < 1:
            raise UsageError(f"--shards must be at least 1 (got {self.shards})")
        if not 0 <= self.shard < self.shards:
            raise UsageError(f"--shard {self.shard} is outside 0..{self.shards - 1} (--shards {self.shards})")
        if self.delay < 0:
            raise UsageError("--delay must be >= 0 (0 turns spacing off)")
        if self.host_budget < 0 or self.domain_budget < 0:
            raise UsageError("the trap budgets must be >= 0 (0 turns them off)")
        if self.max_depth < 0 or self.max_pages < 0:
            raise UsageError("--max-depth and --max-pages must be >= 0")
        if not 0 <= self.max_redirects <= MAX_REDIRECTS:
            raise UsageError(f"--max-redirects must be in 0..{MAX_REDIRECTS} (got {self.max_redirects})")
        if self.workers < 1:
            raise UsageError("-j/--workers must be at least 1")
        if self.warc_size < 1024:
            raise UsageError("--warc-size must be at least 1 KB")
        if self.fetchers is not None and not 1 <= self.fetchers <= 256:
            raise UsageError(f"--fetchers must be in 1..256 (got {self.fetchers})")
        if self.progress not in ("text", "json", "none"):
            raise UsageError(f"--progress must be one of text, json, none (got {self.progress!r})")
        if self.tick_seconds <= 0:
            raise UsageError("tick_seconds must be > 0")
        if self.encode_threads is not None and not 0 <= self.encode_threads <= 64:
            raise UsageError(f"encode_threads must be in 0..64 (got {self.encode_threads})")
        return self

    def auto_fetchers(self) -> int:
        """One fetch process per core, at most one per 16 workers (a process needs work to be worth its start)."""
        from ccrawl.procs import cores

        return max(1, min(cores(), -(-self.workers // 16)))

    def auto_encode_threads(self) -> int:
        """WARC encoding threads per fetch process: none with ISA-L, whose compression is cheaper than
        a hand-over to a thread (bench/README.md, "Discovery crawl worker scaling, retaken"); with
        zlib, whose compression is most of a record's cost, one per core up to 4."""
        if self.encode_threads is not None:
            return self.encode_threads
        from ccrawl.crawl.warc import FAST_MEMBERS
        from ccrawl.procs import cores

        return 0 if FAST_MEMBERS else min(4, cores())


def _header(result: FetchResult, name: str) -> str:
    low = name.lower()
    for n, v in result.resp_headers:
        if n.lower() == low:
            return v
    return ""


def _encode_pool(threads: int) -> Executor | None:
    """Threads that compress and digest WARC records (ISA-L, zlib and hashlib let go of the GIL), or
    None: the loop encodes. A thread pays for each record a hand-over and several GIL round trips
    (twice the CPU of encoding on the loop, bench/README.md "Discovery crawl worker scaling,
    retaken"), so it only pays when compression dominates (zlib). A process pool measured the same
    as threads (bench/README.md, "Discovery crawl")."""
    if threads <= 0:
        return None
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="warc-encode")


class Budget(Protocol):
    """``--max-pages`` over every process of a run: a fetch reserves its page before it is taken."""

    def reserve(self) -> bool: ...

    def refund(self) -> None: ...


class _LocalBudget:
    def __init__(self, frontier: Frontier, max_pages: int) -> None:
        self.frontier = frontier
        self.max_pages = max_pages

    def reserve(self) -> bool:
        return not self.max_pages or self.frontier.fetched + self.frontier.in_flight < self.max_pages

    def refund(self) -> None:
        pass


class Crawl:
    def __init__(self, options: CrawlOptions, frontier: Frontier, warc: WarcFiles | None, summary: CrawlSummary,
                 notice: Notice, *, budget: Budget | None = None, linked: bool = False) -> None:
        self.o = options
        self.frontier = frontier
        self.warc = warc
        self.summary = summary
        self.notice = notice
        self.stop = False
        self.linked = linked
        """One partition of several: running dry is not the end (links may come), the parent says when."""
        self.budget: Budget = budget or _LocalBudget(frontier, options.max_pages)
        self.robots: RobotsCache | None = None
        self.agent = ""
        self.activity = 0
        self.body_bytes = 0
        """Body bytes fetched this run (progress)."""
        self.fetched_start = frontier.fetched
        self.queued_start = 0
        """URLs queued when the run started (progress counts the rest in memory)."""
        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._idle = 0
        self.pool = _encode_pool(options.auto_encode_threads()) if warc is not None else None

    def wake(self) -> None:
        """New work (links from another partition) or a stop: the dispatcher looks again."""
        self._changed.set()

    def halt(self) -> None:
        self.stop = True
        self._changed.set()

    def seal(self) -> None:
        if self.warc is None:
            return
        self.frontier.flush()
        name = self.warc.seal()
        if name:
            self.frontier.sealed(name)
            self.summary.warc_files.append(name)

    async def _wait(self, timeout: float) -> None:
        """Until a fetch ends (or new work or a stop comes), or ``timeout`` seconds. A timer handle, not
        ``asyncio.wait_for``: with more workers than ready hosts the dispatcher waits once per page, and
        wait_for builds a task and a timeout each time."""
        self._changed.clear()
        timer = asyncio.get_running_loop().call_later(timeout, self._changed.set)
        try:
            await self._changed.wait()
        finally:
            timer.cancel()

    async def dispatch(self, workers: int) -> None:
        """The one task that asks the frontier: hands a ready URL to an idle worker, else sleeps until
        the next host's clock or until a fetch ends. Idle workers wait on the queue and cost nothing,
        so 256 workers over 200 hosts do not spin asking for work that is not there."""
        frontier = self.frontier
        self._idle = workers
        try:
            while not self.stop:
                if self._idle == 0:
                    await self._changed.wait()
                    self._changed.clear()
                    continue
                if not self.budget.reserve():
                    if not self.linked:
                        break
                    await self._wait(0.25)  # the parent stops the run once every partition is drained
                    continue
                got = frontier.take()
                if isinstance(got, Item):
                    self._idle -= 1
                    self._queue.put_nowait(got)
                    continue
                self.budget.refund()
                if got is None:
                    if not self.linked:
                        break
                    await self._wait(0.25)
                    continue
                await self._wait(got)
        finally:
            for _ in range(workers):
                self._queue.put_nowait(None)

    async def worker(self, fetcher: Fetcher) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            try:
                await self.visit(fetcher, item)
            finally:
                self._idle += 1
                self.activity += 1
                self._changed.set()

    async def visit(self, fetcher: Fetcher, item: Item) -> None:
        frontier = self.frontier
        started = time.time()
        crawl_delay = 0.0
        try:
            if self.robots is not None:
                verdict = await self.robots.verdict(item.url)
                if isinstance(verdict.failure, BlockedAddress):  # the host is refused: so is its page
                    self.summary.refused = self.summary.refused or str(verdict.failure)
                    self.summary.fetched += 1
                    self.summary.failed += 1
                    self.summary.errors[BLOCKED_ADDRESS] = self.summary.errors.get(BLOCKED_ADDRESS, 0) + 1
                    frontier.done(item, started=time.time(), file=None)
                    return
                crawl_delay = verdict.crawl_delay(self.agent)
                if not verdict.can_fetch(item.url, self.agent) or crawl_delay > self.o.max_crawl_delay:
                    self.summary.robots_skipped += 1
                    self.summary.fetched += 1
                    frontier.done(item, started=time.time(), file=None, crawl_delay=min(crawl_delay, 3600.0))
                    return
                started = time.time()
            result = await fetcher.fetch(item.url)
            finished = time.time()
            self.body_bytes += len(result.body or b"")
            encoded = None
            cut = self._chain_too_long(item, result)
            if cut:
                result.error = TOO_MANY_REDIRECTS
                result.error_detail = f"more than {self.o.max_redirects} redirects (--max-redirects)"
            elif result.status and self.warc is not None:
                info_id = self.warc.warcinfo_id()
                if self.pool is None:  # on the loop: no await from here to append(), the file cannot change
                    encoded = self.warc.encode(result, info_id)
                else:  # in a thread (ISA-L, zlib and hashlib let go of the GIL); append() re-encodes after a seal
                    request, response = await asyncio.get_running_loop().run_in_executor(
                        self.pool, encode_exchange, result, info_id, self.o.max_body)
                    encoded = Encoded(result, info_id, request, response)
        except BaseException:
            frontier.done(item, started=started, file=None, crawl_delay=crawl_delay, finished=time.time())
            raise
        # From here to done(): no await, so no seal can come between the record and its bookkeeping.
        self.summary.fetched += 1
        file: str | None = None
        if result.status and not cut:
            if self.warc is not None and encoded is not None:
                file = self.warc.append(encoded)
                self.summary.archived += 1
            self.follow(item, result)
        else:
            self.summary.failed += 1
            error = result.error
            if result.error_detail.startswith(REFUSED):
                error = BLOCKED_ADDRESS
                self.summary.refused = self.summary.refused or result.error_detail
            self.summary.errors[error] = self.summary.errors.get(error, 0) + 1
        frontier.done(item, started=started, file=file, crawl_delay=crawl_delay, finished=finished)
        if self.warc is not None and self.warc.full():
            self.seal()

    def _chain_too_long(self, item: Item, result: FetchResult) -> bool:
        """A redirect whose target would be one hop past ``max_redirects`` on this chain."""
        return (300 <= result.status < 400 and item.hops >= self.o.max_redirects
                and bool(redirect_target(result.url, _header(result, "Location"))))

    def follow(self, item: Item, result: FetchResult) -> None:
        if 300 <= result.status < 400:
            target = redirect_target(result.url, _header(result, "Location"))
            if target:  # one level deeper, one hop further along the chain (visit() stopped a chain too long)
                self.frontier.add(target, item.depth + 1, hops=item.hops + 1)
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
        self.frontier.add_many(links, item.depth + 1, source_host=item.host)


def load_seeds(frontiers: list[Frontier], seeds: Iterable[str]) -> None:
    """Admit the seeds into the partition that owns each (one frontier: all of them), once per state.

    Raises :class:`NothingMatched` when no seed was admitted anywhere."""
    cfg = frontiers[0].config
    batch = [f.config.flush_every for f in frontiers]
    for f in frontiers:  # big batches: a host's seeds share queue segments (compressed together)
        f.config.flush_every = max(f.config.flush_every, 200_000)
    chunk = 100_000
    it = iter(seeds)
    while True:
        urls = list(itertools.islice(it, chunk))
        if not urls:
            break
        if cfg.parts == 1:
            frontiers[0].add_many(urls, 0, seed=True)
            continue
        owner = owners(urls, cfg.shards, cfg.parts)
        bad = [urls[i] for i in np.flatnonzero(owner < 0).tolist()]
        frontiers[0].add_many(bad, 0, seed=True)  # a bad URL is counted as dropped by partition 0
        for part, frontier in enumerate(frontiers):
            mine = np.flatnonzero(owner == part).tolist()
            if mine:
                frontier.add_many([urls[i] for i in mine], 0, seed=True)
    for frontier, every in zip(frontiers, batch, strict=True):
        frontier.flush()
        frontier.config.flush_every = every
    if sum(f.admitted for f in frontiers) == 0:
        dropped: dict[str, int] = {}
        for f in frontiers:
            for k, v in f.dropped.items():
                dropped[k] = dropped.get(k, 0) + v
        why = ", ".join(f"{k} {v}" for k, v in dropped.items() if v)
        why = f"every seed was dropped: {why}" if why else "the seed list was empty"
        raise NothingMatched(f"no seed URL to crawl ({why})")
    for frontier in frontiers:
        frontier.state.put("seeds_loaded", 1)


def frontier_config(options: CrawlOptions, part: int = 0, parts: int = 1) -> FrontierConfig:
    return FrontierConfig(delay=options.delay, max_depth=options.max_depth, same_host=options.same_host,
                          shard=options.shard, shards=options.shards, part=part, parts=parts,
                          max_active=options.max_active_hosts, host_budget=options.host_budget,
                          domain_budget=options.domain_budget)


@dataclass(slots=True)
class PartHooks:
    """What a partition process adds to a crawl (built by :mod:`ccrawl.crawl.parts`)."""

    part: int
    parts: int
    budget: Budget
    attach: Callable[[Crawl], Awaitable[None]]
    """Called with the crawl once its frontier is open; returns an awaitable that ends when the crawl stops."""


async def crawl_loop(options: CrawlOptions, seeds: Iterable[str], notice: Notice,
                 hooks: PartHooks | None = None) -> CrawlSummary:
    import aiohttp

    from ccrawl.fetch import FetchConfig, Fetcher
    from ccrawl.fetch.client import TimedConnector
    from ccrawl.fetch.dns import CachingResolver
    from ccrawl.fetch.robots import RobotsCache

    summary = CrawlSummary()
    part, parts = (hooks.part, hooks.parts) if hooks is not None else (0, 1)
    # a partition waits for its lock: the processes of a killed run die a moment after their parent
    state = StateFile(part_path(options.state, part), wait=5.0 if hooks is not None else 0.0)
    ticker: Ticker | None = None
    try:
        warc = WarcFiles(options.out, prefix=options.prefix, max_bytes=options.warc_size,
                         max_body=options.max_body) if options.out else None
        if warc is not None:
            if hooks is None:  # with partitions the parent did it, once, before any partition opened a file
                summary.aborted_files = warc.abandon_leftovers()
            out = warc.directory
            summary.recovered_done, summary.requeued = state.recover(lambda name: (out / name).is_file())
        else:
            summary.recovered_done, summary.requeued = state.recover(lambda name: False)
        frontier = Frontier(state, frontier_config(options, part, parts))
        start_fetched = frontier.fetched
        if hooks is None and state.get("seeds_loaded") != "1":
            load_seeds([frontier], seeds)
        workers = max(1, -(-options.workers // parts))
        crawl = Crawl(options, frontier, warc, summary, notice, budget=hooks.budget if hooks else None,
                       linked=hooks is not None)
        crawl.fetched_start = start_fetched
        crawl.queued_start = state.counts()["queued"]
        if hooks is None and options.progress != "none":
            from ccrawl.crawl.progress import Ticker

            ticker = Ticker(options.progress, options.max_pages)
        config = FetchConfig(delay=0.0, robots=False, follow_redirects=False, concurrency=workers,
                             timeout=options.timeout, max_body=options.max_body, user_agent=options.user_agent,
                             resolve=dict(options.resolve), allow_private_addresses=options.allow_private_addresses)
        loop = asyncio.get_running_loop()
        if hooks is None:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, crawl.halt)
        started = time.perf_counter()
        session = None
        ticking: asyncio.Task[None] | None = None
        watching: asyncio.Task[None] | None = None
        try:
            if options.robots:
                # the pages' rules for robots.txt too: names resolving to private space, and IP literals
                allow = options.allow_private_addresses
                resolver = CachingResolver(override=dict(options.resolve), allow_private=allow)
                session = aiohttp.ClientSession(
                    connector=TimedConnector(allow_private=allow, resolver=resolver, limit=0, family=socket.AF_INET),
                    cookie_jar=aiohttp.DummyCookieJar(), trust_env=False)
                crawl.robots = RobotsCache(session, user_agent=options.user_agent, timeout=10.0, retries=1,
                                           ttl=86400.0, unreachable_ttl=600.0, max_entries=50_000)
                crawl.agent = crawl.robots.agent
            extra = [hooks.attach(crawl)] if hooks is not None else []
            ticking = loop.create_task(_tick(ticker, crawl)) if ticker is not None else None
            watching = loop.create_task(_watch_merges(state, crawl))
            async with Fetcher(config) as fetcher:
                await asyncio.gather(crawl.dispatch(workers), *(crawl.worker(fetcher) for _ in range(workers)),
                                     *extra)
        finally:
            if ticking is not None:
                ticking.cancel()
            if watching is not None:
                watching.cancel()
            if session is not None:
                await session.close()
            if hooks is None:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    with contextlib.suppress(NotImplementedError, RuntimeError):
                        loop.remove_signal_handler(sig)
            if crawl.pool is not None:
                crawl.pool.shutdown(wait=True)
            crawl.seal()
            frontier.flush()
        summary.seconds = time.perf_counter() - started
        summary.admitted = frontier.admitted
        summary.duplicates = frontier.dropped["seen"]
        summary.over_budget = frontier.dropped["trap"]
        summary.total_fetched = frontier.fetched
        counts = state.counts()
        summary.queued, summary.seen = counts["queued"] + counts["outbox"], counts["seen"]
        summary.finished = not crawl.stop and counts["queued"] == 0
        summary.fetched = frontier.fetched - start_fetched
        if ticker is not None:
            from ccrawl.crawl import progress

            ticker.tick({**progress.counts(crawl), "queued": summary.queued}, final=True)
        return summary
    finally:
        if ticker is not None:
            ticker.close()
        state.close()


async def _watch_merges(state: StateFile, crawl: Crawl) -> None:
    """Say once, in one line, when a seen-set merge has made no progress for its stall deadline (the crawl
    goes on: checks read the merge's inputs; closing the state at the end names it again and exits 1)."""
    every = max(0.2, min(5.0, min(state.seen.stall_s, state.edges.stall_s) / 4))
    said: set[str] = set()
    while True:
        await asyncio.sleep(every)
        stuck = state.stalled()
        if stuck is not None:
            merge = stuck.split(" has made no progress", 1)[0]
            if merge not in said:
                said.add(merge)
                crawl.notice(f"crawl run: {stuck}")


async def _tick(ticker: Ticker, crawl: Crawl) -> None:
    """A tick at once (the run's start), then one every ``tick_seconds``."""
    from ccrawl.crawl.progress import counts

    while True:
        ticker.tick(counts(crawl))
        await asyncio.sleep(crawl.o.tick_seconds)
