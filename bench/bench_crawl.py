"""crawl run throughput: worker scaling at --delay 0, against recrawl run fetch-only, and 200 hosts at 1 s.

    python bench/bench_crawl.py --hosts 200 --pages 50 --repeats 3 --out /tmp/bcrawl

Serves ``bench.web``'s pages (nginx when installed), then runs, interleaved per repeat:
``crawl run --delay 0 --max-depth 0 --no-robots`` over every URL at -j 32, 128 and 256 (WARC
output on, fetch processes at their default: one per core), the same at -j 256 with ``--fetchers 1``
(one process), the same at -j 256 without ``--out``, and ``recrawl run --no-extract`` fetch-only over
the same URLs; then one ``crawl run
--delay 1s`` (robots on) over ``--delay-hosts`` hosts x ``--delay-pages`` pages. pages/s is URLs
over the command's wall clock (start-up included) for the scaling rows, and the run's own
``pages_per_second`` (fetch loop only) for the delay row. Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.web import prepare_site, serve, urls, write_worklist

CPU: dict[str, list[float]] = {}
"""CPU seconds (user + sys of the command's whole process tree) per row, beside the wall clock."""


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _timed(cmd: list[str], row: str = "") -> tuple[float, dict[str, object]]:
    start, cpu = time.perf_counter(), _cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    took = time.perf_counter() - start
    if row:
        CPU.setdefault(row, []).append(_cpu() - cpu)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])}...: exit {proc.returncode}: {proc.stderr[-800:]}")
    try:
        summary = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    except ValueError:
        summary = {}
    return took, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", default="32,128,256")
    parser.add_argument("--delay-hosts", type=int, default=200)
    parser.add_argument("--delay-pages", type=int, default=20)
    parser.add_argument("--curve", action="store_true",
                        help="only the worker curve: each -j with and without --out, interleaved")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    site = args.out / "site"
    prepare_site(site, pages=max(args.pages, args.delay_pages), page_bytes=24_000)
    py = [sys.executable, "-m", "ccrawl"]
    resolve = ["--resolve", "*.test=127.0.0.1"]
    results: dict[str, list[float]] = {}
    with serve(site, hosts=args.hosts, pages=args.pages) as (which, port):
        wl = write_worklist(args.out, args.hosts, args.pages, port)
        seeds = args.out / "urls.txt"
        n = args.hosts * args.pages
        if args.curve:
            for rep in range(args.repeats):
                for workers in [int(w) for w in args.workers.split(",")]:
                    for warc in (False, True):
                        work = args.out / f"curve-{workers}-{warc}-{rep}"
                        shutil.rmtree(work, ignore_errors=True)
                        work.mkdir(parents=True)
                        out = ["--out", str(work / "warc")] if warc else []
                        took, _ = _timed([*py, "crawl", "run", "--seeds", str(seeds), *out, "--state",
                                          str(work / "state.db"), "--delay", "0", "--no-robots", "-j", str(workers),
                                          *resolve, "-o", "json"])
                        results.setdefault(f"j{workers}_{'warc' if warc else 'no_warc'}", []).append(n / took)
                        shutil.rmtree(work, ignore_errors=True)
            print(json.dumps({k: [round(statistics.median(v)), [round(x) for x in v]] for k, v in results.items()}))
            return
        for rep in range(args.repeats):
            for workers in [int(w) for w in args.workers.split(",")]:
                work = args.out / f"crawl-{workers}-{rep}"
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir(parents=True)
                took, summary = _timed([*py, "crawl", "run", "--seeds", str(seeds), "--out", str(work / "warc"),
                                        "--state", str(work / "state.db"), "--delay", "0", "--no-robots",
                                        "-j", str(workers), *resolve, "-o", "json"], f"crawl_run_j{workers}")
                assert summary.get("fetched") == n, summary
                results.setdefault(f"crawl_run_j{workers}", []).append(n / took)
                shutil.rmtree(work, ignore_errors=True)
            work = args.out / f"crawl-onefetcher-{rep}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            took, summary = _timed([*py, "crawl", "run", "--seeds", str(seeds), "--out", str(work / "warc"),
                                    "--state", str(work / "state.db"), "--delay", "0", "--no-robots", "-j", "256",
                                    "--fetchers", "1", *resolve, "-o", "json"], "crawl_run_j256_fetchers1")
            assert summary.get("fetched") == n, summary
            results.setdefault("crawl_run_j256_fetchers1", []).append(n / took)
            shutil.rmtree(work, ignore_errors=True)
            work = args.out / f"crawl-nowarc-{rep}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            took, summary = _timed([*py, "crawl", "run", "--seeds", str(seeds), "--state", str(work / "state.db"),
                                    "--delay", "0", "--no-robots", "-j", "256", *resolve, "-o", "json"],
                                   "crawl_run_j256_no_warc")
            results.setdefault("crawl_run_j256_no_warc", []).append(n / took)
            shutil.rmtree(work, ignore_errors=True)
            work = args.out / f"recrawl-{rep}"
            shutil.rmtree(work, ignore_errors=True)
            took, _ = _timed([*py, "recrawl", "run", "--from", str(wl), "--column", "url", "--out", str(work),
                              "--delay", "0", "--workers", "256", "--no-extract", *resolve, "-q"],
                             "recrawl_run_fetch_only")
            results.setdefault("recrawl_run_fetch_only", []).append(n / took)
            shutil.rmtree(work, ignore_errors=True)
        delay_seeds = args.out / "delay-urls.txt"
        delay_seeds.write_text("".join(u + "\n" for u in urls(args.delay_hosts, args.delay_pages, port)))
        work = args.out / "delay"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        took, summary = _timed([*py, "crawl", "run", "--seeds", str(delay_seeds), "--out", str(work / "warc"),
                                "--state", str(work / "state.db"), "--delay", "1s", "-j", "256", *resolve,
                                "-o", "json"])
        shutil.rmtree(work, ignore_errors=True)
    medians = {k: statistics.median(v) for k, v in results.items()}
    peer = medians["recrawl_run_fetch_only"]
    peers = results["recrawl_run_fetch_only"]
    report: dict[str, object] = {
        "server": which, "urls": n, "cpus": os.cpu_count(),
        "median_pages_per_s": {k: round(v) for k, v in medians.items()},
        "vs_recrawl_fetch_only": {k: round(v / peer, 2) for k, v in medians.items() if k.startswith("crawl_")},
        # per repeat, the two runs side by side (interleaved, so the same load)
        "vs_recrawl_per_repeat": {k: [round(a / b, 2) for a, b in zip(v, peers, strict=True)]
                                  for k, v in results.items() if k.startswith("crawl_")},
        "all_pages_per_s": {k: [round(x) for x in v] for k, v in results.items()},
        "cpu_ms_per_page": {k: round(statistics.median(v) * 1000 / n, 3) for k, v in CPU.items()},
        "delay_1s": {"hosts": args.delay_hosts, "pages": args.delay_hosts * args.delay_pages,
                     "pages_per_second": summary.get("pages_per_second"), "wall_s": round(took, 1)},
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
