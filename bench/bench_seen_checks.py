"""URL-seen checks against one sorted run of N keys, N from 1M to 100M: is a check's cost flat in N?

    python bench/bench_seen_checks.py --sizes 1,10,100 --out /tmp/bseen

For each size (millions of keys) writes a run as ``SeenStore`` spills it (sorted unique random
``uint64`` keys and a fence per 64-key page; untimed), then times ``_Run.contains`` on batches of
2,000, 20,000 and 200,000 random sorted keys (the dispatcher's flush sizes), best of ``--repeats``,
in CPU seconds and wall seconds, and the process's RSS before the checks and its peak after them
(VmHWM, reset once the run is written). The run file is in the page cache (just written), as a
crawl's recent runs are. Prints one JSON line per size and batch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from ccrawl.crawl.seen import PAGE_KEYS, _Run


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,100", help="run sizes in millions of keys, comma-separated")
    ap.add_argument("--batches", default="2000,20000,200000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", required=True, type=Path, help="a directory for the run files (removed after)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    for millions in (float(s) for s in args.sizes.split(",")):
        n = int(millions * 1_000_000)
        keys = np.unique(rng.integers(0, 2**64 - 1, n, dtype=np.uint64))
        keys.astype("<u8").tofile(args.out / "r.u64")
        keys[::PAGE_KEYS].astype("<u8").tofile(args.out / "r.fence")
        del keys
        run = _Run(args.out, "r")
        Path("/proc/self/clear_refs").write_text("5")  # the peak from here: the checks', not the generator's
        base = _rss_mb()
        for batch in (int(b) for b in args.batches.split(",")):
            best_cpu = best_wall = float("inf")
            for _ in range(args.repeats):
                q = np.unique(rng.integers(0, 2**64 - 1, batch, dtype=np.uint64))
                c0, w0 = time.process_time(), time.perf_counter()
                run.contains(q)
                best_cpu = min(best_cpu, time.process_time() - c0)
                best_wall = min(best_wall, time.perf_counter() - w0)
            print(json.dumps({
                "keys": run.count, "batch": batch,
                "checks_per_cpu_s": round(batch / max(best_cpu, 1e-9)),
                "checks_per_s": round(batch / max(best_wall, 1e-9)),
                "rss_before_mb": round(base), "peak_rss_mb": round(_hwm_mb()),
            }), flush=True)
        run.close()
        for f in ("r.u64", "r.fence"):
            (args.out / f).unlink()


if __name__ == "__main__":
    main()
