"""Host-sorted work list under a per-host delay: pages/s against the politeness bound hosts/delay.

    python -m bench.recrawl_hostsorted --hosts 200 --pages 10 --delay 0.5 --workers 32 --repeats 3

Serves the synthetic web (nginx when installed; bench/web.py), writes the work list host by host
(every page of h0.test, then of h1.test, ...: the order of a SURT-sorted index), runs
``ccrawl recrawl run --no-extract`` with a journal, and reads back from the capture rows:

- pages/s over the fetching itself (first request start to last, from ``fetched_at``) and over
  the whole command (process start-up included);
- the bound ``hosts / delay`` and the ratio to it;
- the smallest gap between two request starts to one host (must not be under the delay).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import DOMAIN, prepare_site, serve, write_worklist  # noqa: E402


def one_run(worklist: Path, work: Path, *, delay: float, workers: int, extra: list[str]) -> dict[str, float]:
    import pyarrow.parquet as pq

    out = work / "out"
    argv = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(worklist), "--column", "url",
            "--out", str(out), "--state", str(work / "state.json"), "--delay", f"{delay}s",
            "--workers", str(workers), "--no-extract", "--resolve", f"*.{DOMAIN}=127.0.0.1",
            "--progress", "none", "--journal", str(work / "journal.jsonl"), "-q", *extra]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, cwd=REPO)
    wall = time.perf_counter() - t0
    rows = pq.read_table(sorted(out.glob("*.parquet")), columns=["host", "fetched_at", "status"]).to_pylist()
    by_host: dict[str, list[int]] = {}
    for r in rows:
        by_host.setdefault(r["host"], []).append(r["fetched_at"])
    gaps = [b - a for ts in by_host.values() for a, b in itertools.pairwise(sorted(ts))]
    first, last = min(r["fetched_at"] for r in rows), max(r["fetched_at"] for r in rows)
    events = [json.loads(line) for line in (work / "journal.jsonl").read_text().splitlines()]
    end = next(e for e in reversed(events) if e.get("event") == "end")
    return {"summary_pages_per_s": end["pages_per_s"], "rows": len(rows),
            "ok": sum(1 for r in rows if r["status"] == 200), "wall_s": wall,
            "fetch_s": (last - first) / 1000, "pages_per_s_wall": len(rows) / wall,
            "pages_per_s_fetching": len(rows) / max((last - first) / 1000, 1e-9),
            "min_gap_ms": min(gaps) if gaps else 0.0, "command": shlex.join(argv)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=10)
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--workers", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--extra", default="", help="more flags for recrawl run")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="hostsorted-"))
    prepare_site(root / "site", pages=args.pages)
    bound = args.hosts / args.delay
    with serve(root / "site", hosts=args.hosts, pages=args.pages) as (which, port):
        wl = write_worklist(root, args.hosts, args.pages, port, host_sorted=True)
        runs = []
        for i in range(args.repeats):
            work = Path(tempfile.mkdtemp(prefix=f"run{i}-", dir=root))
            r = one_run(wl, work, delay=args.delay, workers=args.workers, extra=shlex.split(args.extra))
            runs.append(r)
            print(f"  #{i + 1}: {r['rows']} rows ({r['ok']} ok) {r['pages_per_s_fetching']:.0f} pages/s fetching, "
                  f"{r['summary_pages_per_s']:.0f} on the summary line, "
              f"{r['pages_per_s_wall']:.0f} over the command's {r['wall_s']:.1f}s; smallest same-host gap "
                  f"{r['min_gap_ms']:.0f} ms", file=sys.stderr)
    fetching = statistics.median(r["pages_per_s_fetching"] for r in runs)
    wall = statistics.median(r["pages_per_s_wall"] for r in runs)
    line = statistics.median(r["summary_pages_per_s"] for r in runs)
    summary = {"server": which, "hosts": args.hosts, "pages": args.pages, "delay": args.delay,
               "workers": args.workers, "bound_pages_per_s": bound,
               "median_pages_per_s_fetching": fetching,
               "median_pages_per_s_summary": line, "ratio_to_bound_summary": line / bound,
               "median_pages_per_s_wall": wall,
               "ratio_to_bound_fetching": fetching / bound, "ratio_to_bound_wall": wall / bound,
               "min_same_host_gap_ms": min(r["min_gap_ms"] for r in runs), "command": runs[0]["command"]}
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
