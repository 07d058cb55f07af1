"""A writer process: rows from its ring into its sink; seals when the parent says so.

Inputs are the ring (rows from the extract or fetch processes) and a control pipe from the
parent. When the open shard passes ``--shard-size`` the writer asks the parent to seal
(``want_seal``); the parent tells *every* writer to seal, so all of them rotate together and
the checkpoint can move past all of their rows at once. A writer never seals on its own: when
its upstream is drained it reports ``drained`` and waits for the parent's final seal, and when
the parent is gone (control pipe EOF) it exits leaving its ``.tmp`` for the next start to sweep,
because a shard sealed behind a dead parent's back would hold rows no checkpoint covers.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from ccrawl.procs import child_setup, peak_rss_mb
from ccrawl.recrawl.messages import (
    CaptureRow,
    Crash,
    Drained,
    DurableRows,
    EventSink,
    Exit,
    Ready,
    Seal,
    WantSeal,
    WriterReport,
)
from ccrawl.recrawl.ring import Ring
from ccrawl.recrawl.sinks import NullSink, ParquetSink, Sink, WarcSink
from ccrawl.recrawl.stats import WriterStats


@dataclass(slots=True, frozen=True)
class WriterConfig:
    """What a writer process needs besides its ring and pipes."""

    kind: str
    """``parquet`` or ``warc``."""
    out: str
    """Output directory; '' counts rows and keeps nothing."""
    stem: str
    provenance: dict[str, str]
    shard_size: int
    sync_rows: int
    """Rows between fsyncs of a sink that is durable at a sync (WARC, no output)."""


def make_sink(kind: str, out: str, stem: str, provenance: dict[str, str]) -> Sink:
    if not out:
        return NullSink()
    if kind == "warc":
        return WarcSink(Path(out), stem, provenance)
    return ParquetSink(Path(out), stem, provenance)


def writer_main(idx: int, ring_in: Ring, control: Connection, events: EventSink, upstream: int,
                cfg: WriterConfig) -> None:
    """Entry point of writer process ``idx``; ``upstream`` producers feed its ring."""
    child_setup(f"writer-{idx}")
    from ccrawl.profiling.session import heap_profile
    from ccrawl.recrawl.diskfail import apply_test_fsize_limit, disk_failure

    apply_test_fsize_limit()
    try:
        with heap_profile(f"write-{idx}"):
            write_loop(idx, ring_in, control, events, upstream, cfg)
    except OSError as exc:
        failure = disk_failure(exc, cfg.out)
        if failure is None:
            raise
        events.put(Crash(f"writer {idx}", failure.message(), disk=True))  # one line from the parent, exit 75


def write_loop(
    idx: int,
    ring_in: Ring,
    control: Connection,
    events: EventSink,
    upstream: int,
    cfg: WriterConfig,
    sink_factory: Callable[[WriterConfig], Sink] | None = None,
) -> None:
    """The writer's loop: rows from ``ring_in`` into the sink, seals and exits on ``control``.

    ``events`` needs only ``put`` (a list's ``append`` wrapped, in a test); ``control`` any
    ``multiprocessing`` connection; ``sink_factory`` swaps the sink in a test.
    """
    if cfg.kind == "parquet" and cfg.out:
        import pyarrow.parquet  # noqa: F401 - imported before the clock starts, so busy % is the writing
    sink = (sink_factory or (lambda c: make_sink(c.kind, c.out, c.stem, c.provenance)))(cfg)
    at_sync = sink.durable_at == "sync"
    eofs = rows = 0
    asked = drained = False
    busy = 0.0
    started = last_stats = time.monotonic()
    cpu0 = time.process_time()
    unsynced_since = 0.0
    ring_fd, ctl_fd = ring_in.fileno(), control.fileno()
    events.put(Ready("writer", idx, os.getpid()))

    def stats() -> WriterStats:
        return WriterStats(rows=rows, busy_s=busy, wall_s=time.monotonic() - started,
                           cpu_s=time.process_time() - cpu0, peak_rss_mb=peak_rss_mb())

    while True:
        watch = [ctl_fd] if drained else [ring_fd, ctl_fd]
        ready, _, _ = select.select(watch, [], [], 0.5)
        if ctl_fd in ready:
            try:
                cmd = control.recv()
            except (EOFError, OSError):
                os._exit(0)  # parent gone: leave the .tmp unsealed, the next start sweeps it
            t0 = time.perf_counter()
            match cmd:
                case Seal(round=r, final=final):
                    reason = "seal:final" if final else f"seal:{r}"
                    events.put(DurableRows(idx, sink.seal(), reason, None if final else r))
                    asked = False
                    busy += time.perf_counter() - t0
                case Exit():
                    events.put(WriterReport(idx, stats(), True))
                    return
                case _:
                    raise TypeError(f"writer {idx}: unexpected control message {cmd!r}")
        if ring_fd in ready and not drained:
            descs = ring_in.read_descriptors(timeout=0)
            if descs is None:
                os._exit(0)
            t0 = time.perf_counter()
            for desc in descs:
                if Ring.is_eof(desc):
                    eofs += 1
                    continue
                blob, body = ring_in.read(desc)
                ring_in.release(desc)
                sink.add(CaptureRow.unpack(blob), body)
                rows += 1
                if not unsynced_since:
                    unsynced_since = time.monotonic()
            busy += time.perf_counter() - t0
            if cfg.out and not asked and sink.payload >= cfg.shard_size:
                events.put(WantSeal(idx))
                asked = True
            if eofs >= upstream:
                drained = True
                if at_sync:
                    events.put(DurableRows(idx, sink.sync(), "sync"))
                events.put(Drained(idx))
        if at_sync and not drained:
            # WARC and no-output rows are durable at an fsync: one per batch, or after a second
            pending = sink.unsynced
            if pending >= cfg.sync_rows or (pending and time.monotonic() - unsynced_since > 1.0):
                t0 = time.perf_counter()
                events.put(DurableRows(idx, sink.sync(), "sync"))
                busy += time.perf_counter() - t0
                unsynced_since = 0.0
        now = time.monotonic()
        if now - last_stats > 1.0:
            events.put(WriterReport(idx, stats(), False))
            last_stats = now
