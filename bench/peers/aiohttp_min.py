"""The minimal aiohttp client: what Python does without a pipeline (fetch, read the body, count).

    python -m bench.peers.aiohttp_min URLS_FILE --concurrency 256 --procs 1 --resolve-to 127.0.0.1

Every host name resolves to ``--resolve-to`` (the synthetic web lives on loopback). Prints one JSON
line: pages, bytes, errors, seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import time
from typing import Any


def _resolver(ip: str) -> Any:
    from aiohttp.abc import AbstractResolver

    class Fixed(AbstractResolver):
        async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
            return [{"hostname": host, "host": ip, "port": port, "family": socket.AF_INET, "proto": 0,
                     "flags": socket.AI_NUMERICHOST}]

        async def close(self) -> None:
            return None

    return Fixed()


async def _crawl(urls: list[str], concurrency: int, ip: str) -> dict[str, int]:
    import aiohttp

    queue: asyncio.Queue[str] = asyncio.Queue()
    for u in urls:
        queue.put_nowait(u)
    totals = {"pages": 0, "bytes": 0, "errors": 0}
    connector = aiohttp.TCPConnector(limit=concurrency, resolver=_resolver(ip), ttl_dns_cache=None)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:

        async def worker() -> None:
            while True:
                try:
                    url = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    async with session.get(url) as resp:
                        body = await resp.read()
                    totals["pages"] += 1
                    totals["bytes"] += len(body)
                except Exception:  # a peer counts failures, it does not classify them
                    totals["errors"] += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return totals


def _one_process(args: tuple[list[str], int, str]) -> dict[str, int]:
    urls, concurrency, ip = args
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    return asyncio.run(_crawl(urls, concurrency, ip))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("urls_file")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--resolve-to", default="127.0.0.1")
    args = parser.parse_args()
    with open(args.urls_file) as fh:
        urls = [line.strip() for line in fh if line.strip()]
    start = time.perf_counter()
    if args.procs == 1:
        parts = [_one_process((urls, args.concurrency, args.resolve_to))]
    else:
        chunks = [urls[i :: args.procs] for i in range(args.procs)]
        per = max(1, args.concurrency // args.procs)
        with multiprocessing.get_context("fork").Pool(args.procs) as pool:
            parts = pool.map(_one_process, [(c, per, args.resolve_to) for c in chunks])
    seconds = time.perf_counter() - start
    out = {k: sum(p[k] for p in parts) for k in ("pages", "bytes", "errors")}
    out["seconds"] = round(seconds, 4)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
