"""Publishing and work-list reading through the hub layer: a local hub vs the fake Hub on loopback.

    python bench/bench_hub.py                      # defaults: 16 shards of ~2 MB, commit every 4
    python bench/bench_hub.py --shards 32 --rows 400 --body-kb 8

Figures (one line each, the command beside them in bench/README.md):

* publish: shards, MB and seconds through ``Publisher`` into a ``LocalRepo`` and into the fake Hub via the
  real huggingface_hub client (preupload, LFS batch, PUT, NDJSON commit), commits and MB/s;
* republish: the same directory again with ``--keep``, which must move no bytes (one existence check);
* column read: one string column of a wide Parquet part over ranged reads (``RangeFile``), bytes fetched
  against the file size.

Bounded: everything is sized by the flags, and the whole run stops after ``--budget`` seconds.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

import pyarrow as pa
import pyarrow.parquet as pq

from ccrawl.datasets.publish_recrawl import Publisher, PublishOptions
from ccrawl.hub.hfhub import HfRepo
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, DatasetRepo
from ccrawl.hub.worklist import RangeFile
from ccrawl.recrawl.schema import capture_row, rows_to_table
from ccrawl.testing.fakehub import FakeHub


def write_shards(directory: Path, shards: int, rows: int, body_kb: int) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    for s in range(shards):
        batch = [
            capture_row({"url": f"https://h{s}-{i}.example/", "host": f"h{s}-{i}.example", "status": 200,
                         "fetched_at": 1_700_000_000_000 + i, "body": os.urandom(body_kb * 512) * 2})
            for i in range(rows)
        ]
        tmp = directory / f"part-{s:05d}.parquet.tmp"
        pq.write_table(rows_to_table(batch), tmp, compression="zstd")
        os.replace(tmp, directory / f"part-{s:05d}.parquet")
        total += (directory / f"part-{s:05d}.parquet").stat().st_size
    return total


def publish_once(repo: DatasetRepo, cap: Path, commit_every: int, keep: bool) -> tuple[float, Publisher]:
    opts = PublishOptions(cap, repo_id="bench/recrawl", server="bench", commit_every=commit_every, keep=keep)
    publisher = Publisher(opts, repo)
    started = time.perf_counter()
    for _ in publisher.run():
        pass
    return time.perf_counter() - started, publisher


def bench_publish(name: str, repo: DatasetRepo, work: Path, args: argparse.Namespace) -> None:
    cap = work / f"cap-{name}"
    size = write_shards(cap, args.shards, args.rows, args.body_kb)
    seconds, pub = publish_once(repo, cap, args.commit_every, keep=True)
    mb = size / 1e6
    print(f"publish {name}: {pub.stats.committed} shards, {mb:.1f} MB, {pub.stats.commits} commits in {seconds:.2f}s "
          f"= {mb / seconds:.1f} MB/s, {pub.stats.committed / seconds:.1f} shards/s")
    seconds, pub = publish_once(repo, cap, args.commit_every, keep=True)
    print(f"republish {name}: {pub.stats.existing} already there, {pub.stats.commits} commits, {seconds:.2f}s")


def bench_column(repo: DatasetRepo, rows: int) -> None:
    buf = io.BytesIO()
    table = pa.table({"domain": [f"d{i}.example" for i in range(rows)],
                      "blob": [os.urandom(1000) for _ in range(rows)]})
    pq.write_table(table, buf, row_group_size=max(1, rows // 4), compression="none")
    repo.commit([Add("rel/part-0.parquet", buf.getvalue())], message="work list")
    size = len(buf.getvalue())
    started = time.perf_counter()
    rf = RangeFile(repo, "rel/part-0.parquet", size)
    pf = pq.ParquetFile(rf)
    values = sum(len(pf.read_row_group(g, columns=["domain"])) for g in range(pf.num_row_groups))
    seconds = time.perf_counter() - started
    print(f"column read: {values} values from a {size / 1e6:.1f} MB part, {rf.bytes_fetched / 1e6:.2f} MB fetched in "
          f"{rf.requests} ranged reads ({100 * rf.bytes_fetched / size:.1f}% of the file), {seconds:.2f}s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--rows", type=int, default=200, help="rows per shard")
    parser.add_argument("--body-kb", type=int, default=10, help="incompressible body per row, KB")
    parser.add_argument("--commit-every", type=int, default=4)
    parser.add_argument("--budget", type=float, default=120.0, help="stop after this many seconds")
    args = parser.parse_args()
    deadline = time.monotonic() + args.budget
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp:
        work = Path(tmp)
        local = LocalRepo(work / "localhub", "bench/recrawl")
        local.create()
        bench_publish("local hub", local, work, args)
        with FakeHub(work / "fakehub") as hub:
            remote = HfRepo("bench/recrawl", endpoint=hub.url, token="bench", xet=False)
            if time.monotonic() < deadline:
                bench_publish("fake Hub (huggingface_hub over loopback)", remote, work, args)
            if time.monotonic() < deadline:
                bench_column(remote, 20_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
