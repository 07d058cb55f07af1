"""The recrawl pipeline's parent: starts the processes, feeds them, seals, checkpoints and stops.

::

    feeder ─► fetch ×F ─► (ring) ─► extract ×E ─► (ring) ─► writer ×W ─► shards
      ▲                                                        │
      └──── credits, stats ◄── events queue ◄── durable rows, want_seal, drained

Bodies travel through shared-memory rings (:mod:`ccrawl.recrawl.ring`), one per consumer,
sized from ``--queue-mb`` split across the stages and their consumers. Work items travel on
a pipe per fetch process, bounded by credits the process returns as results leave it.

The parent is the only process that renames a sealed file, and it does so only after the
checkpoint covering the file's rows is on disk, so a kill anywhere leaves a state the next
start repairs exactly (:mod:`ccrawl.recrawl.recovery`).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import TYPE_CHECKING

from ccrawl.errors import CcrawlError, TemporaryFailure, UsageError
from ccrawl.progress import Moved, Window, eta_seconds, human_bytes, percent
from ccrawl.recrawl.checkpoint import Checkpoint, ProgressTracker, save_checkpoint
from ccrawl.recrawl.diskfail import crash_error, release_rings
from ccrawl.recrawl.feeder import FeedCounts, Routed
from ccrawl.recrawl.messages import (
    ITEM_OVERHEAD,
    Crash,
    Credit,
    Drained,
    DropWaiting,
    DurableRows,
    Event,
    Exit,
    ExtractReport,
    FetchCommand,
    FetchReport,
    Ready,
    Seal,
    StopFeed,
    WantSeal,
    WorkBatch,
    WorkItem,
    WriterReport,
)
from ccrawl.recrawl.params import MB, RunParams
from ccrawl.recrawl.report import summarize
from ccrawl.recrawl.ring import Ring, StageCounter, record_size
from ccrawl.recrawl.sinks import Durable, finalize
from ccrawl.recrawl.stats import ExtractStats, FetchProcessStats, WriterStats, merged
from ccrawl.recrawl.stopping import announce_stop
from ccrawl.recrawl.summary import RunSummary
from ccrawl.recrawl.telemetry import Progress, Telemetry

if TYPE_CHECKING:
    from multiprocessing.queues import Queue as MPQueue

    from ccrawl.fetch.config import FetchConfig
    from ccrawl.fetch.stats import FailureNote, RecentFetches
    from ccrawl.profiling.session import ProfileSession

#: Room for one row's metadata (headers JSON, Markdown and text travel in it after extraction).
_META_ROOM = 4 * MB


class Outlet:
    """The parent's end of a child's pipe, written by a thread of its own.

    A child that stops reading (SIGSTOPped, wedged) fills its pipe; a send from the parent's loop
    would then block it for good, and with it every check that would have named the child. Here
    only this thread waits; the loop goes on, sees the silence and ends the run (issue #37).
    A send that fails (the child is gone) is kept in :attr:`error` for the loop to report.
    """

    def __init__(self, conn: Connection, name: str) -> None:
        self.conn = conn
        self.name = name
        self.error: BaseException | None = None
        self.failed_at = 0.0
        self._queue: queue.SimpleQueue[FetchCommand | None] = queue.SimpleQueue()  # None: close
        self._thread = threading.Thread(target=self._run, name=f"send-{name}", daemon=True)
        self._thread.start()

    def send(self, msg: FetchCommand) -> None:
        self._queue.put(msg)

    def _run(self) -> None:
        while True:
            msg = self._queue.get()
            if msg is None:
                return
            try:
                self.conn.send(msg)
            except (OSError, ValueError) as exc:
                self.error = exc
                return

    def close(self) -> None:
        self._queue.put(None)


@dataclass
class _Child:
    """What the parent knows of one child's liveness (see :meth:`Pipeline._check_alive`)."""

    role: str
    idx: int
    proc: BaseProcess
    launched: float = 0.0
    ready: bool = False
    heard: float = 0.0
    """When the child last sent anything (monotonic)."""
    finished: bool = False
    """It sent its last message: it may exit now."""
    exit_seen: float = 0.0
    """When it was first seen gone with exit code 0 before finishing (its last events may still be queued)."""

    @property
    def label(self) -> str:
        kind = {"fetch": "fetch process", "extract": "extract process", "writer": "writer"}[self.role]
        return f"{kind} {self.idx} (pid {self.proc.pid})"


@dataclass
class _Procs:
    fetch: list[BaseProcess] = field(default_factory=list)
    extract: list[BaseProcess] = field(default_factory=list)
    writer: list[BaseProcess] = field(default_factory=list)
    inboxes: list[Outlet] = field(default_factory=list)
    controls: list[Outlet] = field(default_factory=list)
    rings: list[Ring] = field(default_factory=list)
    child_ends: list[Connection] = field(default_factory=list)
    """The children's ends of their pipes: closed here once they started, so a dead child is an EOF."""

    def all(self) -> list[BaseProcess]:
        return self.fetch + self.extract + self.writer

    def kill(self) -> None:
        for p in self.all():
            if p.is_alive():
                p.kill()
        for out in {id(o): o for o in self.inboxes + self.controls}.values():
            out.close()


#: How long a child gone with exit code 0 before its last message may still have events in the
#: queue before it counts as lost.
EXIT_GRACE_S = 2.0
#: The parent's loop checks several times a second; a longer gap means the parent was not running,
#: and every child's deadline starts again.
PARENT_GAP_S = 5.0

#: The work items read ahead of the checkpoint's low-water mark (counted at :attr:`WorkItem.cost`
#: bytes each) may take this share of ``--queue-mb`` on top of the rings' bound.
READ_AHEAD_SHARE = 0.25


def read_ahead_bytes(params: RunParams) -> int:
    """Bytes of work items the feeder may have issued and not yet had back from the fetch processes.

    Never below twice the workers' worth of items (a slot must always find work).
    """
    return max(int(params.queue_mb * MB * READ_AHEAD_SHARE), 2 * params.workers * (ITEM_OVERHEAD + 256))


#: A row group of a fetch process that writes its own rows holds at most this much payload.
GROUP_BYTES = 32 * MB


def fetch_group_bytes(params: RunParams) -> int:
    """Payload bytes of a row group in a fetch process that writes its own rows.

    Each such process holds at most three groups (one filling, one being written, and a seal's
    rest queued behind it), so the groups of all of them fit ``--queue-mb``; never below one
    largest row, never above :data:`GROUP_BYTES`.
    """
    share = int(params.queue_mb * MB) // (3 * (params.fetchers or 1))
    return max(min(share, GROUP_BYTES), record_size(_META_ROOM, params.max_body))


def ring_sizes(params: RunParams) -> tuple[int, int, int]:
    """(bytes per extract-stage ring, bytes per writer-stage ring, total bound).

    The bound is split across the stages and then across each stage's consumers, and raised
    where needed so every ring holds at least one largest possible row.
    """
    stages = 2 if params.extracting else 1
    writers = params.writers or 1  # filled by RunParams.validate()
    total = int(params.queue_mb * MB)
    floor = record_size(_META_ROOM, params.max_body)
    x_ring = max(total // stages // (params.extractors or 1), floor) if params.extracting else 0
    w_ring = max(total // stages // writers, floor)
    bound = x_ring * (params.extractors or 1) * (1 if params.extracting else 0) + w_ring * writers
    return x_ring, w_ring, bound


class Pipeline:
    """One run of the process pipeline over a prepared feed."""

    def __init__(
        self,
        params: RunParams,
        *,
        tracker: ProgressTracker,
        feed_iter: Iterator[Routed],
        counts: FeedCounts,
        checkpoint: Checkpoint | None,
        stem: str,
        provenance: dict[str, str],
        telemetry: Telemetry,
        total_rows: int = 0,
        rows_before: int = 0,
    ) -> None:
        self.p = params
        self.tracker = tracker
        self.feed_iter = feed_iter
        self.counts = counts
        self.cp = checkpoint
        self.stem = stem
        self.provenance = provenance
        self.tel = telemetry
        self.ctx = mp.get_context("spawn")
        self.events: MPQueue[Event] = self.ctx.Queue()
        self.procs = _Procs()
        self.fetch_stats: dict[int, FetchProcessStats] = {}
        self.slow_hosts: dict[int, list[tuple[str, float]]] = {}  # per fetch process, its last second's slowest hosts
        self.new_errors: list[FailureNote] = []  # failures reported since the last tick (the status page)
        self.extract_stats: dict[int, ExtractStats] = {}
        self.writer_stats: dict[int, WriterStats] = {}
        self.sealed_files: list[str] = []
        self.warc_open: dict[int, tuple[str, int]] = {}
        self.pending_renames: list[list[str]] = []
        self.durable_rows = 0
        self.stop_reason = ""
        self.signals = 0
        self.feeder_busy = 0.0
        self.counters: list[StageCounter] = []
        self.queue_peak = 0
        self.parent_cpu_s = 0.0
        self.profile: ProfileSession | None = None
        self.children: dict[tuple[str, int], _Child] = {}
        self.items_out: dict[int, int] = {}
        """Per fetch process: work items sent and not yet returned (the URLs it holds)."""
        self.failure = ""
        """Why the run failed (a child lost, stalled or never started), for the journal."""
        self._checked = 0.0
        self.total_rows = total_rows
        """Rows of the work list (every part): the ``total`` of the progress."""
        self.rows_before = rows_before
        """Rows of the work list before the checkpoint's position: done before this run started."""
        self.feeding_done = False
        now = time.monotonic()
        self._fetch_rate = Window(now)
        self._done_rate = Window(now)
        self._moved = Moved(now)

    # -- start ----------------------------------------------------------------------------------
    def start(self) -> None:
        from multiprocessing import process

        if getattr(process.current_process(), "_inheriting", False):
            # a spawned pipeline process re-imports the main module: a script that calls the run at
            # its top level would start a pipeline in every child
            raise UsageError("recrawl run was called while a pipeline process was starting: in a script, call it "
                             "under `if __name__ == \"__main__\":` (see docs/recrawl.md)")
        p, ctx = self.p, self.ctx
        assert p.fetchers and p.extractors and p.writers  # RunParams is complete once built
        if p.fetch_writes:
            self._start_fetch_writers()
            return
        x_ring, w_ring, self.queue_bound = ring_sizes(p)
        writer_rings = [Ring(ctx, w_ring) for _ in range(p.writers)]
        self.counters.append(StageCounter(writer_rings))
        extract_rings: list[Ring] = []
        if p.extracting:
            extract_rings = [Ring(ctx, x_ring) for _ in range(p.extractors)]
            self.counters.append(StageCounter(extract_rings))
        self.procs.rings = writer_rings + extract_rings
        from ccrawl.recrawl.extractproc import extract_main
        from ccrawl.recrawl.fetchproc import fetch_main
        from ccrawl.recrawl.writerproc import WriterConfig, writer_main

        upstream_of_writers = p.extractors if p.extracting else p.fetchers
        sync_rows = max(1, p.batch // p.writers)
        for k, ring in enumerate(writer_rings):
            rx, tx = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=writer_main,
                name=f"ccrawl-writer-{k}",
                args=(k, ring, rx, self.events, upstream_of_writers,
                      WriterConfig(p.format, p.out or "", f"{self.stem}-w{k}", self.provenance, p.shard_size,
                                   sync_rows)),
                daemon=True,
            )
            self.procs.writer.append(proc)
            self.procs.controls.append(Outlet(tx, proc.name))
            self.procs.child_ends.append(rx)
        for k, ring in enumerate(extract_rings):
            proc = ctx.Process(
                target=extract_main,
                name=f"ccrawl-extract-{k}",
                args=(k, ring, writer_rings, self.events, p.extractor, p.fetchers),
                daemon=True,
            )
            self.procs.extract.append(proc)
        downstream = extract_rings or writer_rings
        per_fetcher = max(1, p.workers // p.fetchers)
        self.read_ahead = read_ahead_bytes(p)
        self.credit_limit = self.read_ahead // p.fetchers
        for k in range(p.fetchers):
            rx, tx = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=fetch_main,
                name=f"ccrawl-fetch-{k}",
                args=(k, rx, self.events, downstream, self.fetch_config(per_fetcher), p.format == "warc"),
                daemon=True,
            )
            self.procs.fetch.append(proc)
            self.procs.inboxes.append(Outlet(tx, proc.name))
            self.procs.child_ends.append(rx)
        self._launch()

    def _start_fetch_writers(self) -> None:
        """A fetch-only Parquet run: each fetch process writes its own part files (no rings, no writers).

        The parent speaks to them as to writers: ``Seal`` and ``Exit`` go down the same pipe as the
        work, and ``WantSeal``, ``DurableRows``, ``Drained`` and the final ``WriterReport`` come back.
        """
        from ccrawl.recrawl.fetchproc import FetchWriterConfig, fetch_main

        p, ctx = self.p, self.ctx
        assert p.fetchers
        group = fetch_group_bytes(p)
        self.queue_bound = 3 * group * p.fetchers
        per_fetcher = max(1, p.workers // p.fetchers)
        self.read_ahead = read_ahead_bytes(p)
        self.credit_limit = self.read_ahead // p.fetchers
        for k in range(p.fetchers):
            rx, tx = ctx.Pipe(duplex=False)
            writer = FetchWriterConfig(p.out or "", f"{self.stem}-f{k}", self.provenance, p.shard_size, group)
            proc = ctx.Process(
                target=fetch_main,
                name=f"ccrawl-fetch-{k}",
                args=(k, rx, self.events, [], self.fetch_config(per_fetcher), False, writer),
                daemon=True,
            )
            self.procs.fetch.append(proc)
            outlet = Outlet(tx, proc.name)
            self.procs.inboxes.append(outlet)
            self.procs.controls.append(outlet)  # the fetch process is this pipe's writer too (one sender: in order)
            self.procs.child_ends.append(rx)
        self._launch()

    @property
    def writing_processes(self) -> int:
        """The processes that seal, drain and exit as writers: the writers, or the fetch processes."""
        return len(self.procs.fetch) if self.p.fetch_writes else len(self.procs.writer)

    def _launch(self) -> None:
        p = self.p
        if p.profile_dir:
            from ccrawl.profiling.session import ProfileSession

            self.profile = ProfileSession(p.profile_dir, p.profile_name)
        for proc in self.procs.all():
            proc.start()
            role, _, idx = proc.name.removeprefix("ccrawl-").rpartition("-")
            now = time.monotonic()
            self.children[(role, int(idx))] = _Child(role, int(idx), proc, launched=now, heard=now)
            if self.profile is not None and proc.pid is not None:  # started: it has a pid
                # roles as the profiles name them: feeder, fetch-N, extract-N, write-N
                self.profile.watch(proc.pid, proc.name.removeprefix("ccrawl-").replace("writer-", "write-"))
        for end in self.procs.child_ends:
            end.close()  # spawned: each child holds its own copy now
        if self.profile is not None:
            self.profile.watch(os.getpid(), "feeder")
            self.profile.track_heap_here("feeder")

    def fetch_config(self, per_fetcher: int) -> FetchConfig:
        """The :class:`FetchConfig` every fetch process gets (sent as the object, validated here)."""
        from ccrawl.fetch.config import FetchConfig, resolve_table

        p = self.p
        config = FetchConfig(
            timeout=p.timeout,
            max_body=p.max_body,
            max_redirects=p.max_redirects,
            delay=p.delay,
            robots=p.robots,
            robots_timeout=p.robots_timeout,
            dns_lookups=max(1, -(-(p.dns_lookups or 16) // (p.fetchers or 1))),
            resolve=resolve_table(p.resolve),
            nameservers=tuple(p.nameservers),
            concurrency=per_fetcher,
            verify_tls=p.verify_tls,
            allow_private_addresses=p.allow_private_addresses,
        )
        if p.user_agent:
            config.user_agent = p.user_agent
        return config.validate()

    # -- signals --------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.signals += 1
        if self.signals >= 2:
            # at once: the checkpoint on disk is only ever replaced atomically, so it is valid
            self.procs.kill()
            os._exit(128 + signum)
        self.stop_reason = "signal"  # even past the end of the list: what was read ahead is dropped
        announce_stop(self.tel.stream, self.tracker.pending(), self.p.timeout)

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> RunSummary:
        p = self.p
        started = time.monotonic()
        cpu0 = time.process_time()
        old_handlers = {}
        if p.handle_signals and _main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old_handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            self.start()
            self.tel.event("start", workers=p.workers, fetchers=p.fetchers, extractors=p.extractors if p.extracting
                           else 0, writers=p.writers, queue_bound_bytes=self.queue_bound)
            self._tick()  # done and total from the start: nothing has moved yet, but the list's size is known
            self._loop()
        except BaseException:
            self.procs.kill()
            release_rings(self.procs.all(), self.procs.rings)
            raise
        finally:
            for sig, handler in old_handlers.items():
                signal.signal(sig, handler)
        for proc in self.procs.all():
            proc.join(timeout=10)
        for out in {id(o): o for o in self.procs.inboxes + self.procs.controls}.values():
            out.close()
        self._late_stats()
        self._tick(final=True)
        self.parent_cpu_s = time.process_time() - cpu0
        summary = summarize(self, time.monotonic() - started)
        if self.profile is not None:
            manifest = self.profile.finish()
            self.tel.event("profiles", directory=str(p.profile_dir), manifest=manifest)
        for ring in self.procs.rings:
            ring.close()
        return summary

    def _loop(self) -> None:
        p = self.p
        credits = [self.credit_limit] * len(self.procs.fetch)
        held: Routed | None = None
        feeding = True
        self._seal_round = 0
        self._acks_needed = 0
        self._drained = 0
        self._exited = 0
        final_sent = dropped = False
        batches: list[list[WorkItem]] = [[] for _ in self.procs.fetch]
        last_tick = time.monotonic()
        while self._exited < self.writing_processes:
            # feed as far as the read-ahead budget (bytes of items out in the fetch processes) allows
            if feeding and self.stop_reason:
                feeding = False
            t0 = time.perf_counter()
            while feeding:
                if p.max_pages and self.counts.issued >= p.max_pages and held is None:
                    self.stop_reason, feeding = "max_pages", False
                    break
                if held is None:
                    held = next(self.feed_iter, None)
                    if held is None:
                        self.stop_reason, feeding = self.stop_reason or "end", False
                        self.feeding_done = True
                        break
                k, item = held
                if credits[k] < item.cost:
                    break
                credits[k] -= item.cost
                batches[k].append(item)
                held = None
                if len(batches[k]) >= 256:
                    self._send_work(k, batches[k])
                    batches[k] = []
            for k, batch in enumerate(batches):
                if batch:
                    self._send_work(k, batch)
                    batches[k] = []
            if not feeding and not final_sent:
                for inbox in self.procs.inboxes:
                    inbox.send(StopFeed())
                final_sent = True
            if self.stop_reason == "signal" and not dropped:
                # items read ahead and not started are not fetched now: the checkpoint stays
                # below them and the next run takes them (a stop never waits out a host queue)
                for inbox in self.procs.inboxes:
                    inbox.send(DropWaiting())
                dropped = True
            self.feeder_busy += time.perf_counter() - t0
            # events
            try:
                ev = self.events.get(timeout=0.05)
            except queue.Empty:
                ev = None
            while ev is not None:
                self._on_event(ev, credits)
                try:
                    ev = self.events.get_nowait()
                except queue.Empty:
                    ev = None
            self.queue_peak = max(self.queue_peak, sum(c.sample() for c in self.counters))
            now = time.monotonic()
            if now - last_tick >= p.tick_seconds:
                last_tick = now
                self._tick()
            self._check_alive()

    def _send_work(self, k: int, batch: list[WorkItem]) -> None:
        self.items_out[k] = self.items_out.get(k, 0) + len(batch)
        self.procs.inboxes[k].send(WorkBatch(batch))

    def _heard(self, role: str, k: int, *, finished: bool = False) -> None:
        if role == "writer" and self.p.fetch_writes:
            role = "fetch"  # a fetch process that writes its own rows answers as a writer
        child = self.children.get((role, k))
        if child is None:
            return
        child.heard = time.monotonic()
        child.ready = True  # whatever it sends, it got this far (Ready comes first from every child)
        if finished:
            child.finished = True

    def _on_event(self, ev: Event, credits: list[int]) -> None:
        """One event from a child, dispatched on its type."""
        match ev:
            case Ready(role=role, idx=k):
                self._heard(role, k)
            case Credit(fetcher=k, nbytes=n, items=items):
                credits[k] += n
                self.items_out[k] = self.items_out.get(k, 0) - items
                self._heard("fetch", k)
            case FetchReport(fetcher=k, nbytes=n, stats=stats, final=final, items=items, recent=recent):
                credits[k] += n
                self.items_out[k] = self.items_out.get(k, 0) - items
                self._recent(k, recent)
                self.fetch_stats[k] = stats
                self._heard("fetch", k, finished=final and not self.p.fetch_writes)
            case ExtractReport(extractor=k, stats=stats, final=final):
                self.extract_stats[k] = stats
                self._heard("extract", k, finished=final)
            case WriterReport(writer=k, stats=stats, final=final):
                self.writer_stats[k] = stats
                self._exited += bool(final)
                self._heard("writer", k, finished=final)
            case WantSeal(writer=k):
                self._heard("writer", k)
                if not self._acks_needed and not self._drained:
                    self._seal_round += 1
                    self._acks_needed = len(self.procs.controls)
                    for ctl in self.procs.controls:
                        ctl.send(Seal(self._seal_round))
            case DurableRows(writer=k, durable=d, seal_round=r):
                self._heard("writer", k)
                if r is not None and r > 0 and self._acks_needed:
                    self._acks_needed -= 1
                self._on_durable(k, d)
            case Drained(writer=k):
                self._heard("writer", k)
                self._drained += 1
                if self._drained == self.writing_processes:
                    for ctl in self.procs.controls:
                        ctl.send(Seal(0, final=True))
                        ctl.send(Exit())
            case Crash(who=who, detail=detail, disk=disk):
                raise crash_error(who, detail, disk=disk)
            case _:
                raise CcrawlError(f"recrawl pipeline: unexpected event {ev!r}")

    def _late_stats(self) -> None:
        """Take the final stats still queued once the processes are gone.

        The loop ends when the writers have exited, but the events queue orders messages per
        process, not across them: a fetch process's final stats can still be in the queue then
        (a run without a sink, whose rows are durable at once, summarised six fetched pages as
        zero ok). Joined processes have flushed everything they put, so this drains it all.
        """
        while True:
            try:
                ev = self.events.get(timeout=0.05)
            except queue.Empty:
                return
            match ev:
                case FetchReport(fetcher=k, stats=stats, recent=recent):
                    self._recent(k, recent)
                    self.fetch_stats[k] = stats
                case ExtractReport(extractor=k, stats=stats):
                    self.extract_stats[k] = stats
                case WriterReport(writer=k, stats=stats):
                    self.writer_stats[k] = stats
                case _:
                    pass

    def _check_alive(self) -> None:
        """Name a child that died, left early, never started or went silent, and fail the run.

        Every child reports ``Ready`` after its set-up and then something at least once a second
        (its stats), busy or idle, until its last message; so a child that is silent for
        ``--stall-timeout`` is stuck (SIGSTOPped, wedged), one that has not said ``Ready`` after
        ``--start-timeout`` never started, and one gone with exit code 0 before its last message
        was lost (issue #37: a fetch process left that way once and the run sat at zero for ten
        minutes). A stall, a lost child and a start that never came are worth running again (exit
        75); the checkpoint is written first, so the rerun resumes (duplicates at most, never gaps).
        """
        now = time.monotonic()
        if now - self._checked < 0.2:
            return
        if self._checked and now - self._checked > PARENT_GAP_S:
            # the parent itself was not running (suspended with Ctrl-Z, the machine asleep): its
            # children were stopped too or their news is queued; neither is their stall
            for child in self.children.values():
                child.heard = max(child.heard, now)
                child.launched = max(child.launched, now)
        self._checked = now
        p = self.p
        for child in self.children.values():
            proc = child.proc
            code = proc.exitcode
            if code not in (None, 0):
                raise CcrawlError(
                    f"{proc.name} (pid {proc.pid}) died with exit code {code}{self._holding(child)}; "
                    "the checkpoint is intact, run again to resume"
                )
            if code == 0 and not child.finished:
                child.exit_seen = child.exit_seen or now
                if now - child.exit_seen > EXIT_GRACE_S:
                    self._fail(f"{child.label} exited (code 0) before finishing its work{self._holding(child)}")
            elif code is None and not child.ready and now - child.launched > p.start_timeout:
                self._fail(f"{child.label} did not report ready within {p.start_timeout:g} s of its start")
            elif code is None and child.ready and not child.finished and now - child.heard > p.stall_timeout:
                self._fail(f"{child.label} has sent nothing for {now - child.heard:.0f} s{self._holding(child)}")
        for out in {id(o): o for o in self.procs.inboxes + self.procs.controls}.values():
            if out.error is not None:
                # the child's end is closed: it is gone, and the checks above name it once its exit
                # code is in; a pipe that failed with the child still there is named here
                out.failed_at = out.failed_at or now
                if now - out.failed_at > EXIT_GRACE_S:
                    self._fail(f"the pipe to {out.name} failed ({type(out.error).__name__}: {out.error})")

    def _holding(self, child: _Child) -> str:
        if child.role != "fetch":
            return ""
        report = self.fetch_stats.get(child.idx)
        dropped = report.sched_dropped if report is not None else 0
        held = max(0, self.items_out.get(child.idx, 0) - dropped)
        return f" while holding {held} URLs" if held else ""

    def _fail(self, what: str) -> None:
        """Write the checkpoint and the journal's ``failed`` event, then raise the one-line error (exit 75)."""
        self.failure = what
        with contextlib.suppress(OSError):
            self._write_checkpoint()
        self.tel.event("failed", reason=what, durable=self.durable_rows, files=len(self.sealed_files))
        if self.cp is not None and self.p.state:
            saved = f"the checkpoint is saved in {self.p.state}: run the same command again to resume"
        else:
            saved = "nothing was checkpointed (no --out or --state): a rerun starts from the beginning"
        raise TemporaryFailure(
            f"recrawl: {what}; the run stopped with {self.durable_rows} rows written this run and {saved}"
        )

    # -- durability and the checkpoint ------------------------------------------------------------
    def _on_durable(self, writer: int, d: Durable | None) -> None:
        if d is None:
            return
        self.tracker.mark_durable(d.seqs)
        self.durable_rows += len(d.seqs)
        if d.sealed and d.tmp_path:
            self.warc_open.pop(writer, None)
            self.pending_renames.append([d.tmp_path, d.final_path])
        elif d.tmp_path:
            self.warc_open[writer] = (d.tmp_path, d.size)
        self._write_checkpoint()
        for tmp, final in self.pending_renames:
            finalize(tmp, final)
            self.sealed_files.append(final)
            self.tel.event("shard_sealed", file=final, rows=d.rows, payload_bytes=d.payload,
                           bytes=os.path.getsize(final))
        self.pending_renames = []

    def _write_checkpoint(self, done: bool = False) -> None:
        if self.cp is None or not self.p.state:
            return
        part, row = self.tracker.position()
        cp = self.cp
        cp.part, cp.row, cp.done = part, row, done
        cp.fetched = self._base_fetched + self.durable_rows
        cp.durable_above = self.tracker.durable_above()
        cp.warc_files = {tmp: size for tmp, size in self.warc_open.values()}
        cp.pending_renames = [list(x) for x in self.pending_renames]
        save_checkpoint(self.p.state, cp)
        self.tel.event("checkpoint", part=part, row=row, fetched=cp.fetched, done=done)

    @property
    def _base_fetched(self) -> int:
        return getattr(self, "_base", 0)

    def set_base_fetched(self, n: int) -> None:
        self._base = n

    def finish_checkpoint(self, done: bool) -> None:
        self._write_checkpoint(done=done)

    # -- reporting ------------------------------------------------------------------------------
    @property
    def written(self) -> int:
        """Rows handed to the sinks this run, the open files' included (durable or not yet)."""
        if self.p.fetch_writes:
            none_written, no_rows = FetchProcessStats(), WriterStats()
            return sum(max(self.fetch_stats.get(k, none_written).written, self.writer_stats.get(k, no_rows).rows)
                       for k in range(len(self.procs.fetch)))
        return merged(self.writer_stats.values(), WriterStats()).rows

    def _held_urls(self) -> int:
        dropped = sum(s.sched_dropped for s in self.fetch_stats.values())
        return max(0, sum(self.items_out.values()) - dropped)

    def progress(self, now: float) -> Progress:
        """The progress fields of a tick (docs/recrawl.md, "Progress"), from the children's latest reports."""
        f = merged(self.fetch_stats.values(), FetchProcessStats()).fetch
        fetched = f.ok + f.failed
        written = self.written
        c = self.counts
        if self.p.max_pages:
            total_of = "max_pages"
            total = min(self.p.max_pages, max(0, self.total_rows - self.rows_before))
            done = min(written, total)
        else:
            total_of = "worklist"
            total = self.total_rows
            # every row walked past that needed no fetch, and every row written: the rest is in the pipeline
            done = min(self.rows_before + c.rows_read - (c.issued - written), total)
        extracted = merged(self.extract_stats.values(), ExtractStats()).rows
        self._moved.see(now, done=done, fetched=fetched, written=written, extracted=extracted)
        rate = self._fetch_rate.add(now, fetched)
        done_rate = self._done_rate.add(now, done)
        quiet = self._moved.quiet(now)
        finished = done >= total > 0 or (self.feeding_done and not self._held_urls() and written >= c.issued)
        waiting = [] if finished else self._waiting(now)
        return {
            "done": done,
            "total": total,
            "total_of": total_of,
            "percent": percent(done, total),
            "rate": round(rate, 1),
            "eta_s": eta_seconds(done, total, done_rate),
            "fetched": fetched,
            "ok": f.ok,
            "failed": f.failed,
            "not_modified": f.not_modified,
            "written": written,
            "durable": self.durable_rows,
            "extracted": extracted,
            "bytes": f.body_bytes,
            "errors": {k: v for k, v in sorted(f.errors.items()) if v},
            "held": self._held_urls(),
            "quiet_s": round(quiet, 1),
            "waiting": waiting,
        }

    def _waiting(self, now: float) -> list[str]:
        """Each stage that has not moved for ``--waiting-after``, downstream first, and what it waits on.

        Read off the rings (bytes queued for each stage), the URLs each fetch process holds, and
        each child's last word; a child that has said nothing for a few seconds is named. A stage
        with nothing left to do (the work list handed out and nothing held) is not listed.
        """
        moved, after = self._moved, self.p.waiting_after
        out = []
        rings = self.counters  # [writer rings, extract rings] when the run has rings

        def silent(role: str) -> str:
            names = []
            for c in self.children.values():
                if c.role != role or c.finished:
                    continue
                if not c.ready:
                    names.append(f"cc-{role}-{c.idx} not ready after {now - c.launched:.0f} s")
                elif now - c.heard >= SILENT_S:
                    names.append(f"cc-{role}-{c.idx} (pid {c.proc.pid}) silent {now - c.heard:.0f} s")
            return f" ({'; '.join(names)})" if names else ""

        def queue(counter: StageCounter) -> tuple[int, str, bool]:
            held = counter.held()
            cap = sum(r.capacity for r in counter.rings)
            full = any(r.held() >= 0.9 * r.capacity for r in counter.rings)
            return held, f"queue {human_bytes(held)} of {human_bytes(cap)}" if held else "queue 0 B", full

        urls = self._held_urls()
        fetch_done = self.feeding_done and not urls
        if not self.p.fetch_writes and rings and moved.since("written", now) >= after:
            held, text, _ = queue(rings[0])
            if held:
                out.append(f"writers: {text}, 0 written in {moved.since('written', now):.0f} s" + silent("writer"))
            elif not (fetch_done and (not self.p.extracting or not rings[1].held())):  # upstream has more to come
                upstream = "extract" if self.p.extracting else "fetch"
                out.append(f"writers waiting on {upstream} ({text})" + silent("writer"))
        if self.p.extracting and len(rings) > 1 and moved.since("extracted", now) >= after:
            held, text, _ = queue(rings[1])
            _, wtext, wfull = queue(rings[0])
            if held and wfull:
                out.append(f"extract waiting on writers ({wtext})" + silent("extract"))
            elif held:
                out.append(f"extract: {text}, 0 rendered in {moved.since('extracted', now):.0f} s" + silent("extract"))
            elif not fetch_done:
                out.append(f"extract waiting on fetch ({text})" + silent("extract"))
        since = moved.since("fetched", now)
        if since >= after and not fetch_done:
            if not urls:
                out.append("fetch waiting on the work list (0 URLs held)" + silent("fetch"))
            elif rings and queue(rings[-1])[2]:
                to = "extract" if self.p.extracting else "writers"
                out.append(f"fetch waiting on {to} ({queue(rings[-1])[1]}): {urls} URLs held" + silent("fetch"))
            else:
                waits = sum(s.sched_waiting for s in self.fetch_stats.values())
                out.append(f"fetch: {urls} URLs held ({min(waits, urls)} waiting for their host's turn, "
                           f"{max(0, urls - waits)} in flight), 0 done in {since:.0f} s" + silent("fetch"))
        return out

    def _recent(self, k: int, recent: RecentFetches) -> None:
        """Keep a fetch report's slowest hosts and last failures for the next tick (they are no summary's)."""
        if recent.slow_hosts:
            self.slow_hosts[k] = recent.slow_hosts
        self.new_errors.extend(recent.last_errors)
        del self.new_errors[:-20]

    def _tick(self, final: bool = False) -> None:
        part, row = self.tracker.position()
        held = sum(c.held() for c in self.counters)
        slow = sorted((h for hosts in self.slow_hosts.values() for h in hosts), key=lambda h: -h[1])[:5]
        errors, self.new_errors = self.new_errors, []
        self.tel.tick(
            **self.progress(time.monotonic()),
            part=part,
            row=row,
            queue_bytes=held,
            files=len(self.sealed_files),
            final=final,
            slow_hosts=slow,
            last_errors=errors,
        )


#: A child that has said nothing this long is named in the ``waiting`` of a quiet run (each reports every second).
SILENT_S = 3.0


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()

