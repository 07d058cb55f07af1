"""Turns a finished pipeline's counters into its :class:`RunSummary`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccrawl.recrawl.stats import ExtractStats, FetchProcessStats, WriterStats, merged
from ccrawl.recrawl.summary import RunSummary

if TYPE_CHECKING:
    from ccrawl.recrawl.pipeline import Pipeline


def summarize(pipe: Pipeline, elapsed: float) -> RunSummary:
    """The :class:`RunSummary` of a finished pipeline run."""
    p = pipe.p
    f = merged(pipe.fetch_stats.values(), FetchProcessStats())
    x = merged(pipe.extract_stats.values(), ExtractStats())
    w = merged(pipe.writer_stats.values(), WriterStats())
    wall = max(elapsed, 1e-9)
    part, row = pipe.tracker.position()
    writer_wall = w.wall_s or wall
    reported = bool(pipe.fetch_stats)  # no report at all: no DNS or robots.txt figures either
    return RunSummary(
        fetched=pipe.durable_rows,
        ok=f.fetch.ok,
        failed=f.fetch.failed,
        not_modified=f.fetch.not_modified,
        bytes=f.fetch.body_bytes,
        files=list(pipe.sealed_files),
        part=part,
        row=row,
        stopped_by=pipe.stop_reason or "end",
        rows_read=pipe.counts.rows_read,
        dropped_not_owned=pipe.counts.dropped_not_owned,
        dropped_empty=pipe.counts.dropped_empty,
        skipped_durable=pipe.counts.skipped_durable,
        errors={k: v for k, v in f.fetch.errors.items() if v},
        status_classes=f.fetch.status_classes,
        robots=(f.fetch.robots_dict() if reported else {}) if p.robots else {"enabled": False},
        dns=f.fetch.dns_dict() if reported else {},
        elapsed_s=round(elapsed, 3),
        pages_per_s=round(pipe.durable_rows / wall, 2),
        phase_shares=f.phase_shares(p.workers, wall),
        extract_shares=x.shares() if p.extracting and pipe.extract_stats else {},
        writer_busy=round(w.busy_s / writer_wall, 4),
        # fetch processes that write their own rows: each one's peak, summed (a bound)
        queue_peak_bytes=max([pipe.queue_peak, *(c.peak() for c in pipe.counters), w.held_peak_bytes]),
        queue_bound_bytes=pipe.queue_bound,
        feeder_share=round(pipe.feeder_busy / wall, 4),
        fetch_cpu=f.cpu_share(),
        workers=p.workers,
        fetchers=p.fetchers or 0,
        extractors=(p.extractors or 0) if p.extracting else 0,
        writers=p.writers or 0,
        state=p.state or "",
        peak_rss_mb=_peak_rss(f, x, w),
        stage_cpu_ms=_stage_cpu_ms(pipe, f, x, w),
    )


def _stage_cpu_ms(pipe: Pipeline, f: FetchProcessStats, x: ExtractStats, w: WriterStats) -> dict[str, float]:
    """CPU ms per durable row of each stage, summed over its processes."""
    pages = max(pipe.durable_rows, 1)
    out = {}
    for kind, reports, cpu_s in (("fetch", pipe.fetch_stats, f.cpu_s), ("extract", pipe.extract_stats, x.cpu_s),
                                 ("write", pipe.writer_stats, w.cpu_s)):
        if kind == "write" and w.in_fetch:
            continue  # written in the fetch processes: their CPU is the fetch figure
        if reports:
            out[kind] = round(cpu_s / pages * 1000, 3)
    out["feed"] = round(pipe.parent_cpu_s / pages * 1000, 3)
    return out


def _peak_rss(f: FetchProcessStats, x: ExtractStats, w: WriterStats) -> dict[str, float]:
    from ccrawl.procs import peak_rss_mb

    out = {"parent": peak_rss_mb()}
    for kind, peak in (("fetch", f.peak_rss_mb), ("extract", x.peak_rss_mb), ("writer", w.peak_rss_mb)):
        if peak is not None:
            out[kind] = peak
    return out
