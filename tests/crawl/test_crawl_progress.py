"""``crawl run`` prints progress while it runs (it printed nothing before its summary): JSON ticks
with fetched, queued, hosts, rate, bytes and errors, and done/total against --max-pages; in one
process and summed over the partitions of a multi-process run. The CLI runs as a subprocess
against the synthetic web on loopback."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fetchers", [1, 2])
def test_crawl_run_prints_json_ticks_with_done_of_max_pages_rate_queue_hosts_and_errors(
    web: SynthWeb, tmp_path: Path, fetchers: int
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(web.url(f"site{i}.test") + "\n" for i in range(12))
                     + web.url("site0.test", "/fault/reset") + "\n")
    cmd = [sys.executable, "-m", "ccrawl", "crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "w"),
           "--state", str(tmp_path / "s.db"), "--delay", "1s", "--max-depth", "3", "--max-pages", "60",
           "--resolve", "*.test=127.0.0.1", "-j", "8", "--fetchers", str(fetchers), "--progress", "json",
           "-o", "json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    ticks = [json.loads(x) for x in done.stderr.splitlines() if x.startswith('{"event": "tick"')]
    assert len(ticks) >= 3, done.stderr
    assert all(t["total"] == 60 for t in ticks), ticks  # --max-pages, from the first tick
    first, last = ticks[0], ticks[-1]
    assert first["done"] == 0 and first["percent"] == 0.0 and "eta_s" in first
    mid = [t for t in ticks[1:-1] if 0 < t["done"] < 60]
    assert mid, ticks  # it said something before the end
    assert all(t["rate"] > 0 and t["hosts"] > 0 and t["queued"] >= 0 for t in mid), mid
    assert any(t["eta_s"] is not None for t in mid), mid
    for a, b in itertools.pairwise(ticks):
        assert a["fetched"] <= b["fetched"] and a["bytes"] <= b["bytes"], (a, b)
    assert last["final"] and last["done"] == summary["total_fetched"] == 60 and last["percent"] == 100.0
    assert last["fetched"] == summary["fetched"] and last["failed"] == summary["failed"] >= 1, (last, summary)
    assert sum(last["errors"].values()) == last["failed"], last  # the reset seed, by class
    assert last["bytes"] > 0 and last["queued"] == summary["queued"]
