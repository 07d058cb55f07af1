"""``crawl run``: :func:`crawl_run`, and with ``--fetchers N`` N processes, each crawling the registered
domains of its partition.

A host's partition is :func:`ccrawl.crawl.frontier.place` of its registered domain, so every URL of
a site, its robots.txt and its politeness clock live in one process, and each process has its own
frontier state file (``<state>`` for partition 0, ``<state>.partN`` for the others), its own WARC
writer (file names carry the pid) and its own event loop: nothing is shared but ``--max-pages``,
a counter in shared memory that a fetch reserves before it is taken.

**Links across partitions.** A link whose domain another partition owns goes into the finder's
``outbox`` table, in the same transaction that marks the page it came from as fetched, and is sent
to the owner (:class:`LinkBatch`). The owner admits it (its seen set drops repeats), commits, and
answers :class:`LinkAck`; only then does the finder delete the row. So a kill anywhere loses no link:
an unacknowledged row is still in the finder's outbox, and a restarted partition sends its whole
outbox again.

**The end.** A partition that runs dry does not stop: links may still come. The parent probes every
partition in rounds (a round is sent once the last one is answered); each answers whether it is idle
(nothing queued, nothing in flight, no routed link its owner has not committed) and a count of what it
has done. Two consecutive rounds, all idle, counts unchanged: no link can be in transit (its finder
would not be idle until the owner committed it, and the owner would have counted it), so the
parent stops every partition. ``--max-pages`` pages done for good (the totals the partitions report,
not the shared counter, which also holds reservations in flight), a signal, or a partition that dies
stop the run the same way. A SIGKILL of the parent kills the partitions too
(``PR_SET_PDEATHSIG``); the next run waits for their locks before it touches the WARC directory.

Partition 0 runs in the parent, on the loop that also runs the probe rounds; partitions 1..N-1 are
spawned, not forked (aiohttp's threads do not survive a fork), and each pays ~0.6 s of CPU to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

from ccrawl.crawl.frontier import Frontier, Routed
from ccrawl.crawl.messages import (
    Counts,
    CrawlEvent,
    Go,
    LinkAck,
    LinkBatch,
    PartDone,
    PartFailed,
    PartMessage,
    Probe,
    Report,
    Stop,
)
from ccrawl.crawl.progress import Ticker, add, counts
from ccrawl.crawl.run import Crawl, CrawlOptions, Notice, PartHooks, crawl_loop, frontier_config, load_seeds
from ccrawl.crawl.state import StateFile, lock_file, part_path
from ccrawl.crawl.summary import CrawlSummary
from ccrawl.crawl.warc import WarcFiles
from ccrawl.errors import CcrawlError, UsageError

BATCH_LINKS = 5000
PROBE_EVERY = 0.1
"""Seconds between the starts of two probe rounds (a round costs each partition a flush and a query)."""
PUMP_EVERY = 0.05


@contextlib.contextmanager
def plan_run(options: CrawlOptions) -> Iterator[int]:
    """Hold ``<state>.run.lock`` for the run and yield its process count.

    The count is the state file's (recorded on its first run) unless none is recorded; an explicit
    ``fetchers`` that disagrees with the recorded one is a usage error, since links are routed by it.
    The shard a state file was started with is kept the same way."""
    state = Path(options.state)
    if state.parent and not state.parent.exists():
        raise UsageError(f"--state {state}: the directory {state.parent} does not exist")
    fd = lock_file(Path(f"{state}.run.lock"), wait=0.0, what=f"--state {state}")
    try:
        recorded: dict[str, str] = {}
        if state.exists():
            first = StateFile(state, wait=5.0)
            try:
                for key in ("parts", "shard", "shards", "seeds_loaded"):
                    recorded[key] = first.get(key)
            finally:
                first.close()
        parts = options.fetchers or options.auto_fetchers()
        if recorded.get("seeds_loaded") == "1":
            was = int(recorded.get("parts") or 1)
            if options.fetchers is not None and options.fetchers != was:
                raise UsageError(f"--state {state} was started with --fetchers {was} (its links are routed by "
                                 f"that count); resume it with --fetchers {was}, or leave the flag out")
            parts = was
            if recorded.get("shards") and (recorded["shard"], recorded["shards"]) != (
                    str(options.shard), str(options.shards)):
                raise UsageError(f"--state {state} was started as shard {recorded['shard']} of {recorded['shards']}; "
                                 f"resume it with --shard {recorded['shard']} --shards {recorded['shards']}")
        if recorded.get("seeds_loaded") != "1" or not recorded.get("parts"):
            _record(state, parts, options)
        yield parts
    finally:
        os.close(fd)


def _record(state: Path, parts: int, options: CrawlOptions) -> None:
    first = StateFile(state, wait=5.0)
    try:
        first.put("parts", parts)
        first.put("shard", options.shard)
        first.put("shards", options.shards)
    finally:
        first.close()


class SharedBudget:
    """``--max-pages`` across processes: a counter in shared memory, reserved before a URL is taken."""

    def __init__(self, counter: Synchronized[int], max_pages: int) -> None:
        self.counter = counter
        self.max_pages = max_pages

    def reserve(self) -> bool:
        if not self.max_pages:
            return True
        with self.counter.get_lock():
            if self.counter.value >= self.max_pages:
                return False
            self.counter.value += 1
            return True

    def refund(self) -> None:
        if self.max_pages:
            with self.counter.get_lock():
                self.counter.value -= 1


class Mailbox:
    """A partition's side of the links between partitions, and its answers to the parent."""

    def __init__(self, part: int, inboxes: list[Queue[PartMessage]], results: Queue[CrawlEvent]) -> None:
        self.part = part
        self.inboxes = inboxes
        self.results = results
        self.crawl: Crawl | None = None
        self.taken = 0

    def attach(self, crawl: Crawl) -> Awaitable[None]:
        self.crawl = crawl
        crawl.frontier.on_commit = self.send
        self.send(crawl.frontier.outbox(), {})  # a restart sends every row not yet acknowledged
        loop = asyncio.get_running_loop()
        inbox = self.inboxes[self.part]

        def read() -> None:
            while True:
                msg = inbox.get()
                try:
                    loop.call_soon_threadsafe(self.handle, msg)
                except RuntimeError:  # the loop is gone (this partition failed): nobody to tell
                    return
                if isinstance(msg, Stop):
                    return

        threading.Thread(target=read, name="crawl-mailbox", daemon=True).start()
        return self.pump()

    def send(self, rows: list[Routed], owed: dict[int, int]) -> None:
        by_owner: dict[int, list[Routed]] = {}
        for row in rows:
            by_owner.setdefault(row[1], []).append(row)
        for owner, mine in by_owner.items():
            for i in range(0, len(mine), BATCH_LINKS):
                chunk = mine[i:i + BATCH_LINKS]
                links = [(url, depth, hops, source) for _, _, url, depth, hops, source in chunk]
                self.inboxes[owner].put(LinkBatch(self.part, chunk[-1][0], links))
        for source, upto in owed.items():
            self.inboxes[source].put(LinkAck(self.part, upto))

    def handle(self, msg: PartMessage) -> None:
        crawl = self.crawl
        assert crawl is not None
        frontier = crawl.frontier
        match msg:
            case LinkBatch(source=source, upto=upto, links=links):
                for url, depth, hops, vote in links:  # vote: the linking page's registered domain
                    frontier.admit(url, depth, hops=hops, source=vote)
                frontier.took_batch(source, upto)
                crawl.activity += 1
                crawl.wake()
            case LinkAck(part=part, upto=upto):
                frontier.acked(part, upto)
            case Probe(round=round_):
                idle = frontier.in_flight == 0 and frontier.idle() and not frontier.outstanding()
                self.results.put(Report(self.part, round_, idle, crawl.activity + frontier.routed,
                                        frontier.in_flight, counts(crawl)))
            case Stop():
                crawl.halt()
            case Go():
                pass

    async def pump(self) -> None:
        """Commit what is owed often: routed links reach their owner, acks reach their finder."""
        crawl = self.crawl
        assert crawl is not None
        while not crawl.stop:
            await asyncio.sleep(PUMP_EVERY)
            if crawl.frontier.owes():
                crawl.frontier.flush()


