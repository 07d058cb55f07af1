"""CC-NEWS: indexing throughput against fastwarc's plain read, and what a host search reads.

    python bench/bench_news.py                 # ~1-2 minutes on 2 shared cores
    python bench/bench_news.py --rounds 3 --captures 200

1. **Index throughput, one core.** Over the same fake CC-NEWS archives (real corpus pages), interleaved
   rounds, medians: fastwarc ``ArchiveIterator`` reading every record (``parse_http=False``, block read,
   ``stream_pos`` taken), against ccrawl's indexer (the streaming member splitter fed 1 MiB chunks, every
   response turned into its 22-column row with language identification on, the rows written to a sorted
   zstd Parquet shard). Both count every record of the file (warcinfo, requests, responses), records/s.
   The indexer also runs with zlib instead of ISA-L, to show what the inflater is worth.
2. **Host search.** The archives are indexed into a local hub; a host in few shards and a host in none
   are searched from the index, counting the bytes read against the index's size, and by scanning.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccrawl.commoncrawl.news.rows import row_of
from ccrawl.commoncrawl.news.shard import ShardWriter
from ccrawl.commoncrawl.news.stream import MemberSplitter, inflater_name
from ccrawl.testing.fakecc.news import NewsSpec, build_news, default_corpus


def fastwarc_read(files: list[str]) -> int:
    from fastwarc.stream_io import GzipReader
    from fastwarc.warc import ArchiveIterator

    n = 0
    for f in files:
        with open(f, "rb") as fh:
            try:
                for rec in ArchiveIterator(GzipReader(fh), parse_http=False, stream_detect=False):
                    _ = rec.stream_pos
                    rec.reader.read()
                    n += 1
            except Exception:  # the one file that ends mid-record
                pass
    return n


def split_only(files: list[str]) -> int:
    """The floor of this design: the member splitter alone (ISA-L inflate, every byte), no rows."""
    n = 0
    for f in files:
        s = MemberSplitter()
        with open(f, "rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                n += len(s.feed(chunk))
    return n


def ccrawl_index(files: list[str], out: Path, *, use_zlib: bool = False) -> int:
    n = 0
    for f in files:
        w = ShardWriter(out / (Path(f).name + ".parquet"))
        s = MemberSplitter(use_zlib=use_zlib)
        with open(f, "rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                for m in s.feed(chunk):
                    n += 1
                    row = row_of(f, m.offset, m.length, m.data)
                    if row is not None:
                        w.add(row)
        w.close({"warc_path": f})
    return n


def throughput(files: list[str], rounds: int) -> None:
    out = Path(tempfile.mkdtemp(prefix="bench-news-"))
    runs: dict[str, list[float]] = {"fastwarc read": [], f"ccrawl index ({inflater_name()})": [],
                                    "ccrawl index (zlib)": [], f"split only ({inflater_name()}, no rows)": []}
    counts: dict[str, int] = {}
    fastwarc_read(files[:1])  # warm-up: imports and the page cache are not what is measured
    ccrawl_index(files[:1], out)
    for _ in range(rounds):
        for name in runs:
            # CPU time of this process: per-core throughput, not the share of a loaded machine we were given
            t = time.process_time()
            if name == "fastwarc read":
                n = fastwarc_read(files)
            elif name.startswith("split only"):
                n = split_only(files)
            else:
                n = ccrawl_index(files, out, use_zlib=name.endswith("(zlib)"))
            runs[name].append(n / (time.process_time() - t))
            counts[name] = n
    base = statistics.median(runs["fastwarc read"])
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"throughput: {len(files)} archives, {mb:.1f} MB gzip, {rounds} interleaved rounds, medians, "
          "records per CPU second")
    for name, vals in runs.items():
        med = statistics.median(vals)
        print(f"  {name:28s} {counts[name]:6d} records  {med:8.0f} records/cpu-s  {med / base:5.2f}x fastwarc")


def search(root: Path, month: str, budget_files: int) -> None:
    from ccrawl.ops.news import news_publish, news_search
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
    from ccrawl.testing.fakecc.news import load_news

    site = load_news(root)
    tmp = Path(tempfile.mkdtemp(prefix="bench-news-hub-"))
    with FakeCCServer(root, SiteSpec(records=3, files=1, older_records=1)) as srv:
        opts = srv.client_options(data_dir=str(tmp / "d"), no_cache=True)
        t = time.perf_counter()
        list(news_publish(months=month, repo="bench/news", hub=str(tmp / "hub"), staging=str(tmp / "st"),
                          workers=2, commit_every=8, files=budget_files, client_options=opts,
                          notice=lambda _m: None))
        print(f"publish: {month}, {budget_files or 'all'} archives, 2 workers: {time.perf_counter() - t:.1f} s")
        per_host: dict[str, set[str]] = {}
        for r in site.responses(month):
            per_host.setdefault(r["url"].split("/")[2], set()).add(r["filename"])
        counts = Counter({h: len(f) for h, f in per_host.items()})
        host = next(h for h, n in counts.most_common() if n <= 2)
        y, m = (int(x) for x in month.split("/"))
        for label, q, no_index in ((f"host in {counts[host]} shard(s)", host, False),
                                   ("host in no shard", "nobody.example", False),
                                   (f"host in {counts[host]} shard(s), --no-index", host, True)):
            said: list[str] = []
            t = time.perf_counter()
            rows = list(news_search(host=q, year=y, month=m, repo="bench/news", hub=str(tmp / "hub"),
                                    no_index=no_index, client_options=opts, notice=said.append))
            dt = time.perf_counter() - t
            print(f"search {label}: {len(rows)} rows in {dt:.2f} s; {said[-1].split(': ', 1)[1]}")


def search_synthetic(shards: int, rows: int) -> None:
    """Host searches over a synthetic month of realistic shard sizes (the fake's shards are tiny)."""
    import importlib.util

    from ccrawl.commoncrawl.news.months import Month
    from ccrawl.commoncrawl.news.search import SearchReport, search_index

    path = Path(__file__).resolve().parents[1] / "tests" / "news" / "test_search_cost.py"
    spec = importlib.util.spec_from_file_location("news_search_cost", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    repo = mod.build_month(Path(tempfile.mkdtemp(prefix="bench-news-syn-")), shards, rows)
    files = repo.list_files("data/2026/07")
    for label, q in (("rare host (1 shard)", "rare.example"), ("host in every shard", "www.publisher7.com"),
                     ("host in no shard", "nobody.example")):
        rep = SearchReport()
        t = time.perf_counter()
        n = len(list(search_index(repo, Month(2026, 7), q, files=files, report=rep)))
        dt = time.perf_counter() - t
        print(f"synthetic {shards} x {rows} rows, {label}: {n} rows in {dt:.2f} s, read {rep.bytes_read:,} of "
              f"{rep.index_bytes:,} bytes ({100 * rep.bytes_read / rep.index_bytes:.1f}%), "
              f"{rep.shards_opened} shard(s) opened")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "bench-news-fake")
    ap.add_argument("--files", type=int, default=8, help="archives in the bench month")
    ap.add_argument("--captures", type=int, default=150, help="captures per archive")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--syn-shards", type=int, default=8, help="shards of the synthetic month (search cost)")
    ap.add_argument("--syn-rows", type=int, default=16000, help="rows per synthetic shard")
    args = ap.parse_args()
    corpus = default_corpus()
    if corpus is None:
        print("bench_news: the shared corpus is needed (CCRAWL_CORPUS)", file=sys.stderr)
        return 3
    spec = NewsSpec(months=((2026, 7),), files=args.files, captures=args.captures)
    t = time.perf_counter()
    build_news(args.root, spec, corpus)
    print(f"fake month: {args.files} archives x {args.captures} captures, built in {time.perf_counter() - t:.1f} s")
    files = sorted(glob.glob(str(args.root / "crawl-data/CC-NEWS/2026/07/*.warc.gz")))
    throughput(files, args.rounds)
    search(args.root, "2026/07", 0)
    search_synthetic(args.syn_shards, args.syn_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
