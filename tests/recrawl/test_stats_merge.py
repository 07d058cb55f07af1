"""Merging the recrawl processes' reports: the rules each ``__add__`` applies, and a summary's round trip."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

from ccrawl.fetch.result import Phases
from ccrawl.fetch.stats import FetchStats
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.messages import ExtractReport, FetchReport, WriterReport
from ccrawl.recrawl.stats import ExtractStats, FetchProcessStats, WriterStats, merged
from ccrawl.recrawl.summary import RunSummary
from ccrawl.testing.synthweb import SynthWeb


def test_fetch_process_reports_add_clocks_and_counts_and_keep_the_largest_memory() -> None:
    a = FetchProcessStats(fetch=FetchStats(ok=3, failed=1), sink_wait_s=0.5, cpu_s=1.5, wall_s=2.0, peak_rss_mb=80.0,
                          sched_hosts=4, sched_waiting=2, sched_backoffs=1, sched_host_wait_s=0.25, sched_dropped=0,
                          written=3)
    b = FetchProcessStats(fetch=FetchStats(ok=5, failed=0), sink_wait_s=0.25, cpu_s=0.5, wall_s=2.0,
                          peak_rss_mb=120.5, sched_hosts=1, sched_waiting=0, sched_backoffs=2,
                          sched_host_wait_s=1.0, sched_dropped=7, written=5)
    t = merged([a, b], FetchProcessStats())
    assert (t.fetch.ok, t.fetch.failed) == (8, 1)
    assert (t.sink_wait_s, t.cpu_s, t.wall_s, t.peak_rss_mb) == (0.75, 2.0, 4.0, 120.5)
    assert (t.sched_hosts, t.sched_waiting, t.sched_backoffs, t.sched_host_wait_s, t.sched_dropped, t.written) == (
        5, 2, 3, 1.25, 7, 8)
    assert t.cpu_share() == 0.5


def test_phase_shares_of_merged_reports_add_up_to_the_pool() -> None:
    f = FetchProcessStats(fetch=FetchStats(phases=Phases(ttfb=2.0, body=1.0)), sink_wait_s=1.0)
    shares = (f + f).phase_shares(workers=4, wall=2.0)  # pool 8 s; 6 s of phases, 2 s of sink wait
    assert shares == {"dns": 0.0, "connect": 0.0, "ttfb": 0.5, "body": 0.25, "robots": 0.0, "host_clock": 0.0,
                      "slot": 0.0, "sink": 0.25, "idle": 0.0}
    # more task time than workers x wall: the pool grows to it, the shares still add up
    assert sum(FetchProcessStats(fetch=FetchStats(phases=Phases(ttfb=9.0))).phase_shares(1, 1.0).values()) == 1.0


def test_extract_reports_merge_into_the_pool_shares() -> None:
    a = ExtractStats(rows=10, rendered=9, busy_s=3.0, sink_wait_s=1.0, wall_s=5.0, cpu_s=3.5, peak_rss_mb=90.0)
    b = ExtractStats(rows=6, rendered=6, busy_s=2.0, sink_wait_s=0.0, wall_s=5.0, cpu_s=2.5, peak_rss_mb=70.0)
    t = a + b
    assert t == ExtractStats(rows=16, rendered=15, busy_s=5.0, sink_wait_s=1.0, wall_s=10.0, cpu_s=6.0,
                             peak_rss_mb=90.0)
    assert t.shares() == {"rendering": 0.5, "sink": 0.1, "idle": 0.4}


def test_writer_reports_sum_held_peaks_as_a_bound_and_remember_a_writer_in_a_fetch_process() -> None:
    proc = WriterStats(rows=4, busy_s=0.5, wall_s=3.0, cpu_s=0.25, peak_rss_mb=60.0)
    in_fetch = WriterStats(rows=6, busy_s=0.25, wall_s=3.0, sink_wait_s=0.5, held_peak_bytes=1000, in_fetch=True)
    t = merged([in_fetch, proc, in_fetch], WriterStats())
    assert (t.rows, t.busy_s, t.wall_s, t.cpu_s, t.sink_wait_s) == (16, 1.0, 9.0, 0.25, 1.0)
    assert t.held_peak_bytes == 2000 and t.in_fetch and t.peak_rss_mb == 60.0
    # no process that measures its memory: no figure, rather than a zero
    assert merged([in_fetch, in_fetch], WriterStats()).peak_rss_mb is None


def test_reports_pickle_small_and_whole() -> None:
    report = FetchReport(3, 4096, FetchProcessStats(fetch=FetchStats(ok=1)), final=True, items=2)
    for msg in (report, ExtractReport(1, ExtractStats(rows=2)), WriterReport(0, WriterStats(rows=3), True)):
        assert pickle.loads(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)) == msg
    assert len(pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)) < 1500


def test_a_summary_written_by_a_run_round_trips(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    urls = web.page_urls()[:8] + web.catalog()["unknown-host"][:1]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    journal = tmp_path / "journal.jsonl"
    s = run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), delay=0, workers=4, timeout=5,
                    resolve=web.resolve, journal=str(journal))
    assert s.fetched == len(urls) and s.failed == 1 and s.ok == len(urls) - 1
    assert s.dns["lookups"] >= 0 and list(s.dns)[-1] == "cache_entries"
    assert s.robots == {"enabled": False}
    assert set(s.phase_shares) == {"dns", "connect", "ttfb", "body", "robots", "host_clock", "slot", "sink", "idle"}
    written = json.loads(json.dumps(s.as_dict()))
    back = RunSummary(**written)
    assert back == s and back.lines() == s.lines()
    end = [json.loads(line) for line in journal.read_text().splitlines() if '"event": "end"' in line][-1]
    del end["ts"], end["event"]
    assert RunSummary(**end) == s