def part_main(options: CrawlOptions, part: int, parts: int, inboxes: list[Queue[PartMessage]],
              results: Queue[CrawlEvent], counter: Synchronized[int],
              parent: int) -> None:
    """A partition process: its slice of the crawl until the parent says stop."""
    from ccrawl.fetch import run
    from ccrawl.procs import child_setup

    child_setup()
    if os.getppid() != parent:
        # the parent was killed while this process was still starting, before PR_SET_PDEATHSIG was
        # armed: nobody would ever stop this partition, and the next run may already own its state
        os._exit(1)
    for q in inboxes:
        q.cancel_join_thread()  # unread links stay in the sender's outbox: never wait on them at exit
    _warm_imports()  # while the parent prepares the state files
    if not isinstance(inboxes[part].get(), Go):
        return  # the parent stopped before the crawl began (it failed to prepare, or was told to stop)
    try:
        mailbox = Mailbox(part, inboxes, results)
        hooks = PartHooks(part, parts, SharedBudget(counter, options.max_pages), mailbox.attach)
        summary = run(crawl_loop(options, [], lambda msg: None, hooks))
        results.put(PartDone(part, summary))
    except CcrawlError as exc:
        results.put(PartFailed(part, str(exc), exc.exit_code))
    except BaseException as exc:
        results.put(PartFailed(part, f"{type(exc).__name__}: {exc}"))


