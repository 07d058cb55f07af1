"""The timing line tells a pool waiting on the network from fetch processes that are CPU-bound."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.stats import FetchProcessStats, merged
from ccrawl.recrawl.summary import RunSummary
from ccrawl.testing.synthweb import SynthWeb


def _timing(s: RunSummary) -> str:
    return next(line for line in s.lines() if line.startswith("timing: "))


def test_a_busy_fetch_process_is_called_cpu_bound_not_idle() -> None:
    line = _timing(RunSummary(fetch_cpu=0.97, phase_shares={"ttfb": 0.05, "sink": 0.01, "idle": 0.94}))
    assert "no request 94%" in line and "idle" not in line
    assert "fetch processes on CPU 97%: CPU-bound" in line


def test_a_process_waiting_on_the_network_is_not_called_cpu_bound() -> None:
    line = _timing(RunSummary(fetch_cpu=0.12, phase_shares={"ttfb": 0.85, "idle": 0.15}))
    assert line.endswith("fetch processes on CPU 12%") and "CPU-bound" not in line


def test_cpu_and_wall_seconds_add_up_over_fetch_processes() -> None:
    total = merged([FetchProcessStats(cpu_s=1.5, wall_s=2.0), FetchProcessStats(cpu_s=0.5, wall_s=2.0)],
                   FetchProcessStats())
    assert (total.cpu_s, total.wall_s) == (2.0, 4.0)


def test_a_run_against_a_slow_server_reports_a_low_cpu_share(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    """Four pages whose server answers after a second: the fetch process sleeps, so its share is small."""
    host = web.page_urls()[0].split("/")[2]
    urls = [f"http://{host}/fault/slow-ttfb?s=1&n={i}" for i in range(4)]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    s = run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), delay=0, workers=4, timeout=5,
                    resolve=web.resolve, no_extract=True)
    assert s.fetched == 4
    assert 0.0 < s.fetch_cpu < 0.5, s.fetch_cpu
    assert s.as_dict()["fetch_cpu"] == s.fetch_cpu
    assert "CPU-bound" not in _timing(s)
