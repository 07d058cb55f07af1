"""The throughput harness end to end on a tiny web: every system it is asked for is measured,
the scaling curves run over their own longer list, and the gain ratio comes from runs on that list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_harness_scaling_curves_use_their_own_longer_list(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, "bench/recrawl_bench.py", "--hosts", "5", "--pages", "4", "--repeats", "1",
         "--scaling", "--scale-workers", "", "--scale-pages", "8", "--only", "aiohttp-1proc,ccrawl-fetch-only",
         "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    pages = {row["system"]: row for row in results["systems"]}
    samples = results["samples"]
    # the main list is hosts x pages; the curves run hosts x --scale-pages, both sides of the ratio
    assert [s["pages"] for s in samples["aiohttp-1proc"]] == [20]
    assert [s["pages"] for s in samples["ccrawl-fetch-only"]] == [20]
    for system in ("scale-aiohttp-1proc", "scale-fetchers-1", "scale-fetchers-1-no-sink"):
        assert [s["pages"] for s in samples[system]] == [40], system
    cores = os.cpu_count() or 1
    gain_peer = pages[f"scale-aiohttp-{cores}proc"]["pages_per_s"] / pages["scale-aiohttp-1proc"]["pages_per_s"]
    gain_engine = pages[f"scale-fetchers-{cores}"]["pages_per_s"] / pages["scale-fetchers-1"]["pages_per_s"]
    ratio = results["ratios"]["engine second-process gain / peer second-process gain"]
    assert ratio == pytest.approx(gain_engine / gain_peer)
    assert len((out / "scale" / "urls.txt").read_text().split()) == 40
    # the plot needs the bench extra (matplotlib); without it the harness says so instead
    assert (out / "recrawl.png").is_file() or "matplotlib not installed" in proc.stderr