def _warm_imports() -> None:
    """Import what a partition's crawl loop needs (aiohttp above all) before it is told to go."""
    import aiohttp  # noqa: F401

    import ccrawl.fetch.client
    import ccrawl.fetch.robots  # noqa: F401

    with contextlib.suppress(ImportError):
        import uvloop  # noqa: F401


def _prepare(options: CrawlOptions, seeds: Iterable[str], parts: int) -> tuple[CrawlSummary, int]:
    """Before any partition starts: wait for a killed run's processes, rename its open WARC files,
    put the URLs of those files back in their queues, load the seeds into their owners. Returns
    (aborted files, recovery and seed counts; pages fetched for good so far: the shared budget's start)."""
    states = [StateFile(part_path(Path(options.state), i), wait=5.0) for i in range(parts)]
    try:
        aborted: list[str] = []
        done = back = 0
        if options.out:
            warc = WarcFiles(options.out, prefix=options.prefix)
            aborted = warc.abandon_leftovers()
            out = warc.directory
            for s in states:  # before the budget is read: what the kill lost is not counted as fetched
                d, b = s.recover(lambda name: (out / name).is_file())
                done, back = done + d, back + b
        else:
            for s in states:
                d, b = s.recover(lambda name: False)
                done, back = done + d, back + b
        frontiers = [Frontier(s, frontier_config(options, i, parts)) for i, s in enumerate(states)]
        if states[0].get("seeds_loaded") != "1":
            load_seeds(frontiers, seeds)
        seeded = CrawlSummary(aborted_files=aborted, recovered_done=done, requeued=back,
                              admitted=sum(f.admitted for f in frontiers),
                              duplicates=sum(f.dropped["seen"] for f in frontiers))
        return seeded, sum(f.fetched for f in frontiers)
    finally:
        for s in states:
            s.close()


