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
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ccrawl.recrawl.procs import child_setup, peak_rss_mb, unpack_meta
from ccrawl.recrawl.ring import Ring
from ccrawl.recrawl.sinks import Durable, NullSink, ParquetSink, WarcSink


def make_sink(kind: str, out: str, stem: str, provenance: dict[str, str]) -> Any:
    if not out:
        return NullSink()
    if kind == "warc":
        return WarcSink(Path(out), stem, provenance)
    return ParquetSink(Path(out), stem, provenance)


def _report(events: Any, idx: int, durable: Durable | None, reason: str) -> None:
    if durable is None:
        events.put(("durable", idx, None, reason))
        return
    events.put(("durable", idx, durable, reason))


def writer_main(
    idx: int,
    ring_in: Ring,
    control: Connection,
    events: Any,
    upstream: int,
    kind: str,
    out: str,
    stem: str,
    provenance: dict[str, str],
    shard_size: int,
    sync_rows: int,
) -> None:
    """Entry point of writer process ``idx``; ``upstream`` producers feed its ring."""
    child_setup()
    from ccrawl.profiling.session import heap_profile
    from ccrawl.recrawl.diskfail import apply_test_fsize_limit, disk_failure

    apply_test_fsize_limit()
    try:
        with heap_profile(f"write-{idx}"):
            _write_loop(idx, ring_in, control, events, upstream, kind, out, stem, provenance, shard_size, sync_rows)
    except OSError as exc:
        failure = disk_failure(exc, out)
        if failure is None:
            raise
        events.put(("crash", f"writer {idx}", failure))  # the parent says it in one line, exits 75


def _write_loop(
    idx: int,
    ring_in: Ring,
    control: Connection,
    events: Any,
    upstream: int,
    kind: str,
    out: str,
    stem: str,
    provenance: dict[str, str],
    shard_size: int,
    sync_rows: int,
) -> None:
    if kind == "parquet" and out:
        import pyarrow.parquet  # noqa: F401 - imported before the clock starts, so busy % is the writing
    sink = make_sink(kind, out, stem, provenance)
    eofs = rows = 0
    asked = drained = False
    busy = 0.0
    started = last_stats = time.monotonic()
    unsynced_since = 0.0
    ring_fd, ctl_fd = ring_in.fileno(), control.fileno()
    while True:
        watch = [ctl_fd] if drained else [ring_fd, ctl_fd]
        ready, _, _ = select.select(watch, [], [], 0.5)
        if ctl_fd in ready:
            try:
                cmd = control.recv()
            except (EOFError, OSError):
                os._exit(0)  # parent gone: leave the .tmp unsealed, the next start sweeps it
            t0 = time.perf_counter()
            if cmd[0] == "seal":
                _report(events, idx, sink.seal(), f"seal:{cmd[1]}")
                asked = False
            busy += time.perf_counter() - t0
            if cmd[0] == "exit":
                events.put(("writer", idx, {"rows": rows, "busy_s": busy, "wall_s": time.monotonic() - started,
                                             "peak_rss_mb": peak_rss_mb()}, True))
                return
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
                meta = unpack_meta(blob)
                sink.add(meta, body, meta["_seq"])
                rows += 1
                if not unsynced_since:
                    unsynced_since = time.monotonic()
            busy += time.perf_counter() - t0
            if out and not asked and sink.payload >= shard_size:
                events.put(("want_seal", idx))
                asked = True
            if eofs >= upstream:
                drained = True
                if kind != "parquet" or not out:
                    _report(events, idx, sink.sync(), "sync")
                events.put(("drained", idx))
        if (kind != "parquet" or not out) and not drained:
            # WARC and no-output rows are durable at an fsync: one per batch, or after a second
            pending = getattr(sink, "_pending", [])
            if len(pending) >= sync_rows or (pending and time.monotonic() - unsynced_since > 1.0):
                t0 = time.perf_counter()
                _report(events, idx, sink.sync(), "sync")
                busy += time.perf_counter() - t0
                unsynced_since = 0.0
        now = time.monotonic()
        if now - last_stats > 1.0:
            events.put(("writer", idx, {"rows": rows, "busy_s": busy, "wall_s": now - started,
                                         "peak_rss_mb": peak_rss_mb()}, False))
            last_stats = now
