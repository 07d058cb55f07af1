"""Times three native hot paths against their pure-Python twins and a PyPI peer, in under a minute.

    python bench/bench_native.py            # table on stdout
    python bench/bench_native.py --json     # one JSON object per measurement

- simhash64 over ~5 kB Markdown-like documents: native, twin, and the ``simhash`` package
  (``Simhash(text).value``; its own features: char 4-grams, md5) as the peer.
- gzip member listing of a generated ~20 MB ``.warc.gz``: native, twin, and fastwarc's
  ``ArchiveIterator`` reading ``stream_pos`` (which also parses each record's WARC headers).
- range planning of 200,000 random locations over 2,000 files: native and twin (the naive
  one-request-per-record plan has nothing to compute, so it has no peer).

Each figure is the median of repeated runs; every case stops repeating after ``--budget`` seconds
(default 3) or ``--repeat`` runs, whichever is first. Inputs are generated from fixed seeds, so
reruns measure the same work.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl import accel
from ccrawl.extract import simhash as simhash_mod
from ccrawl.net import ranges
from ccrawl.warc import members

_WORDS = (
    "the of and to in is was for on that with as by at from crawl archive record index segment page "
    "domain host robots sitemap link anchor title body river mountain village market harbour winter "
    "summer bridge castle forest garden library hà nội đường phố 東京 日本語 русский straße café"
)
WORDS = _WORDS.split()


def median_time(fn: Callable[[], object], repeat: int, budget: float) -> tuple[float, int]:
    """Median seconds of one call to ``fn`` and how many runs that median is over."""
    fn()  # warm-up: imports, caches, page faults
    times: list[float] = []
    deadline = time.perf_counter() + budget
    while len(times) < repeat and (not times or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def documents(n: int, words: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        parts = []
        for i in range(words):
            parts.append(rng.choice(WORDS))
            if i % 12 == 11:
                parts.append(rng.choice([".", ",", "\n\n#", "\n*"]))
        docs.append(" ".join(parts))
    return docs


def write_warc(path: Path, records: int, seed: int = 2) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    docs = documents(64, 2500, seed)
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i in range(records):
            body = ("<html><body><p>" + rng.choice(docs) + "</p></body></html>").encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            rec = writer.create_warc_record(
                f"http://host{i % 97}.example/{i}", "response", payload=io.BytesIO(body), http_headers=http
            )
            writer.write_record(rec)


def bench_simhash(args: argparse.Namespace, native: Any) -> list[dict[str, Any]]:
    from simhash import Simhash

    docs = documents(200, 800)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    cases: dict[str, Callable[[], object]] = {"twin": lambda: [simhash_mod.simhash64_py(d) for d in docs]}
    if native:
        cases["native"] = lambda: [native.simhash64(d) for d in docs]
    cases["peer simhash.Simhash"] = lambda: [Simhash(d).value for d in docs]
    out = []
    for name, fn in cases.items():
        secs, runs = median_time(fn, args.repeat, args.budget)
        out.append(
            {"case": "simhash64", "impl": name, "ops_per_s": len(docs) / secs, "mb_per_s": mb / secs, "runs": runs}
        )
    return out


def bench_gzmembers(args: argparse.Namespace, native: Any, tmp: Path) -> list[dict[str, Any]]:
    from fastwarc.warc import ArchiveIterator

    path = tmp / "bench.warc.gz"
    write_warc(path, 2000)
    size_mb = path.stat().st_size / 1e6

    def scan(fn: Callable[..., Any]) -> Callable[[], object]:
        def run() -> object:
            with path.open("rb") as fh:
                return sum(1 for _ in fn(fh))

        return run

    def fastwarc_offsets() -> object:
        with path.open("rb") as fh:
            return [r.stream_pos for r in ArchiveIterator(fh, parse_http=False)]

    count = sum(1 for _ in members.iter_members_py(path.open("rb")))
    cases: dict[str, Callable[[], object]] = {"twin": scan(members.iter_members_py)}
    if native:
        cases["native"] = scan(native.iter_members)
    cases["peer fastwarc stream_pos"] = fastwarc_offsets
    out = []
    for name, fn in cases.items():
        secs, runs = median_time(fn, args.repeat, args.budget)
        out.append(
            {
                "case": f"gzip members ({count} members, {size_mb:.1f} MB file)",
                "impl": name,
                "ops_per_s": count / secs,
                "mb_per_s": size_mb / secs,
                "runs": runs,
            }
        )
    return out


def bench_ranges(args: argparse.Namespace, native: Any) -> list[dict[str, Any]]:
    rng = random.Random(3)
    files = [f"crawl-data/CC-MAIN-2026-30/segments/{i}/warc/part-{i:05d}.warc.gz" for i in range(2000)]
    locs = [(rng.choice(files), rng.randrange(1_000_000_000), rng.randrange(500, 40_000)) for _ in range(200_000)]
    cases: dict[str, Callable[[], object]] = {"twin": lambda: ranges.plan_groups_py(locs)}
    if native:
        cases["native"] = lambda: native.plan_groups(locs)
    out = []
    for name, fn in cases.items():
        secs, runs = median_time(fn, args.repeat, args.budget)
        out.append(
            {
                "case": f"range plan ({len(locs)} locations)",
                "impl": name,
                "ops_per_s": len(locs) / secs,
                "mb_per_s": None,
                "runs": runs,
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="most runs per case (default 9)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per case before it stops repeating")
    parser.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = parser.parse_args()

    started = time.perf_counter()
    mods = {name: accel.native(name) for name in ("simhash", "gzmembers", "ranges")}
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        results += bench_simhash(args, mods["simhash"])
        results += bench_gzmembers(args, mods["gzmembers"], Path(tmp))
        results += bench_ranges(args, mods["ranges"])
    elapsed = time.perf_counter() - started

    if args.json:
        for row in results:
            print(json.dumps(row))
    else:
        print(f"{'case':<45} {'impl':<26} {'ops/s':>12} {'MB/s':>9} {'runs':>5}")
        for row in results:
            mbs = f"{row['mb_per_s']:.1f}" if row["mb_per_s"] is not None else "-"
            print(f"{row['case']:<45} {row['impl']:<26} {row['ops_per_s']:>12,.0f} {mbs:>9} {row['runs']:>5}")
        missing = [name for name, mod in mods.items() if mod is None]
        if missing:
            print(f"native not loaded for: {', '.join(missing)} (build it, or unset CCRAWL_NO_EXTENSIONS)")
        print(f"total {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
