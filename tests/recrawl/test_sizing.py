"""Defaults from the machine: process counts from cores and stage costs; the summary names the ceiling."""

from __future__ import annotations

from ccrawl.recrawl.params import RunParams
from ccrawl.recrawl.sizing import STAGE_COST_MS, stage_processes
from ccrawl.recrawl.summary import RunSummary


def test_cores_are_split_by_stage_cost_and_every_stage_gets_a_process() -> None:
    assert stage_processes(1, 256, extracting=True) == (1, 1, 1)
    f, x, w = stage_processes(64, 4096, extracting=True)
    assert x > f > 1 and x > w >= 1, "rendering costs most, so it gets most processes"
    assert stage_processes(4, 256, extracting=False) [1] == 0
    # WARC writing costs more than Parquet: the sink gets more processes, the case --writers is for
    assert stage_processes(8, 256, extracting=False, warc=True)[2] > stage_processes(8, 256, extracting=False)[2]
    # a stage that costs nothing still has its process; fetchers never outnumber what workers can fill
    assert stage_processes(64, 8, extracting=False, costs={**STAGE_COST_MS, "write": 0.0})[0] == 1


def test_runparams_fill_the_counts_from_the_machine_and_keep_explicit_ones() -> None:
    p = RunParams(source="x")
    assert p.fetchers and p.extractors and p.writers and p.dns_lookups, "complete once built"
    q = RunParams(source="x", fetchers=3, extractors=2, writers=5, workers=64)
    assert (q.fetchers, q.extractors, q.writers) == (3, 2, 5)


def test_the_summary_names_the_stage_that_was_the_ceiling() -> None:
    s = RunSummary(fetch_cpu=0.2, extract_shares={"rendering": 0.9, "sink": 0.05, "idle": 0.05}, writer_busy=0.3,
                   fetchers=1, extractors=2, writers=1, stage_cpu_ms={"fetch": 0.8, "extract": 2.1, "write": 0.4})
    line = next(x for x in s.lines() if x.startswith("ceiling: "))
    assert line.startswith("ceiling: extract (rendering 90% of 2 processes)") and "extract 2.10 ms" in line
    w = RunSummary(fetch_cpu=0.3, writer_busy=0.95, writers=1)
    assert w.ceiling()[0] == "write"
    idle = RunSummary(fetch_cpu=0.1, writer_busy=0.1, writers=1)
    assert idle.ceiling()[0] == "network"
