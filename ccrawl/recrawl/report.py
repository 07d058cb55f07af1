"""Turns a finished pipeline's counters into its :class:`RunSummary`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccrawl.recrawl.summary import RunSummary, aggregate_fetch, extract_shares, phase_shares

if TYPE_CHECKING:
    from ccrawl.recrawl.pipeline import Pipeline


def summarize(pipe: Pipeline, elapsed: float) -> RunSummary:
    """The :class:`RunSummary` of a finished pipeline run."""
    p = pipe.p
    f = aggregate_fetch(list(pipe.fetch_stats.values()))
    wall = max(elapsed, 1e-9)
    part, row = pipe.tracker.position()
    writer_wall = sum(s.get("wall_s", 0.0) for s in pipe.writer_stats.values()) or wall
    return RunSummary(
        fetched=pipe.durable_rows,
        ok=f["ok"],
        failed=f["failed"],
        not_modified=f["not_modified"],
        bytes=f["body_bytes"],
        files=list(pipe.sealed_files),
        part=part,
        row=row,
        stopped_by=pipe.stop_reason or "end",
        rows_read=pipe.counts.rows_read,
        dropped_not_owned=pipe.counts.dropped_not_owned,
        dropped_empty=pipe.counts.dropped_empty,
        skipped_durable=pipe.counts.skipped_durable,
        errors={k: v for k, v in f["errors"].items() if v},
        status_classes=f["status_classes"],
        robots=f["robots"] if p.robots else {"enabled": False},
        dns=f["dns"],
        elapsed_s=round(elapsed, 3),
        pages_per_s=round(pipe.durable_rows / wall, 2),
        phase_shares=phase_shares(f, p.workers, wall),
        extract_shares=extract_shares(list(pipe.extract_stats.values())) if p.extracting else {},
        writer_busy=round(sum(s.get("busy_s", 0.0) for s in pipe.writer_stats.values()) / writer_wall, 4),
        queue_peak_bytes=max([pipe.queue_peak, *(c.peak() for c in pipe.counters),
                              # fetch processes that write their own rows: each one's peak, summed (a bound)
                              sum(s.get("held_peak_bytes", 0) for s in pipe.writer_stats.values())]),
        queue_bound_bytes=pipe.queue_bound,
        feeder_share=round(pipe.feeder_busy / wall, 4),
        fetch_cpu=round(f["cpu_s"] / f["wall_s"], 4) if f["wall_s"] else 0.0,
        workers=p.workers,
        fetchers=p.fetchers or 0,
        extractors=(p.extractors or 0) if p.extracting else 0,
        writers=p.writers or 0,
        state=p.state or "",
        peak_rss_mb=_peak_rss(pipe),
        stage_cpu_ms=_stage_cpu_ms(pipe),
    )


def _stage_cpu_ms(pipe: Pipeline) -> dict[str, float]:
    """CPU ms per durable row of each stage, summed over its processes."""
    pages = max(pipe.durable_rows, 1)
    out = {}
    for kind, stats in (("fetch", pipe.fetch_stats), ("extract", pipe.extract_stats), ("write", pipe.writer_stats)):
        if kind == "write" and any(s.get("in_fetch") for s in stats.values()):
            continue  # written in the fetch processes: their CPU is the fetch figure
        if stats:
            out[kind] = round(sum(s.get("cpu_s", 0.0) for s in stats.values()) / pages * 1000, 3)
    out["feed"] = round(pipe.parent_cpu_s / pages * 1000, 3)
    return out

def _peak_rss(pipe: Pipeline) -> dict[str, float]:
    from ccrawl.procs import peak_rss_mb

    out = {"parent": peak_rss_mb()}
    for kind, stats in (("fetch", pipe.fetch_stats), ("extract", pipe.extract_stats),
                        ("writer", pipe.writer_stats)):
        values = [s["peak_rss_mb"] for s in stats.values() if "peak_rss_mb" in s]
        if values:
            out[kind] = max(values)
    return out
