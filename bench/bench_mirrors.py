"""``urls publish`` conversion rate against pyarrow's own read-and-write, and ``publish verify``'s bytes read.

Builds a synthetic cc-index-table (``--parts`` parts of ``--rows`` rows in the published schema, gzip,
row groups of ``--group`` rows, as Common Crawl writes them) in a temporary directory, then:

1. converts every part with :func:`ccrawl.datasets.publish_urls.convert_part` over ranged reads
   (:class:`~ccrawl.commoncrawl.columnar.source.LocalSource`) and with pyarrow alone
   (``read_table(columns=URL_COLUMNS)`` + ``write_table(zstd)``), interleaved, ``--rounds`` times; medians;
2. commits the shards to a local hub with stats.csv, runs ``publish verify`` (footers only) and reports
   the bytes it read against the bytes the dataset holds.

    python bench/bench_mirrors.py --parts 4 --rows 400000 --rounds 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path


def build_part(dest: Path, rows: int, group: int, seed: int) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.columnar.schema import arrow_schema

    rng = random.Random(seed)
    schema = arrow_schema()
    hosts = [f"h{rng.randrange(10**6)}.example{rng.randrange(50)}.com" for _ in range(max(1, rows // 40))]
    hosts.sort()
    cols: dict[str, list[object]] = {f.name: [] for f in schema}
    t0 = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
    for i in range(rows):
        host = hosts[i * len(hosts) // rows]
        upath = f"/p/{rng.randrange(10**9):x}/{i}.html"
        parts = host.split(".")
        url = f"https://{host}{upath}"
        row = {
            "url_surtkey": ",".join(reversed(parts)) + ")" + upath, "url": url, "url_host_name": host,
            "url_host_tld": parts[-1], "url_host_2nd_last_part": parts[-2], "url_host_3rd_last_part": parts[0],
            "url_host_4th_last_part": None, "url_host_5th_last_part": None, "url_host_registry_suffix": "com",
            "url_host_registered_domain": ".".join(parts[-2:]), "url_host_private_suffix": "com",
            "url_host_private_domain": ".".join(parts[-2:]), "url_host_name_reversed": ".".join(reversed(parts)),
            "url_protocol": "https", "url_port": None, "url_path": upath, "url_query": None,
            "fetch_time": t0 + dt.timedelta(seconds=i), "fetch_status": 200, "fetch_redirect": None,
            "content_digest": f"{rng.getrandbits(160):040X}", "content_mime_type": "text/html",
            "content_mime_detected": "text/html", "content_charset": "UTF-8", "content_languages": "eng",
            "content_truncated": None, "warc_record_id": rng.getrandbits(128).to_bytes(16, "big"),
            "warc_filename": f"crawl-data/CC-MAIN-2025-26/segments/1/warc/f{i // 5000}.warc.gz",
            "warc_record_offset": rng.randrange(10**9), "warc_record_length": rng.randrange(500, 90000),
            "warc_segment": "1",
        }
        for k, v in row.items():
            cols[k].append(v)
    table = pa.table(cols, schema=schema)
    pq.write_table(table, dest, compression="gzip", row_group_size=group)


def main() -> None:
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.columnar.source import LocalSource
    from ccrawl.datasets.publish_urls import URL_COLUMNS, UrlLedger, convert_part, url_schema
    from ccrawl.datasets.verify import verify
    from ccrawl.hub.localhub import LocalRepo
    from ccrawl.hub.repo import Add

    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--group", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        rel = [f"cc-index/table/cc-main/warc/crawl=CC-MAIN-2025-26/subset=warc/part-{i:05d}.c000.gz.parquet"
               for i in range(a.parts)]
        for i, r in enumerate(rel):
            (root / r).parent.mkdir(parents=True, exist_ok=True)
            build_part(root / r, a.rows, a.group, i)
        src_bytes = sum((root / r).stat().st_size for r in rel)
        ours: list[float] = []
        theirs: list[float] = []
        moved = 0
        for _ in range(a.rounds):
            source = LocalSource(root)  # fresh: no tail cached from the last round
            t = time.perf_counter()
            for i, r in enumerate(rel):
                convert_part(source, r, root / f"out/ours-{i}.parquet")
            ours.append(time.perf_counter() - t)
            moved = source.stats.bytes_read
            t = time.perf_counter()
            for i, r in enumerate(rel):
                pq.write_table(pq.read_table(root / r, columns=list(URL_COLUMNS)), root / f"out/pa-{i}.parquet",
                               compression="zstd")
            theirs.append(time.perf_counter() - t)
        rows = a.parts * a.rows
        mo, mt = statistics.median(ours), statistics.median(theirs)
        print(f"source: {a.parts} parts x {a.rows:,} rows, {src_bytes:,} bytes (gzip, row groups of {a.group:,})")
        print(f"convert_part (ranged reads): {rows / mo:,.0f} rows/s (median of {a.rounds}), "
              f"read {moved:,} source bytes ({100 * moved / src_bytes:.1f}%)")
        print(f"pyarrow read_table+write_table: {rows / mt:,.0f} rows/s; ratio ours/pyarrow = {mt / mo:.2f}x")
        repo = LocalRepo(root / "hub", "bench/urls")
        repo.create()
        led = UrlLedger()
        adds = []
        for i in range(a.parts):
            p = root / f"out/ours-{i}.parquet"
            adds.append(Add(f"data/CC-MAIN-2025-26/part-{i:05d}.parquet", p))
            led.add("CC-MAIN-2025-26", pq.read_metadata(p).num_rows, p.stat().st_size)
        led.row("CC-MAIN-2025-26")["parts"] = a.parts
        repo.commit([*adds, Add("stats.csv", led.render())], message="bench")
        rep = verify(repo, "data/CC-MAIN-2025-26", schema=url_schema(), ledger_row=led.rows["CC-MAIN-2025-26"])
        assert not rep.failed and not rep.ledger_problems, rep.as_dict()
        print(f"publish verify: {len(rep.checks)} shards ok, read {rep.bytes_read:,} of {rep.dataset_bytes:,} bytes "
              f"({100 * rep.bytes_read / rep.dataset_bytes:.3f}%)")
        rep = verify(repo, "data/CC-MAIN-2025-26", schema=url_schema(), sample=64)
        print(f"publish verify --sample 64: read {rep.bytes_read:,} bytes "
              f"({100 * rep.bytes_read / rep.dataset_bytes:.1f}%)")


if __name__ == "__main__":
    main()