class _Rounds:
    """The parent's probe rounds and the rule that ends a run."""

    def __init__(self, parts: int) -> None:
        self.parts = parts
        self.round = 0
        self.answers: dict[int, Report] = {}
        self.last: dict[int, Report] | None = None
        self.sent_at = 0.0

    def take(self, report: Report) -> None:
        if report.round == self.round:
            self.answers[report.part] = report

    def complete(self) -> bool:
        return len(self.answers) == self.parts

    def quiet(self) -> bool:
        """This round and the last: every partition idle, and none did anything in between."""
        if not self.complete() or self.last is None:
            return False
        return all(r.idle and self.last[p].idle and r.activity == self.last[p].activity
                   for p, r in self.answers.items())

    def spent(self, max_pages: int) -> bool:
        """Every partition answered and their pages done for good (each one's ``total_fetched``, this
        run's and the runs' before) reach ``max_pages``. Not the shared counter: it also holds
        reservations in flight, and a dispatcher that reserves and then finds nothing ready refunds
        its reservation, so the counter can read ``max_pages`` one page short of the end. A done page
        keeps its reservation for good, so once the reported totals reach ``max_pages`` no partition
        can reserve again and nothing is in flight anywhere."""
        if not self.complete():
            return False
        return sum(r.counts.get("total_fetched", 0) for r in self.answers.values()) >= max_pages

    def next(self, inboxes: list[Queue[PartMessage]]) -> None:
        if self.answers:
            self.last = self.answers
        self.answers = {}
        self.round += 1
        self.sent_at = time.monotonic()
        for q in inboxes:
            q.put(Probe(self.round))


def run_parts(options: CrawlOptions, seeds: Iterable[str], notice: Notice, parts: int) -> CrawlSummary:
    """The parent of a multi-process crawl: start partitions 1..N-1 (their interpreters start while
    this one prepares), prepare, tell them to go, crawl partition 0 on its own loop (one interpreter
    fewer to start), decide the end, sum up."""
    from ccrawl.fetch import run

    ctx = mp.get_context("spawn")
    inboxes = [ctx.Queue() for _ in range(parts)]
    results = ctx.Queue()
    counter = ctx.Value(ctypes.c_longlong, 0)
    procs = [ctx.Process(target=part_main, args=(options, i, parts, inboxes, results, counter, os.getpid()),
                         name=f"ccrawl-crawl-{i}") for i in range(1, parts)]
    lead = _Lead(options, parts, inboxes, results, counter, procs)
    try:
        for p in procs:
            p.start()
        summary, fetched_before = _prepare(options, seeds, parts)
        counter.value = fetched_before
        for q in inboxes[1:]:
            q.put(Go())
        run(lead.run(notice))
        for p in procs:
            p.join(timeout=30)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        for q in [*inboxes, results]:  # probes nobody read must not keep this process (a library caller) waiting
            q.cancel_join_thread()
            q.close()
    if lead.failed:
        first = lead.failed[0]
        error = CcrawlError(f"crawl run: {first.message} (partition {first.part} of {parts}); "
                            "rerun the same command to resume")
        error.exit_code = first.exit_code
        raise error
    for part in sorted(lead.done):
        summary.add(lead.done[part].summary)
    if lead.ticker is not None:
        # the summed summaries are exact: the partitions' last reports may be a probe behind
        last = lead.counts()
        lead.ticker.tick({**last, "fetched": summary.fetched, "total_fetched": summary.total_fetched,
                          "archived": summary.archived, "failed": summary.failed,
                          "robots_skipped": summary.robots_skipped, "errors": summary.errors,
                          "queued": summary.queued, "in_flight": 0}, final=True)
        lead.ticker.close()
    # like a one-process run's: the fetch loop's time (the longest partition's), without process start-up
    summary.seconds = max(d.summary.seconds for d in lead.done.values())
    summary.fetchers = parts
    summary.finished = lead.reason == "finished" and summary.queued == 0
    return summary


