"""``domains publish`` rate against pyarrow on the same table, and ``domains diff``'s bytes read.

Builds a synthetic web-graph domain rank table (``--rows`` rows, Common Crawl's header and column order,
reversed names, gzip) in a temporary directory, then, interleaved, ``--rounds`` times (medians):

1. **ccrawl**: the whole ``domains publish`` pipeline short of the network -- the gzip file decompressed
   in blocks, :class:`~ccrawl.datasets.domain_table.RankTableReader` (pyarrow CSV + Arrow un-reverse),
   :func:`~ccrawl.datasets.domain_table.cut_shards`, shards written by :class:`DomainsPublisher` into a
   local hub (``--workers`` encoders, ``--shard-rows`` per shard, real commits with ledger and card);
2. **pyarrow read+write**: ``pyarrow.csv.read_csv`` of the same gzip file + ``write_table`` (zstd) in
   shards of the same size: pyarrow's own rate for the same conversion, minus the un-reverse and commits;
3. **pyarrow write**: ``write_table`` alone of the final table (the floor: encoding only);
4. **python rows** (``--python-rows`` of them): the per-row way (``parse_rank_line`` + ``reverse_host``
   + ``Table.from_pylist``), for scale.

Then two releases (the older lacks 1% of the newer's domains and has 1% of its own) are published to a
local hub; ``domains diff`` and ``publish verify --graph`` report their bytes read against the bytes held.

    python bench/bench_domains.py --rows 2000000 --shard-rows 500000 --rounds 3
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
import statistics
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

HEADER = "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev\t#n_hosts"
WORDS = ("news", "shop", "blog", "data", "cloud", "home", "city", "tech", "web", "art", "food", "travel")
TLDS = ("com", "org", "net", "de", "co.uk", "fr", "io", "nl", "ru", "jp")


def build_table(dest: Path, rows: int, seed: int, *, drop_every: int = 0) -> None:
    rng = random.Random(seed)
    with gzip.open(dest, "wt", compresslevel=6) as fh:
        fh.write(HEADER + "\n")
        val = 3.4e7
        for i in range(rows):
            val *= 0.9999995
            name = f"{rng.choice(WORDS)}{i}-{rng.choice(WORDS)}.{rng.choice(TLDS)}"
            rev = ".".join(reversed(name.split(".")))
            pr_pos, pr_val, n_hosts = rng.randrange(1, rows + 1), rng.random() / 1e4, rng.randrange(1, 500)
            if drop_every and i % drop_every == 1:
                continue
            fh.write(f"{i + 1}\t{val:.7E}\t{pr_pos}\t{pr_val!r}\t{rev}\t{n_hosts}\n")
        if drop_every:
            for j in range(rows // drop_every):
                fh.write(f"{rows + j + 1}\t1.0E0\t{rows + j + 1}\t1.0E-9\tcom.added{j}\t1\n")


def blocks_of(path: Path) -> Iterator[bytes]:
    """The file decompressed in blocks the way ``gz_blocks`` hands them over (1 MiB in, up to 4 MiB out)."""
    from ccrawl.commoncrawl.webgraph import _inflate_module

    decomp = _inflate_module().decompressobj(16 + zlib.MAX_WBITS)
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            data = chunk
            while data:
                out = decomp.decompress(data, 1 << 22)
                if out:
                    yield out
                data = decomp.unconsumed_tail


def run_ccrawl(src: Path, work: Path, shard_rows: int, workers: int, release: str = "cc-main-2026-jan-feb-mar") -> int:
    from ccrawl.datasets.publish_domains import DomainsPublisher, DomainsPublishOptions
    from ccrawl.hub.localhub import LocalRepo

    repo = LocalRepo(work / "hub", "bench/domains")
    opts = DomainsPublishOptions(repo_id=repo.repo_id, shard_rows=shard_rows, workers=workers, commit_every=4,
                                 staging=work / "st")
    pub = DomainsPublisher(opts, repo, release, str(src), lambda: blocks_of(src))
    for _ in pub.run():
        pass
    return pub.stats.rows


def run_pyarrow_rw(src: Path, work: Path, shard_rows: int) -> int:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    names = ["harmonic_pos", "harmonic_val", "pagerank_pos", "pagerank_val", "host_rev", "n_hosts"]
    types = {"harmonic_pos": pa.int64(), "harmonic_val": pa.float64(), "pagerank_pos": pa.int64(),
             "pagerank_val": pa.float64(), "host_rev": pa.string(), "n_hosts": pa.int64()}
    table = pacsv.read_csv(src, read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
                           parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
                           convert_options=pacsv.ConvertOptions(column_types=types))
    work.mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, table.num_rows, shard_rows)):
        pq.write_table(table.slice(start, shard_rows), work / f"part-{i:03d}.parquet", compression="zstd",
                       row_group_size=131_072)
    return int(table.num_rows)


def run_pyarrow_write(table: object, work: Path, shard_rows: int) -> int:
    import pyarrow.parquet as pq

    work.mkdir(parents=True, exist_ok=True)
    n = table.num_rows  # type: ignore[attr-defined]
    for i, start in enumerate(range(0, n, shard_rows)):
        pq.write_table(table.slice(start, shard_rows), work / f"part-{i:03d}.parquet",  # type: ignore[attr-defined]
                       compression="zstd", row_group_size=131_072)
    return int(n)


def run_python_rows(src: Path, limit: int) -> int:
    import pyarrow as pa

    from ccrawl.commoncrawl.webgraph import parse_rank_line, reverse_host

    rows = []
    with gzip.open(src, "rt") as fh:
        for line in fh:
            row = parse_rank_line(line.rstrip("\n"))
            if row is None:
                continue
            rows.append({"harmonic_pos": row.harmonic_pos, "harmonic_val": float(row.harmonic_val),
                         "pagerank_pos": row.pagerank_pos, "pagerank_val": row.pagerank_val,
                         "domain": reverse_host(row.name_rev), "n_hosts": row.n_hosts})
            if len(rows) >= limit:
                break
    pa.Table.from_pylist(rows)
    return len(rows)


def timed(fn: object, *args: object) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = fn(*args)  # type: ignore[operator]
    return time.perf_counter() - t0, int(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--shard-rows", type=int, default=500_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python-rows", type=int, default=300_000)
    args = ap.parse_args()
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(prefix="bench-domains-") as tmp_s:
        tmp = Path(tmp_s)
        src = tmp / "ranks.txt.gz"
        build_table(src, args.rows, 1)
        print(f"table: {args.rows:,} rows, {src.stat().st_size / 1e6:.1f} MB gzip")
        warm = tmp / "warm.txt.gz"  # imports and first-call costs out of the timed rounds
        build_table(warm, 1000, 2)
        run_ccrawl(warm, tmp / "warm", 500, args.workers)
        run_pyarrow_rw(warm, tmp / "warm-p", 500)
        rates: dict[str, list[float]] = {"ccrawl": [], "pyarrow_rw": [], "pyarrow_write": [], "python": []}
        for r in range(args.rounds):
            work = tmp / f"r{r}"
            dt, n = timed(run_ccrawl, src, work / "c", args.shard_rows, args.workers)
            rates["ccrawl"].append(n / dt)
            final = pq.read_table(sorted((work / "c" / "hub").rglob("data/*/part-*.parquet")))
            dt, n = timed(run_pyarrow_rw, src, work / "p", args.shard_rows)
            rates["pyarrow_rw"].append(n / dt)
            dt, n = timed(run_pyarrow_write, final, work / "w", args.shard_rows)
            rates["pyarrow_write"].append(n / dt)
            dt, n = timed(run_python_rows, src, args.python_rows)
            rates["python"].append(n / dt)
            shutil.rmtree(work)
        med = {k: statistics.median(v) for k, v in rates.items()}
        for k, v in med.items():
            print(f"{k:>14}: {v:,.0f} rows/s  (rounds: {', '.join(f'{x:,.0f}' for x in rates[k])})")
        print(f"ccrawl / pyarrow read+write: {med['ccrawl'] / med['pyarrow_rw']:.2f}x; "
              f"ccrawl / pyarrow write alone: {med['ccrawl'] / med['pyarrow_write']:.2f}x; "
              f"ccrawl / python rows: {med['ccrawl'] / med['python']:.1f}x")

        older = tmp / "older.txt.gz"
        build_table(older, args.rows, 1, drop_every=100)
        work = tmp / "diff"
        run_ccrawl(older, work, args.shard_rows, args.workers, "cc-main-2025-sep-oct-nov")
        run_ccrawl(src, work, args.shard_rows, args.workers, "cc-main-2025-26-dec-jan-feb")
        from ccrawl import ops

        t0 = time.perf_counter()
        rec = next(iter(ops.get("domains.diff")(repo="bench/domains", hub=str(work / "hub"),
                                                notice=lambda _m: None)))
        dt = time.perf_counter() - t0
        print(f"domains diff: +{rec['added']:,} -{rec['removed']:,} ={rec['shared']:,} in {dt:.2f}s; read "
              f"{rec['bytes_read']:,} of {rec['dataset_bytes']:,} bytes "
              f"({100 * rec['bytes_read'] / rec['dataset_bytes']:.1f}%)")
        reports: list[object] = []
        t0 = time.perf_counter()
        list(ops.get("publish.verify")(graph="cc-main-2025-26-dec-jan-feb", repo="bench/domains",
                                       hub=str(work / "hub"), notice=lambda _m: None, report=reports))
        dt = time.perf_counter() - t0
        read = sum(r.bytes_read for r in reports)  # type: ignore[attr-defined]
        held = sum(r.dataset_bytes for r in reports)  # type: ignore[attr-defined]
        print(f"publish verify --graph: {dt:.2f}s, read {read:,} of {held:,} bytes ({100 * read / held:.3f}%)")


if __name__ == "__main__":
    main()
