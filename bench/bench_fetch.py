"""Throughput of one fetch process against a local web: pages/s, MB/s and where the time went.

    python bench/bench_fetch.py --server nginx --hosts 200 --pages 20 --concurrency 256
    python bench/bench_fetch.py --server synthweb --loop asyncio --seconds 10

The server runs in its own process (nginx, or the synthetic web's aiohttp app), the fetcher in
this one, so the figure is one fetch process's ceiling on this machine, delay 0, robots off.
Bounded: it stops after ``--seconds`` or when the URL list is walked, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ccrawl.fetch.client import Fetcher
from ccrawl.fetch.config import FetchConfig
from ccrawl.fetch.loop import run


@contextlib.contextmanager
def _synthweb(hosts: int, pages: int, page_bytes: int) -> Iterator[tuple[int, dict[str, Any]]]:
    cmd = [sys.executable, "-m", "ccrawl.testing.synthweb", "--port", "0"]
    cmd += ["--hosts", str(hosts), "--pages", str(pages), "--page-bytes", str(page_bytes)]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline())
            yield port, json.loads(proc.stdout.readline())
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextlib.contextmanager
def _nginx(hosts: int, pages: int, page_bytes: int) -> Iterator[tuple[int, dict[str, Any]]]:
    from ccrawl.testing.nginx import NginxServer
    from ccrawl.testing.synthweb import page_html, site_host

    with tempfile.TemporaryDirectory(prefix="ccrawl-fetch-bench-") as root:
        (Path(root) / "p").mkdir()
        for n in range(pages):
            html = page_html(site_host(n % max(hosts, 1)), n, hosts=hosts, pages=pages, target_bytes=page_bytes)
            (Path(root) / "p" / f"{n}.html").write_text(html)
        with NginxServer(root) as web:
            yield web.port, {}


async def _drive(cfg: FetchConfig, urls: list[str], seconds: float) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)

    async with Fetcher(cfg) as fetcher:

        async def worker() -> None:
            while time.monotonic() < deadline:
                try:
                    url = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await fetcher.fetch(url)

        start = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(cfg.concurrency)))
        elapsed = time.monotonic() - start
        stats = fetcher.stats()
    dns, robots = stats["dns"], stats["robots"]
    pool = elapsed * cfg.concurrency
    phases = stats["phases_s"]
    return {
        "pages": stats["finished"],
        "ok": stats["ok"],
        "failed": stats["failed"],
        "seconds": round(elapsed, 2),
        "pages_per_s": round(stats["finished"] / elapsed, 1),
        "mb_per_s": round(stats["body_bytes"] / elapsed / 1e6, 1),
        "phase_share_of_pool": {k: round(v / pool, 3) for k, v in phases.items()},
        "errors": {k: v for k, v in stats["errors"].items() if v},
        "dns_lookups": dns.get("lookups", 0),
        "dns_peak_in_flight": dns.get("peak_in_flight", 0),
        "robots_fetched": robots.get("fetched", 0),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/bench_fetch.py", description=__doc__.split("\n")[0])
    parser.add_argument("--server", choices=["nginx", "synthweb"], default="nginx")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--page-bytes", type=int, default=24_000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    parser.add_argument("--seconds", type=float, default=15.0, help="stop after this long")
    parser.add_argument("--robots", action="store_true", help="check robots.txt (one extra request per host)")
    parser.add_argument("--delay", type=float, default=0.0, help="per-host spacing, seconds")
    parser.add_argument(
        "--dns",
        action="store_true",
        help="resolve through the synthetic web's DNS server (c-ares) instead of the override (synthweb only)",
    )
    args = parser.parse_args(argv)
    serve = _nginx if args.server == "nginx" else _synthweb
    if args.dns and args.server != "synthweb":
        parser.error("--dns needs --server synthweb (its DNS server answers the .test names)")
    with serve(args.hosts, args.pages, args.page_bytes) as (port, info):
        from ccrawl.testing.synthweb import site_host

        suffix = ".html" if args.server == "nginx" else ""  # nginx serves files; the app serves routes
        urls = [f"http://{site_host(h)}:{port}/p/{n}{suffix}" for n in range(args.pages) for h in range(args.hosts)]
        # the DNS server answers loopback, which the fetcher refuses unless allowed (docs/fetch.md)
        names: dict[str, Any] = ({"nameservers": (info["dns"],), "allow_private_addresses": True} if args.dns
                                 else {"resolve": {"*.test": "127.0.0.1"}})
        cfg = FetchConfig(delay=args.delay, robots=args.robots, concurrency=args.concurrency, **names)
        result = run(_drive(cfg, urls, args.seconds), use_uvloop=args.loop == "uvloop")
    result.update(
        server=args.server,
        loop=args.loop,
        concurrency=args.concurrency,
        page_bytes=args.page_bytes,
        robots=args.robots,
        dns=args.dns,
        delay=args.delay,
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
