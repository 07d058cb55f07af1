"""``ccrawl dedup`` at scale: a synthetic Markdown dataset of N rows, the report timed, recall checked.

    python bench/bench_dedup.py --rows 1000000 --distance 3 --sample 20000 --dir /tmp/dedup-bench

The dataset (written once into ``--dir`` and reused) has the export schema; every Markdown is at
least 512 bytes and distinct, except planted duplicates: ``--exact`` of the rows copy another row's
Markdown and fingerprint, ``--near`` copy another row's fingerprint with 1 to ``--distance`` bits
flipped; a donor sits at most 200 rows before its copy, so the contiguous slice the recall check
takes holds whole planted pairs. The other fingerprints are random 64-bit values (what simhash of unrelated texts looks
like). The run prints the report's wall time and peak RSS, then checks the banded search against
brute force on a random sample of ``--sample`` fingerprints: both must find the same pairs.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np


def build(out: Path, rows: int, exact: float, near: float, distance: int, seed: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.markdown.schema import arrow_schema

    rng = np.random.default_rng(seed)
    sims = rng.integers(-(2**63), 2**63 - 1, size=rows, dtype=np.int64)
    ids = np.arange(rows)
    source = ids.copy()  # the row whose Markdown a row carries
    kinds = rng.random(rows)
    # Donors sit close before the row, so a contiguous slice of the dataset holds whole pairs.
    donors = np.maximum(ids - rng.integers(1, 200, size=rows), 0)
    ex = (kinds < exact) & (donors != ids)
    nr = (kinds >= exact) & (kinds < exact + near) & (donors != ids)
    source[ex] = donors[ex]
    sims[ex] = sims[donors[ex]]
    flips = rng.integers(1, max(1, distance) + 1, size=rows)
    for i in np.nonzero(nr)[0].tolist():
        v = int(sims[donors[i]]) & 0xFFFF_FFFF_FFFF_FFFF
        for bit in rng.choice(64, size=int(flips[i]), replace=False).tolist():
            v ^= 1 << bit
        sims[i] = v - (1 << 64) if v >= 1 << 63 else v
    filler = ("lorem ipsum dolor sit amet consectetur " * 14)[:520]
    out.mkdir(parents=True, exist_ok=True)
    per = -(-rows // files)
    for f in range(files):
        lo, hi = f * per, min(rows, (f + 1) * per)
        md = [f"# document {int(source[i])}\n\n{filler}" for i in range(lo, hi)]
        lengths = [len(m.encode()) for m in md]
        table = pa.Table.from_pydict({
            "doc_id": [f"d{i}" for i in range(lo, hi)],
            "url": [f"https://h{i % 997}.example/{i}" for i in range(lo, hi)],
            "host": [f"h{i % 997}.example" for i in range(lo, hi)],
            "crawl_date": [0] * (hi - lo),
            "warc_record_id": [f"<urn:uuid:{i}>" for i in range(lo, hi)],
            "html_length": lengths,
            "markdown_length": lengths,
            "markdown": md,
            "language": ["eng"] * (hi - lo),
            "language_confidence": [1.0] * (hi - lo),
            "extractor": ["h2m@2"] * (hi - lo),
            "simhash": sims[lo:hi].tolist(),
        }, schema=arrow_schema())
        pq.write_table(table, out / f"{f:06d}.parquet", compression="zstd", row_group_size=5000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--distance", type=int, default=3)
    ap.add_argument("--sample", type=int, default=20_000)
    ap.add_argument("--exact", type=float, default=0.01)
    ap.add_argument("--near", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/dedup-bench"))
    args = ap.parse_args()

    from ccrawl.datasets.dedup import brute_force_pairs, dedup_report, near_pairs

    data = args.dir / f"rows{args.rows}-d{args.distance}-s{args.seed}"
    if not data.exists():
        t = time.perf_counter()
        build(data, args.rows, args.exact, args.near, args.distance, args.seed, args.files)
        print(f"built {data} in {time.perf_counter() - t:.1f}s")
    t = time.perf_counter()
    report = dedup_report([data], distance=args.distance, top=10)
    wall = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({k: v for k, v in report.as_dict().items() if k != "clusters"}))
    print(f"dedup_report: {report.rows:,} rows at distance {args.distance} in {wall:.2f}s, peak RSS {rss:.0f} MB")

    import pyarrow.parquet as pq

    sims = np.concatenate([pq.read_table(p, columns=["simhash"])["simhash"].to_numpy()
                           for p in sorted(data.glob("*.parquet"))])
    rng = np.random.default_rng(args.seed + 1)
    # A contiguous slice at a random place: planted pairs are local, so it holds whole ones.
    start = int(rng.integers(0, max(1, len(sims) - args.sample)))
    sample = np.unique(sims[start : start + args.sample].view(np.uint64))
    t = time.perf_counter()
    banded = {tuple(p) for p in near_pairs(sample, args.distance).tolist()}
    t_band = time.perf_counter() - t
    t = time.perf_counter()
    brute = brute_force_pairs([int(x) for x in sample], args.distance)
    t_brute = time.perf_counter() - t
    print(f"recall check on {len(sample):,} distinct fingerprints: banded {len(banded)} pairs in {t_band:.2f}s, "
          f"brute force {len(brute)} pairs in {t_brute:.2f}s, identical={banded == brute}")
    if banded != brute:
        raise SystemExit("banded search disagrees with brute force")


if __name__ == "__main__":
    main()
