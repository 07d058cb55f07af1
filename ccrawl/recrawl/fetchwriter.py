"""The fetch process's own Parquet writer: a fetch-only run's rows never leave the process that fetched them.

In a fetch-only Parquet run (``--no-extract``, no ``--writers``) each fetch process owns a
:class:`FetchWriter` for its own part files (``<stem>-f<k>-<counter>.parquet``): rows are
gathered into columns on the event loop, and each row group (cut at 2,000 rows or
``row_group_bytes`` of payload) is compressed and written by one helper thread, in order, so
the loop fetches on while zstd runs (pyarrow releases the GIL there). There is no ring, no
pickled row and no writer process between the fetch and the file.

Durability is the writer process's contract, unchanged (docs/recrawl.md): a row is durable only
in a sealed shard. The fetch process asks the parent to seal (:class:`WantSeal`) when its open
shard passes ``--shard-size``; the parent tells every fetch process to seal
(:class:`Seal`, on the same pipe as the work), each answers with :class:`DurableRows` once its
footer is written and fsynced, and only the parent checkpoints and renames. A kill before the
checkpoint leaves a ``.tmp`` the next start deletes (its rows fetched again: duplicates at
most, never gaps).

Memory: one row group fills while the thread writes the one before (a put waits rather than
cut a third), and a seal may queue the open group's rest behind it, so a process holds at most
three times ``row_group_bytes`` of rows (a single row larger than that alone); the pipeline
sizes ``row_group_bytes`` from ``--queue-mb`` so that every process's three fit it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl.recrawl.messages import CaptureRow, Crash, DurableRows, EventSink, WantSeal
from ccrawl.recrawl.sinks import Durable, ParquetSink
from ccrawl.recrawl.stats import WriterStats

if TYPE_CHECKING:
    import pyarrow as pa

#: Rows a row group holds at most (as the writer process's :class:`ParquetSink`).
GROUP_ROWS = 2000


class WriterFailed(Exception):
    """The writer's thread failed; the failure was already reported to the parent as a Crash."""