class _Lead:
    """The parent's loop: partition 0's crawl, and beside it the probe rounds that decide the end."""

    def __init__(self, options: CrawlOptions, parts: int, inboxes: list[Queue[PartMessage]],
                 results: Queue[CrawlEvent], counter: Synchronized[int],
                 procs: Sequence[BaseProcess]) -> None:
        self.options = options
        self.parts = parts
        self.inboxes = inboxes
        self.results = results
        self.counter = counter
        self.procs = procs
        self.done: dict[int, PartDone] = {}
        self.failed: list[PartFailed] = []
        self.reason = ""
        self.signalled = False
        self.rounds = _Rounds(parts)
        self.part_counts: dict[int, Counts] = {}
        """Each partition's latest progress counters (from its reports; partition 0's are read directly)."""
        self.own: Mailbox | None = None
        self.ticker = Ticker(options.progress, options.max_pages) if options.progress != "none" else None

    def absorb(self, msg: CrawlEvent | None) -> None:
        match msg:
            case Report(part=part, counts=part_counts):
                self.rounds.take(msg)
                if part_counts:
                    self.part_counts[part] = part_counts
            case PartDone(part=part):
                self.done[part] = msg
            case PartFailed():
                self.failed.append(msg)

    def _ended(self, part: int) -> bool:
        return part in self.done or any(f.part == part for f in self.failed)

    def _get(self, timeout: float) -> CrawlEvent | None:
        try:
            event: CrawlEvent = self.results.get(timeout=timeout)
        except queue.Empty:
            return None
        return event

    async def run(self, notice: Notice) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, lambda: setattr(self, "signalled", True))
        ticking = loop.create_task(self._tick()) if self.ticker is not None else None
        try:
            await asyncio.gather(self._own_part(notice), self._coordinate())
        finally:
            if ticking is not None:
                ticking.cancel()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)

    def counts(self) -> Counts:
        """The progress counters of every partition, summed."""
        total = Counts()
        parts = dict(self.part_counts)
        if self.own is not None and self.own.crawl is not None:
            parts[0] = counts(self.own.crawl)
        for c in parts.values():
            add(total, c)
        return total

    async def _tick(self) -> None:
        assert self.ticker is not None
        while True:
            self.ticker.tick(self.counts())
            await asyncio.sleep(self.options.tick_seconds)

    async def _own_part(self, notice: Notice) -> None:
        mailbox = Mailbox(0, self.inboxes, self.results)
        self.own = mailbox
        hooks = PartHooks(0, self.parts, SharedBudget(self.counter, self.options.max_pages), mailbox.attach)
        try:
            self.done[0] = PartDone(0, await crawl_loop(self.options, [], notice, hooks))
        except CcrawlError as exc:
            self.failed.append(PartFailed(0, str(exc), exc.exit_code))
        except Exception as exc:
            self.failed.append(PartFailed(0, f"{type(exc).__name__}: {exc}"))

    async def _coordinate(self) -> None:
        loop = asyncio.get_running_loop()
        rounds = self.rounds
        rounds.next(self.inboxes)
        while not all(self._ended(i) for i in range(self.parts)):
            self.absorb(await loop.run_in_executor(None, self._get, PROBE_EVERY / 2))
            for i, p in enumerate(self.procs, start=1):
                if p.exitcode is not None and not self._ended(i):
                    while (late := await loop.run_in_executor(None, self._get, 0.5)) is not None:
                        self.absorb(late)  # its last words may still be in the pipe
                    if not self._ended(i):
                        self.failed.append(PartFailed(i, f"partition {i} died (exit code {p.exitcode})"))
            if self.reason:
                continue
            if self.signalled:
                self.reason = "signal"
            elif self.failed:
                self.reason = "failed"
            elif rounds.complete():
                if rounds.quiet():
                    self.reason = "finished"
                elif self.options.max_pages and rounds.spent(self.options.max_pages):
                    self.reason = "max-pages"
                elif time.monotonic() - rounds.sent_at >= PROBE_EVERY:
                    rounds.next(self.inboxes)
            if self.reason:
                for q in self.inboxes:
                    q.put(Stop(self.reason))


def crawl_run(options: CrawlOptions, seeds: Iterable[str], notice: Notice | None = None) -> CrawlSummary:
    """Run (or resume) the crawl in ``options.state``; seeds are read only on the first run.

    With more than one fetch process (``options.fetchers``, or the count the state was started with)
    the run is :func:`run_parts`; with one it runs in this process, on this thread's loop."""
    from ccrawl.fetch import run

    options.validate()
    say = notice or (lambda msg: None)
    with plan_run(options) as parts:
        if parts > 1:
            return run_parts(options, seeds, say, parts)
        return run(crawl_loop(options, seeds, say))
