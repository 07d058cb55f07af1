"""The run summary: what a recrawl did and where its time went, as data and as stderr lines.

Every figure is computed from counters the processes report (:mod:`ccrawl.recrawl.stats`: fetch
stats, extract and writer busy time; ring peaks), so the lines are reproducible from the
``--journal`` ``end`` event, which carries the same :class:`RunSummary` as JSON;
``RunSummary(**summary.as_dict())`` gives the summary back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: How the line names the pool's shares: "idle" (the JSON key) is a slot with no request in
#: flight, which is waiting for work only when the fetch processes are not CPU-bound.
_PHASE_LABELS = {"idle": "no request"}
#: At or above this CPU share a fetch process is the bottleneck, whatever its pool shows.
CPU_BOUND = 0.9


@dataclass(slots=True)
class RunSummary:
    """What one ``recrawl run`` did."""

    fetched: int = 0
    """Rows written durably this run (an attempt each, failures included)."""
    ok: int = 0
    failed: int = 0
    not_modified: int = 0
    bytes: int = 0
    """Body bytes fetched."""
    files: list[str] = field(default_factory=list)
    """Output files sealed this run."""
    part: int = 0
    row: int = 0
    done: bool = False
    stopped_by: str = "end"
    """``end`` (list walked out), ``max_pages``, ``signal`` or ``nothing`` (already done)."""
    rows_read: int = 0
    dropped_not_owned: int = 0
    dropped_empty: int = 0
    skipped_durable: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    status_classes: dict[str, int] = field(default_factory=dict)
    robots: dict[str, float | int | bool] = field(default_factory=dict)
    """:meth:`RobotsStats.as_dict <ccrawl.fetch.stats.RobotsStats.as_dict>` over the fetch processes."""
    dns: dict[str, float | int] = field(default_factory=dict)
    """:meth:`DnsStats.as_dict <ccrawl.fetch.stats.DnsStats.as_dict>` over the fetch processes."""
    elapsed_s: float = 0.0
    pages_per_s: float = 0.0
    phase_shares: dict[str, float] = field(default_factory=dict)
    """Share of the fetch pool's time (``workers`` x wall clock) per phase."""
    extract_shares: dict[str, float] = field(default_factory=dict)
    writer_busy: float = 0.0
    queue_peak_bytes: int = 0
    queue_bound_bytes: int = 0
    feeder_share: float = 0.0
    fetch_cpu: float = 0.0
    """The fetch processes' CPU time over their wall clock (1.0: each kept a core busy)."""
    workers: int = 0
    fetchers: int = 0
    extractors: int = 0
    writers: int = 0
    state: str = ""
    peak_rss_mb: dict[str, float] = field(default_factory=dict)
    """Peak resident memory per process kind (the largest process of each kind) and the parent."""
    stage_cpu_ms: dict[str, float] = field(default_factory=dict)
    """CPU milliseconds per page of each stage (fetch, extract, write), summed over its processes."""

    def ceiling(self) -> tuple[str, str]:
        """(stage, why): the stage that held the run back, from how busy each stage's processes were.

        The fetch processes' CPU share, the extract pool's rendering share and the writers' busy
        share are compared; the busiest is the ceiling when it is at least 60 % busy. Below that no
        stage is saturated and the run waited on the network, the hosts' clocks or the work list.
        """
        busy = {"fetch": (self.fetch_cpu, f"fetch processes on CPU {self.fetch_cpu:.0%} of {self.fetchers}")}
        if self.extract_shares:
            r = self.extract_shares.get("rendering", 0.0)
            busy["extract"] = (r, f"rendering {r:.0%} of {self.extractors} processes")
        if self.writers:
            busy["write"] = (self.writer_busy, f"writers busy {self.writer_busy:.0%} of {self.writers}")
        stage, (share, why) = max(busy.items(), key=lambda kv: kv[1][0])
        if share < 0.6:
            return "network", f"no stage saturated (busiest: {why}): hosts, their clocks or the work list set the pace"
        return stage, why

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def cpu_verdict(self) -> str:
        """The fetch processes' CPU share, and what it means for the pool's free slots."""
        if self.fetch_cpu >= CPU_BOUND:
            return (f"fetch processes on CPU {self.fetch_cpu:.0%}: CPU-bound, the free slots wait for "
                    "the process, not the network (more --fetchers, if cores are free)")
        return f"fetch processes on CPU {self.fetch_cpu:.0%}"

    def where(self) -> str:
        """Where the run left the work list, in words a newcomer reads without the docs."""
        at = f"part {self.part} row {self.row} of the work list"
        if self.stopped_by == "nothing":
            return (f"nothing to do: the checkpoint {self.state} says the whole work list is already done "
                    "(stopped by nothing)")
        if self.done:
            return "the whole work list is done"
        if not self.state:
            return (f"stopped by {self.stopped_by} at {at}; nothing was checkpointed (no --out or --state), "
                    "so a rerun starts from the beginning")
        return f"stopped by {self.stopped_by} at {at}; the same command resumes from there (checkpoint {self.state})"

    def lines(self) -> list[str]:
        """The human summary printed on stderr at the end of a run."""
        mb = 1024 * 1024
        out = [
            f"recrawl: {self.fetched} fetched ({self.ok} ok, {self.failed} failed, {self.not_modified} not modified), "
            f"{self.bytes / mb:.1f} MB of bodies, {len(self.files)} file{'s' * (len(self.files) != 1)} sealed; "
            + self.where(),
            f"work list: {self.rows_read} rows read, {self.dropped_not_owned} not this shard's, "
            f"{self.dropped_empty} empty, {self.skipped_durable} already written",
        ]
        if self.errors:
            parts = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items(), key=lambda kv: -kv[1]) if v)
            out.append(f"failures by class: {parts or 'none'}")
        if self.robots.get("enabled"):
            r = self.robots
            out.append(
                f"robots: {r.get('fetched', 0)} robots.txt fetched, {r.get('disallowed_urls', 0)} URLs disallowed, "
                f"{r.get('unreachable', 0)} hosts unreachable (RFC 9309: treated as disallow)"
            )
        else:
            out.append("robots off (a recrawl does not check robots.txt unless --robots is given)")
        d = self.dns
        out.append(
            f"dns: {d.get('lookups', 0)} lookups, {d.get('cache_hits', 0)} cache hits, "
            f"{d.get('overridden', 0)} overridden, {d.get('failures', 0)} failures, "
            f"peak {d.get('peak_in_flight', 0)} in flight"
        )
        shares = " ".join(f"{_PHASE_LABELS.get(k, k)} {v:.0%}" for k, v in self.phase_shares.items())
        out.append(
            f"timing: {self.pages_per_s:.1f} pages/s over {self.elapsed_s:.1f}s with {self.workers} workers "
            f"in {self.fetchers} fetch processes; pool: {shares}; {self.cpu_verdict()}"
        )
        stage, why = self.ceiling()
        cost = ", ".join(f"{k} {v:.2f} ms" for k, v in self.stage_cpu_ms.items())
        out.append(f"ceiling: {stage} ({why})" + (f"; CPU per page: {cost}" if cost else ""))
        if self.extract_shares:
            x = self.extract_shares
            out.append(
                f"extract pool ({self.extractors} processes): rendering {x.get('rendering', 0):.0%}, "
                f"waiting for the sink {x.get('sink', 0):.0%}, idle {x.get('idle', 0):.0%}"
            )
        out.append(
            f"writers ({self.writers}): busy {self.writer_busy:.0%} of the wall clock; queue peak "
            f"{self.queue_peak_bytes / mb:.1f} MB of {self.queue_bound_bytes / mb:.0f} MB bound; "
            f"feeder busy {self.feeder_share:.0%}"
        )
        if self.peak_rss_mb:
            out.append("memory: peak RSS " + ", ".join(f"{k} {v:.0f} MB" for k, v in self.peak_rss_mb.items()))
        return out
