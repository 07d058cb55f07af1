"""What each kind of recrawl process reports about itself, and how reports of several processes merge.

Every report is a frozen dataclass sent in an event (:mod:`ccrawl.recrawl.messages`); the parent
keeps the latest per process and merges them with ``+`` (or :func:`merged`) for the progress and the
run summary. Each class's ``__add__`` is the one place that says how its fields combine: counts and
seconds add up (so the CPU and wall clocks of N processes are N processes' worth), the peak resident
memory takes the largest process, and ``held_peak_bytes`` adds up (a bound on the bytes held at once).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, Self, TypeVar

from ccrawl.fetch.stats import FetchStats


def _max_rss(a: float | None, b: float | None) -> float | None:
    """The larger of two peaks, where None is a process that does not measure its own."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


@dataclass(slots=True, frozen=True)
class FetchProcessStats:
    """One fetch process: its Fetcher's counters plus the process's clocks and its host scheduler."""

    fetch: FetchStats = field(default_factory=FetchStats)
    sink_wait_s: float = 0.0
    """Seconds the fetch tasks waited for room downstream (a ring, or the process's own writer)."""
    cpu_s: float = 0.0
    wall_s: float = 0.0
    peak_rss_mb: float | None = None
    sched_hosts: int = 0
    sched_waiting: int = 0
    """Items waiting for their host's turn."""
    sched_backoffs: int = 0
    sched_host_wait_s: float = 0.0
    sched_dropped: int = 0
    """Items dropped unfetched on a stop (never reported durable)."""
    written: int = 0
    """Rows handed to this process's own writer (a fetch-only Parquet run; 0 otherwise)."""

    def __add__(self, other: FetchProcessStats) -> FetchProcessStats:
        return FetchProcessStats(
            fetch=self.fetch + other.fetch,
            sink_wait_s=self.sink_wait_s + other.sink_wait_s,
            cpu_s=self.cpu_s + other.cpu_s,
            wall_s=self.wall_s + other.wall_s,
            peak_rss_mb=_max_rss(self.peak_rss_mb, other.peak_rss_mb),
            sched_hosts=self.sched_hosts + other.sched_hosts,
            sched_waiting=self.sched_waiting + other.sched_waiting,
            sched_backoffs=self.sched_backoffs + other.sched_backoffs,
            sched_host_wait_s=self.sched_host_wait_s + other.sched_host_wait_s,
            sched_dropped=self.sched_dropped + other.sched_dropped,
            written=self.written + other.written,
        )

    def phase_shares(self, workers: int, wall: float) -> dict[str, float]:
        """Share of the pool's time per phase, with the rest as idle.

        The pool is ``workers`` x wall clock, or the summed time of every fetch task when that is
        larger: tasks waiting for a host's clock or its robots.txt hold no connection slot, so more
        tasks than ``workers`` can be waiting at once, and the shares must still add up to 100%.
        """
        phases = self.fetch.phases.as_dict()
        busy = sum(phases.values()) + self.sink_wait_s
        pool = max(workers * wall, busy, 1e-9)
        shares = {k: v / pool for k, v in phases.items()}
        shares["sink"] = self.sink_wait_s / pool
        shares["idle"] = max(0.0, 1.0 - sum(shares.values()))
        return {k: round(v, 4) for k, v in shares.items()}

    def cpu_share(self) -> float:
        """The processes' CPU time over their wall clock (1.0: each kept a core busy)."""
        return round(self.cpu_s / self.wall_s, 4) if self.wall_s else 0.0


@dataclass(slots=True, frozen=True)
class ExtractStats:
    """One extract process: rows taken, rows rendered, and where its time went."""

    rows: int = 0
    rendered: int = 0
    busy_s: float = 0.0
    """Seconds rendering."""
    sink_wait_s: float = 0.0
    """Seconds waiting for room in a writer's ring."""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float | None = None

    def __add__(self, other: ExtractStats) -> ExtractStats:
        return ExtractStats(
            rows=self.rows + other.rows,
            rendered=self.rendered + other.rendered,
            busy_s=self.busy_s + other.busy_s,
            sink_wait_s=self.sink_wait_s + other.sink_wait_s,
            wall_s=self.wall_s + other.wall_s,
            cpu_s=self.cpu_s + other.cpu_s,
            peak_rss_mb=_max_rss(self.peak_rss_mb, other.peak_rss_mb),
        )

    def shares(self) -> dict[str, float]:
        """Rendering / waiting for the sink / idle, as shares of the pool's width times its wall clock."""
        pool = max(self.wall_s, 1e-9)
        rendering = self.busy_s / pool
        sink = self.sink_wait_s / pool
        return {"rendering": round(rendering, 4), "sink": round(sink, 4),
                "idle": round(max(0.0, 1 - rendering - sink), 4)}


@dataclass(slots=True, frozen=True)
class WriterStats:
    """One writer: a writer process, or the writer inside a fetch process (``in_fetch``)."""

    rows: int = 0
    busy_s: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    """The process's CPU seconds (0 in a fetch process: its CPU is the fetch stage's)."""
    peak_rss_mb: float | None = None
    sink_wait_s: float = 0.0
    held_peak_bytes: int = 0
    """Peak bytes of row groups held (in a fetch process); summed over processes, a bound."""
    in_fetch: bool = False

    def __add__(self, other: WriterStats) -> WriterStats:
        return WriterStats(
            rows=self.rows + other.rows,
            busy_s=self.busy_s + other.busy_s,
            wall_s=self.wall_s + other.wall_s,
            cpu_s=self.cpu_s + other.cpu_s,
            peak_rss_mb=_max_rss(self.peak_rss_mb, other.peak_rss_mb),
            sink_wait_s=self.sink_wait_s + other.sink_wait_s,
            held_peak_bytes=self.held_peak_bytes + other.held_peak_bytes,
            in_fetch=self.in_fetch or other.in_fetch,
        )


class _Mergeable(Protocol):
    def __add__(self, other: Self, /) -> Self: ...


M = TypeVar("M", bound=_Mergeable)


def merged(reports: Iterable[M], empty: M) -> M:
    """``empty + r1 + r2 + ...``: the reports of several processes as one."""
    total = empty
    for report in reports:
        total = total + report
    return total
