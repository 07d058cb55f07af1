"""In- and out-degrees of a web graph, counted from its edge files in memory bounded by its vertices.

:func:`count_edges` streams every edge file (gzip text, ``from<TAB>to``) and counts each line into
two uint32 arrays indexed by vertex id (:func:`degree_arrays`): 8 bytes a vertex whatever the number
of edges, and nothing held per edge or per file. The arrays are anonymous memory advised onto huge
pages: an in-degree add lands anywhere in the array, and with 4 KiB pages every add is a TLB miss
as well as a cache miss (the tally runs 2.5x faster on huge pages, bench/README.md).

``jobs`` files are counted at once, each on a thread of its own with its own connection: the
inflate (ISA-L) and the tally (``csrc/edgecount.pyx``) both run without the GIL, and the threads add
into the same two arrays with atomic increments, so ``-j N`` uses N cores and one copy of the arrays.
The first failure stops the other threads at their next block and is raised with the file's name.

:func:`vertex_count` reads the vertex count off the release (``graphinfo.json``'s
``stats.host.nodes``), or counts the vertex files' lines when the release does not list it.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ccrawl.commoncrawl import webgraph as wg
from ccrawl.commoncrawl.edgecount import EdgeTally
from ccrawl.errors import InputError
from ccrawl.net.client import CCClient, run

Notice = Callable[[str], None]

BLOCK = 1 << 17
"""Inflated bytes a tally step takes. Small enough for the allocator to reuse the buffer from its heap:
4 MiB blocks came from mmap and went back each time, a page fault every 4 KiB inflated (a third
of the CPU; bench/README.md)."""


class _Stopped(Exception):
    """Another thread failed: this one stops at its next block."""


@dataclass(frozen=True, slots=True)
class EdgeCount:
    """Degrees of every vertex and what counting them took."""

    din: npt.NDArray[np.uint32]
    """uint32 in-degree per vertex id (numpy array)."""
    dout: npt.NDArray[np.uint32]
    """uint32 out-degree per vertex id."""
    edges: int
    blank: int
    """Empty lines skipped."""
    files: int
    gz_bytes: int
    """Compressed bytes read."""
    seconds: float
    jobs: int

    def summary(self, label: str = "degrees") -> str:
        rate = self.gz_bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0
        blank = f", {self.blank:,} blank lines skipped" if self.blank else ""
        return (f"{label}: {self.edges:,} edges in {self.files:,} files ({self.gz_bytes / 1e6:,.1f} MB gzipped) "
                f"in {self.seconds:.1f} s, {rate:,.1f} MB/s with {self.jobs} thread(s){blank}")


def degree_arrays(vertices: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """Two zeroed uint32 arrays of ``vertices`` counters, on huge pages where the kernel gives them."""
    if vertices <= 0:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    arrays = []
    for _ in range(2):
        # anonymous private memory: zero pages until touched, so memory grows with the ids counted
        area = mmap.mmap(-1, 4 * vertices, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            with contextlib.suppress(OSError):  # huge pages off in this kernel: 4 KiB pages, slower adds
                area.madvise(mmap.MADV_HUGEPAGE)
        arrays.append(np.frombuffer(area, dtype=np.uint32))
    return arrays[0], arrays[1]


async def count_file(cc: CCClient, url: str, tally: Any, *, stop: threading.Event | None = None) -> int:
    """Count one edge file into ``tally``: its compressed size; errors name the file."""
    received = 0

    def seen(n: int) -> None:
        nonlocal received
        received += n

    name = url.rsplit("/", 1)[-1]
    try:
        async for block in wg.gz_blocks(cc, url, on_bytes=seen, block_size=BLOCK):
            if stop is not None and stop.is_set():
                raise _Stopped
            tally.feed(block)
        if received == 0:
            raise InputError("the file is empty (0 bytes), not gzip: a failed upload or download; "
                             "Common Crawl's empty edge file is a gzip member of no lines")
        tally.finish()
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from exc
    return received


def count_edges(
    urls: list[str], vertices: int, *, jobs: int = 1, client_options: Mapping[str, Any] | None = None,
) -> EdgeCount:
    """Degrees of ``vertices`` vertices from the edge files at ``urls``, ``jobs`` files at a time."""
    din, dout = degree_arrays(vertices)
    jobs = max(1, min(jobs, len(urls), os.cpu_count() or 1))
    atomic = jobs > 1
    todo: queue.SimpleQueue[str] = queue.SimpleQueue()
    for url in urls:
        todo.put(url)
    stop = threading.Event()
    failures: list[BaseException] = []
    totals = {"edges": 0, "blank": 0, "bytes": 0, "files": 0}
    lock = threading.Lock()
    options = dict(client_options or {})

    def worker() -> None:
        async def files(cc: CCClient) -> None:
            while not stop.is_set():
                try:
                    url = todo.get_nowait()
                except queue.Empty:
                    return
                tally = EdgeTally(din, dout, atomic)
                size = await count_file(cc, url, tally, stop=stop)
                with lock:
                    totals["edges"] += tally.edges
                    totals["blank"] += tally.blank
                    totals["bytes"] += size
                    totals["files"] += 1

        try:
            run(files, **options)
        except _Stopped:
            pass
        except BaseException as exc:  # handed to the caller's thread, which raises it
            with lock:
                failures.append(exc)
            stop.set()

    started = time.perf_counter()
    if jobs == 1:
        worker()
    else:
        threads = [threading.Thread(target=worker, name=f"degrees-{i}", daemon=True) for i in range(jobs)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        finally:
            stop.set()
    if failures:
        raise failures[0]
    return EdgeCount(din, dout, totals["edges"], totals["blank"], totals["files"], totals["bytes"],
                     time.perf_counter() - started, jobs)


async def vertex_count(cc: CCClient, rel: wg.GraphRelease, notice: Notice | None = None) -> int:
    """The host graph's vertex count: listed by the release, or the vertex files' lines counted."""
    if rel.host_nodes is not None:
        return rel.host_nodes
    if notice is not None:
        notice(f"host degrees: {rel.id} lists no vertex count (graphinfo.json stats); counting the vertex files")
    lines = 0
    for path in await wg.vertex_files(cc, rel):
        tail = b""
        async for block in wg.gz_blocks(cc, cc.data_url(path)):
            lines += block.count(b"\n")
            tail = block[-1:] or tail
        if tail and tail != b"\n":
            lines += 1
    return lines
