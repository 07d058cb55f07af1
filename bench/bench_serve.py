"""Benchmark: `ccrawl serve` time to first record of a long operation, and 100 concurrent clients.

Starts the real command on loopback, then (1) GETs `warc.parse` of a 50,000-record WARC (a long
operation asked for with a small request) and times the first NDJSON line and the whole stream,
(2) POSTs `url.surt` with 100,000 URLs (a long request body) the same way, and (3) runs 100
clients at once, each streaming `warc.parse` of a 2,000-record WARC, and reports how many
completed with every record and their first-record latencies, and (4) the cost of running each
operation in a process of its own: 50 sequential `url.surt` requests of one URL against 50
`/health` requests (the floor: the same server answering without an operation).

    python bench/bench_serve.py                    # the 100 clients with --max-running 100
    python bench/bench_serve.py --max-running 4    # the default budget: the rest wait, then 503
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def urls(n: int, seed: int = 0) -> list[str]:
    return [f"https://www.host{(i * 7919 + seed) % 1_000_003}.example.co.uk/a/{i}/page.html?id={i}&utm_source=x"
            for i in range(n)]


def write_warc(path: Path, records: int) -> Path:
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    page = b"<html><head><title>t</title></head><body>" + b"<p>words words words</p>" * 40 + b"</body></html>"
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i in range(records):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"http://h{i % 997}.test/p/{i}", "response",
                                                          payload=BytesIO(page), http_headers=headers))
    return path


async def first_and_total(session: object, url: str, body: dict[str, object] | None = None,
                          params: dict[str, str] | None = None) -> tuple[float, float, int]:
    import aiohttp

    assert isinstance(session, aiohttp.ClientSession)
    started = time.perf_counter()
    request = session.post(url, json=body) if body is not None else session.get(url, params=params)
    async with request as r:
        first_line = await r.content.readline()
        first = time.perf_counter() - started
        count = 1 if first_line else 0
        async for _ in r.content:
            count += 1
    return first, time.perf_counter() - started, count


async def run(base: str, big: int, clients: int, per_client: int, warcs: tuple[Path, Path], records: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients * 2)) as s:
        health, small = [], []
        for _ in range(50):
            started = time.perf_counter()
            await (await s.get(f"{base}/health")).read()
            health.append(time.perf_counter() - started)
            started = time.perf_counter()
            await (await s.post(f"{base}/ops/url.surt", json={"urls": ["http://a.test/x"]})).read()
            small.append(time.perf_counter() - started)
        print(f"one-URL url.surt: p50 {statistics.median(small) * 1000:.1f} ms, max {max(small) * 1000:.1f} ms; "
              f"/health (no operation) p50 {statistics.median(health) * 1000:.1f} ms: a process per operation "
              f"costs {(statistics.median(small) - statistics.median(health)) * 1000:.1f} ms", flush=True)
        firsts = []
        for _ in range(3):
            first, total, count = await first_and_total(s, f"{base}/ops/warc.parse", params={"files": str(warcs[0])})
            assert count >= records, (count, records)
            firsts.append(first)
        print(f"warc.parse of {records:,} records (GET): first record {statistics.median(firsts) * 1000:.0f} ms "
              f"(median of 3), whole stream {total:.2f} s = {count / total:,.0f} records/s", flush=True)
        firsts = []
        for _ in range(3):
            first, total, count = await first_and_total(s, f"{base}/ops/url.surt", {"urls": urls(big)})
            assert count == big, (count, big)
            firsts.append(first)
        print(f"url.surt over {big:,} URLs: first record {statistics.median(firsts) * 1000:.0f} ms (median of 3), "
              f"whole stream {total:.2f} s = {big / total:,.0f} records/s", flush=True)
        started = time.perf_counter()
        results = await asyncio.gather(*(first_and_total(s, f"{base}/ops/warc.parse", params={"files": str(warcs[1])})
                                         for _ in range(clients)), return_exceptions=True)
        wall = time.perf_counter() - started
        ok = [r for r in results if isinstance(r, tuple) and r[2] >= per_client]
        refused = sum(1 for r in results if isinstance(r, tuple) and r[2] == 1)  # one line: the 503's body
        lat = sorted(r[0] * 1000 for r in ok) or [0.0]
        print(f"{clients} concurrent clients x {per_client:,} records: {len(ok)}/{clients} complete, {refused} refused "
              f"(503), in {wall:.2f} s; first record p50 {lat[len(lat) // 2]:.0f} ms, "
              f"p99 {lat[max(int(len(lat) * 0.99) - 1, 0)]:.0f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--per-client", type=int, default=2_000)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--tmp", type=Path, default=Path("/tmp/bench-serve"))
    parser.add_argument("--max-running", type=int, default=100, help="serve's --max-running")
    ns = parser.parse_args()
    ns.tmp.mkdir(parents=True, exist_ok=True)
    warcs = (write_warc(ns.tmp / "big.warc.gz", ns.records), write_warc(ns.tmp / "small.warc.gz", ns.per_client))
    from ccrawl.testing.nginx import free_port

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # the WARCs are named relative to the root clients may read
    warcs = (warcs[0].relative_to(ns.tmp), warcs[1].relative_to(ns.tmp))
    proc = subprocess.Popen([sys.executable, "-m", "ccrawl", "serve", "--addr", f"127.0.0.1:{port}", "--root",
                             str(ns.tmp), "--max-running", str(ns.max_running)], env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "listening on" in line:
                break
        asyncio.run(run(f"http://127.0.0.1:{port}", ns.urls, ns.clients, ns.per_client, warcs, ns.records))
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
