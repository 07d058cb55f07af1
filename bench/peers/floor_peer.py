"""The floor peer: the least work a fetch-only recrawl has to do, written as plainly as possible.

    python -m bench.peers.floor_peer URLS_FILE --out DIR --procs 2 --concurrency 256 --resolve-to 127.0.0.1

The minimal aiohttp client (``bench.peers.aiohttp_min``) that also keeps what it fetched: for every
page it computes the SHA-1 of the body (base32, Common Crawl's form) and appends url, status,
response headers (JSON), digest and body to a buffer that it writes as a zstd Parquet row group
every 2,000 rows (or 32 MB), inline on the event loop, one file per process. No checkpoint, no
politeness, no extraction, no rings: the floor a fetch-only ``recrawl run`` is compared with.
Prints one JSON line: pages, bytes, errors, seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

from bench.peers.aiohttp_min import _resolver

ROWS_PER_GROUP = 2000
BYTES_PER_GROUP = 32 * 1024 * 1024


async def _crawl(urls: list[str], concurrency: int, ip: str, out: Path) -> dict[str, int]:
    import aiohttp
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("url", pa.string()), ("status", pa.int32()), ("headers", pa.string()),
                        ("digest", pa.string()), ("body", pa.binary())])
    writer = pq.ParquetWriter(out, schema, compression="zstd")
    cols: dict[str, list[Any]] = {name: [] for name in schema.names}
    buffered = 0
    totals = {"pages": 0, "bytes": 0, "errors": 0}

    def flush() -> None:
        nonlocal buffered
        if cols["url"]:
            writer.write_table(pa.table(cols, schema=schema))
            for v in cols.values():
                v.clear()
            buffered = 0

    queue: asyncio.Queue[str] = asyncio.Queue()
    for u in urls:
        queue.put_nowait(u)
    connector = aiohttp.TCPConnector(limit=concurrency, resolver=_resolver(ip), ttl_dns_cache=None)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:

        async def worker() -> None:
            nonlocal buffered
            while True:
                try:
                    url = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    async with session.get(url) as resp:
                        body = await resp.read()
                        status = resp.status
                        headers = json.dumps([[k, v] for k, v in resp.headers.items()])
                except Exception:  # a peer counts failures, it does not classify them
                    totals["errors"] += 1
                    continue
                digest = base64.b32encode(hashlib.sha1(body).digest()).decode()
                for name, value in (("url", url), ("status", status), ("headers", headers), ("digest", digest),
                                    ("body", body)):
                    cols[name].append(value)
                buffered += len(body)
                totals["pages"] += 1
                totals["bytes"] += len(body)
                if len(cols["url"]) >= ROWS_PER_GROUP or buffered >= BYTES_PER_GROUP:
                    flush()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    flush()
    writer.close()
    return totals


def _one_process(args: tuple[list[str], int, str, str]) -> dict[str, int]:
    urls, concurrency, ip, out = args
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    return asyncio.run(_crawl(urls, concurrency, ip, Path(out)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("urls_file")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--resolve-to", default="127.0.0.1")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.urls_file) as fh:
        urls = [line.strip() for line in fh if line.strip()]
    start = time.perf_counter()
    per = max(1, args.concurrency // args.procs)
    jobs = [(urls[i :: args.procs], per, args.resolve_to, str(args.out / f"floor-{i}.parquet"))
            for i in range(args.procs)]
    if args.procs == 1:
        parts = [_one_process(jobs[0])]
    else:
        with multiprocessing.get_context("fork").Pool(args.procs) as pool:
            parts = pool.map(_one_process, jobs)
    seconds = time.perf_counter() - start
    out = {k: sum(p[k] for p in parts) for k in ("pages", "bytes", "errors")}
    out["seconds"] = round(seconds, 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
