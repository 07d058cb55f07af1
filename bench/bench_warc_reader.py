"""CPU time of ccrawl's WARC reader against fastwarc and warcio on the same .warc.gz, interleaved.

    python bench/bench_warc_reader.py --records 20000 --rounds 5

Builds a Common Crawl-shaped file (one gzip member per record, HTML pages of 3–25 KB) in a temp
directory, then reads every record's block with each reader in turn, ``--rounds`` times, and
prints the median CPU seconds and the ratio to fastwarc. fastwarc is the floor (C++ parsing and
inflating, but it stops at an empty gzip member and cannot resynchronise); warcio is the usual
pure-Python reader.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WORDS = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta", b"iota", b"kappa"]


def build(path: Path, records: int) -> None:
    rng = random.Random(1)
    with path.open("wb") as f:
        for i in range(records):
            words = b" ".join(rng.choice(WORDS) for _ in range(rng.randint(500, 4000)))
            body = b"<html><body>" + words + b"</body></html>"
            http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            head = (b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:%d>\r\n" % i
                    + b"WARC-Target-URI: http://example.com/%d\r\nContent-Length: %d\r\n\r\n" % (i, len(http)))
            f.write(gzip.compress(head + http + b"\r\n\r\n", compresslevel=6, mtime=0))


def ccrawl_reader(path: Path) -> int:
    from ccrawl.warc.reader import iter_records

    # the block's size without joining it (Record.block joins the HTTP head and the payload on each call)
    return sum(len(r.http_head) + len(r.payload) for r in iter_records(path))


def fastwarc_reader(path: Path) -> int:
    from fastwarc.warc import ArchiveIterator

    with path.open("rb") as f:
        return sum(len(r.reader.read()) for r in ArchiveIterator(f, parse_http=False))


def warcio_reader(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    with path.open("rb") as f:
        return sum(len(r.content_stream().read()) for r in ArchiveIterator(f))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    readers: dict[str, Callable[[Path], int]] = {
        "ccrawl": ccrawl_reader, "fastwarc": fastwarc_reader, "warcio": warcio_reader,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.warc.gz"
        build(path, args.records)
        times: dict[str, list[float]] = {name: [] for name in readers}
        sizes: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, fn in readers.items():
                started = time.process_time()
                sizes[name] = fn(path)
                times[name].append(time.process_time() - started)
        floor = statistics.median(times["fastwarc"])
        print(f"{args.records} records, {path.stat().st_size / 1e6:.1f} MB gzipped, {args.rounds} rounds interleaved")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:9} {med:6.3f} s CPU (median)  {med / floor:5.2f}x fastwarc  block bytes {sizes[name]}")


if __name__ == "__main__":
    main()
