"""URL-seen checks against one sorted run of N keys, N from 1M to 100M: is a check's cost flat in N?

    python bench/bench_seen_checks.py --sizes 1,10,100 --out /tmp/bseen

For each size (millions of keys) writes a run as ``SeenStore`` spills it (sorted unique random
``uint64`` keys and a fence per 64-key page; untimed), then times ``_Run.contains`` on batches of
2,000, 20,000 and 200,000 random sorted keys (the dispatcher's flush sizes), best of ``--repeats``,
in CPU seconds and wall seconds, and the process's RSS before the checks and its peak after them
(VmHWM, reset once the run is written). The run file is in the page cache (just written), as a
crawl's recent runs are. Prints one JSON line per size and batch.

    python bench/bench_seen_checks.py --merge 40,12,4,4 --repeats 3 --out /tmp/bmerge

``--merge``: instead, one merge of runs of those sizes (millions of keys, disjoint random keys, written
once, the page cache warm) through ``SeenStore._merge_body``, ``--repeats`` times, each line the merge
thread's CPU in all and by part (``read``: ``_Run.read_into``; ``merge``: ``keys.merge_into``; ``write``:
``_write_keys``, the page-cache write; the rest is the window bookkeeping and the fences). ``--window``
overrides ``seen.WINDOW_KEYS``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from ccrawl.crawl.seen import PAGE_KEYS, _Run, unique


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
    ap.add_argument("--merge", default="", help="time one merge of runs of these sizes (millions of keys) instead")
    ap.add_argument("--window", type=int, default=0, help="with --merge: keys per merge window (seen.WINDOW_KEYS)")
    args = ap.parse_args()
    if args.merge:
        merge_parts(args)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    for millions in (float(s) for s in args.sizes.split(",")):
        n = int(millions * 1_000_000)
        keys = unique(rng.integers(0, 2**64 - 1, n, dtype=np.uint64))  # a sort: numpy 2.3+ np.unique hashes (slow)
        keys.astype("<u8").tofile(args.out / "r.u64")
        keys[::PAGE_KEYS].astype("<u8").tofile(args.out / "r.fence")
        del keys
        run = _Run(args.out, "r")
        Path("/proc/self/clear_refs").write_text("5")  # the peak from here: the checks', not the generator's
        base = _rss_mb()
        for batch in (int(b) for b in args.batches.split(",")):
            best_cpu = best_wall = float("inf")
            for _ in range(args.repeats):
                q = unique(rng.integers(0, 2**64 - 1, batch, dtype=np.uint64))
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


def merge_parts(args: argparse.Namespace) -> None:
    """One merge of runs of ``--merge`` sizes, CPU by part (see the module docstring)."""
    import shutil
    import sqlite3
    import threading
    from collections.abc import Callable

    from ccrawl.crawl import seen

    if args.window:
        seen.WINDOW_KEYS = args.window
    sizes = [int(float(m) * 1_000_000) for m in args.merge.split(",")]
    d = args.out / "merge"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    gen = np.random.default_rng(1)
    pool = seen.unique(gen.integers(0, 2**64, size=sum(sizes) + sum(sizes) // 100, dtype=np.uint64))
    gen.shuffle(pool)  # disjoint runs, as the store's are
    names, at = [], 0
    for i, n in enumerate(sizes):
        part = np.sort(pool[at:at + n])
        at += n
        names.append(f"run-{i + 1:08d}")
        with open(d / f"{names[-1]}.u64", "wb") as f:
            seen._write_keys(f, part)
        with open(d / f"{names[-1]}.fence", "wb") as f:
            seen._write_keys(f, part[::PAGE_KEYS].copy())
    del pool, part
    parts: dict[str, float] = {}

    def timed(fn: Callable[..., object], label: str) -> Callable[..., object]:
        def call(*a: object, **k: object) -> object:
            if not threading.current_thread().name.startswith("seen-merge"):
                return fn(*a, **k)
            t = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                parts[label] = parts.get(label, 0.0) + time.thread_time() - t
        return call

    seen._Run.read_into = timed(seen._Run.read_into, "read")  # type: ignore[method-assign]
    seen.merge_into = timed(seen.merge_into, "merge")  # type: ignore[assignment]
    seen._write_keys = timed(seen._write_keys, "write")  # type: ignore[assignment]
    for _ in range(args.repeats):
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES('seen_runs', ?)", (",".join(names),))
        store = seen.SeenStore(db, d, mem_keys=1 << 30)
        for name in names:  # the page cache warm, as a crawl's recent runs are
            (d / f"{name}.u64").read_bytes()
        parts.clear()
        store.settle()  # starts the merge of all of them in its thread
        t0 = time.perf_counter()
        store._wait_merge()
        wall = time.perf_counter() - t0
        assert store._merging is not None and store._merge_error is None
        out = store._merging[1]
        store._merging = None  # not adopted: the inputs stay for the next repeat, the output goes
        cpu = store.merge_cpu_s
        written = store.merged_keys
        got = np.fromfile(d / f"{out}.u64", dtype="<u8")
        assert len(got) == sum(sizes) and bool((got[1:] > got[:-1]).all())
        del got
        print(json.dumps({"merge_of": sizes, "window_keys": seen.WINDOW_KEYS, "keys_written": written,
                          "cpu_s": round(cpu, 3), "ns_per_key": round(cpu / written * 1e9, 1), "wall_s": round(wall, 2),
                          **{f"{k}_cpu_s": round(v, 3) for k, v in parts.items()},
                          "load": round(os.getloadavg()[0], 1)}), flush=True)
        store.close()
        db.close()
        for p in d.glob(f"{out}.*"):
            p.unlink()
    shutil.rmtree(d)


if __name__ == "__main__":
    main()