class FetchWriter:
    """Capture rows into this fetch process's own Parquet shards (``async put``, ``async seal``).

    ``events`` needs only ``put``. The outbox interface of :func:`ccrawl.recrawl.fetchproc.serve`
    (``put``, ``close``, ``sink_wait``) plus the writer's: :meth:`seal`, :meth:`stats`.
    """

    def __init__(
        self,
        idx: int,
        out: str,
        stem: str,
        provenance: dict[str, str],
        events: EventSink,
        *,
        shard_size: int,
        row_group_bytes: int,
        disk_failure: Callable[[BaseException], str | None] | None = None,
    ) -> None:
        self.idx = idx
        self.events = events
        self.shard_size = shard_size
        self.group_bytes = row_group_bytes
        self.sink = ParquetSink(Path(out), stem, provenance, row_group_rows=GROUP_ROWS,
                                row_group_bytes=row_group_bytes)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet")
        self._jobs: list[tuple[asyncio.Future[Durable | None], int]] = []  # (job, bytes of its row group), in order
        self._last: asyncio.Future[Durable | None] | None = None
        self._first_failure: BaseException | None = None
        self._disk_failure = disk_failure
        self._failed = False
        self._thread_failed = False
        self._asked = False
        self.rows = 0
        self.sink_wait = 0.0
        """Seconds puts waited for the writing thread (the writer is the ceiling when this grows)."""
        self.write_s = 0.0
        """Seconds the writing thread spent writing row groups and sealing."""
        self.held_peak = 0
        """The most payload bytes held at once: the open row group plus the one being written."""
        self.sealed = 0
        self._started = time.monotonic()

    # -- rows ------------------------------------------------------------------------------------
    async def put(self, row: CaptureRow, body: bytes) -> None:
        sink = self.sink
        cols = row.columns
        size = (len(body) + len(cols.get("resp_headers", "")) + len(cols.get("req_headers", ""))
                + len(cols.get("meta_json", "")) + len(cols.get("url", "")))
        # cut the open group before it would pass its bound, once the thread has written the ones before
        while sink.buffered and (sink.buffered + size > self.group_bytes or sink.buffered_rows >= GROUP_ROWS):
            last = self._last
            if last is None or last.done():
                self._check(last)
                nbytes = sink.buffered
                self._submit(sink.cut(), None, nbytes)
                break
            t0 = time.perf_counter()
            await asyncio.wait([last])
            self.sink_wait += time.perf_counter() - t0
        sink.buffer(row, body)
        self.rows += 1
        held = sink.buffered + self._pending_bytes()
        if held > self.held_peak:
            self.held_peak = held
        if not self._asked and sink.payload >= self.shard_size:
            self.events.put(WantSeal(self.idx))
            self._asked = True

    def _pending_bytes(self) -> int:
        self._jobs = [(f, n) for f, n in self._jobs if not f.done()]
        return sum(n for _, n in self._jobs)

    def _submit(self, table: pa.Table | None, seal: tuple[list[int], int, int] | None,
                nbytes: int) -> asyncio.Future[Durable | None]:
        """Queue a row group (and, with ``seal``, the shard's close) on the writing thread, in order."""
        fut = asyncio.get_running_loop().run_in_executor(self._pool, self._job, table, seal)
        self._jobs.append((fut, nbytes))
        self._last = fut
        return fut

    def _job(self, table: pa.Table | None, seal: tuple[list[int], int, int] | None) -> Durable | None:
        """On the writing thread: the row group, then (sealing) the footer and fsync."""
        t0 = time.perf_counter()
        try:
            if self._thread_failed:  # never seal a shard over a row group that failed to write
                raise RuntimeError("an earlier row group of this shard failed to write")
            if table is not None:
                self.sink.write_group(table)
            return self.sink.close_shard(*seal) if seal is not None else None
        except BaseException as exc:
            if not self._thread_failed:
                self._thread_failed, self._first_failure = True, exc
            raise
        finally:
            self.write_s += time.perf_counter() - t0

    def _check(self, fut: asyncio.Future[Durable | None] | None) -> Durable | None:
        """The result of a finished job; a failure is reported once (a Crash) and raised as WriterFailed."""
        if fut is None:
            return None
        exc = fut.exception()
        if exc is None:
            return fut.result()
        if not self._failed:
            self._failed = True
            # the first failure is the one to report: a later job fails only because of it
            first = self._first_failure or exc
            detail = self._disk_failure(first) if self._disk_failure is not None else None
            if detail is not None:
                self.events.put(Crash(f"fetch process {self.idx} (writing)", detail, disk=True))
            else:
                self.events.put(Crash(f"fetch process {self.idx} (writing)", f"{type(first).__name__}: {first}"))
        raise WriterFailed(str(exc)) from exc

    # -- seals -----------------------------------------------------------------------------------
    async def seal(self, round_: int, final: bool = False) -> None:
        """Finish the open shard (last row group, footer, fsync) and report its rows durable.

        The shard's rows are the ones put before this call; rows put while the seal is in flight
        go to the next shard. The writing thread takes jobs in order, so the footer is written
        after every row group of the shard (and never over one that failed). ``DurableRows``
        carries None when no row arrived since the last seal, as a writer process's does."""
        taken = self.sink.take_seal()
        durable = None
        if taken is not None:
            nbytes = self.sink.buffered
            fut = self._submit(self.sink.cut(), taken, nbytes)
            await asyncio.wait([fut])
            durable = self._check(fut)
            self.sealed += 1
        self._asked = False  # after the round: an ask while it is in flight would be dropped by the parent
        reason = "seal:final" if final else f"seal:{round_}"
        self.events.put(DurableRows(self.idx, durable, reason, None if final else round_))

    # -- the end ---------------------------------------------------------------------------------
    def stats(self) -> WriterStats:
        """The writer's share of the process, for the summary's writer line (CPU is the fetch stage's)."""
        return WriterStats(rows=self.rows, busy_s=self.write_s, wall_s=time.monotonic() - self._started,
                           sink_wait_s=self.sink_wait, held_peak_bytes=self.held_peak, in_fetch=True)

    def close(self) -> None:
        """Stop the writing thread (after the final seal: nothing is left buffered)."""
        self._pool.shutdown(wait=True)
