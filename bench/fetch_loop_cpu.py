"""CPU per page of one fetch process's loop with its own writer, against the floor peer's loop, in one process.

    python -m bench.fetch_loop_cpu --hosts 100 --pages 40 --repeats 3 [--out /tmp/flc]

No spawn, no parent, no imports in the measurement: it isolates the per-page cost that a long run
pays for every page. Against nginx serving the shared html-eval pages (real size), it runs,
interleaved and ``--repeats`` times, (a) ``ccrawl.recrawl.fetchproc.serve`` with a
:class:`~ccrawl.recrawl.fetchwriter.FetchWriter` (what a fetch process of a fetch-only run does:
host-ready scheduling, the Fetcher, the capture row, zstd Parquet row groups, a seal at the end)
and (b) the floor peer's crawl loop (``bench.peers.floor_peer``: aiohttp, SHA-1, a 5-column zstd
Parquet row group inline), each over the same URLs with the same concurrency. CPU is this
process's (every thread), so the ratio is of CPU ms per page, which the machine's load moves less
than the wall clock. Prints one table and the ratio of medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import DOMAIN, prepare_site, serve, urls  # noqa: E402


class _Events:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def put(self, ev: Any) -> None:
        self.items.append(ev)


async def _engine(urls_: list[str], out: Path, concurrency: int) -> None:
    from ccrawl.fetch.config import FetchConfig
    from ccrawl.recrawl.fetchproc import Inbox
    from ccrawl.recrawl.fetchproc import serve as fetch_loop
    from ccrawl.recrawl.fetchwriter import FetchWriter
    from ccrawl.recrawl.messages import Drained, Exit, Seal, StopFeed, WorkBatch, WorkItem

    events = _Events()
    writer = FetchWriter(0, str(out), "bench-f0", {"ccrawl.version": "bench"}, events, shard_size=1 << 40,
                         row_group_bytes=32 << 20)
    config = FetchConfig(delay=0, concurrency=concurrency, resolve={f"*.{DOMAIN}": "127.0.0.1"},
                         timeout=60, allow_private_addresses=True).validate()
    inbox = Inbox()
    inbox.queue.put_nowait(WorkBatch([WorkItem(i, u) for i, u in enumerate(urls_)]))
    inbox.queue.put_nowait(StopFeed())
    task = asyncio.create_task(fetch_loop(0, inbox, events, writer, config, warc=False))
    while not any(isinstance(e, Drained) for e in events.items):
        await asyncio.sleep(0.01)
    inbox.queue.put_nowait(Seal(0, final=True))
    inbox.queue.put_nowait(Exit())
    await task


def _measure(name: str, coro: Any) -> tuple[float, float]:
    import uvloop

    wall0, cpu0 = time.perf_counter(), time.process_time()
    uvloop.run(coro)
    return time.process_time() - cpu0, time.perf_counter() - wall0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", choices=["engine", "floor"], help="run one loop (to profile it with py-spy)")
    args = ap.parse_args()
    import aiohttp  # noqa: F401 - imported before any clock starts
    import pyarrow.parquet  # noqa: F401

    from bench.peers.floor_peer import _crawl

    work = args.out or Path(tempfile.mkdtemp(prefix="flc-"))
    site = work / "site"
    size = prepare_site(site, pages=args.pages, corpus=Path("/work/shared/corpus/html-eval/pages")
                        if Path("/work/shared/corpus/html-eval/pages").is_dir() else None)
    cpu: dict[str, list[float]] = {"engine": [], "floor": []}
    wall: dict[str, list[float]] = {"engine": [], "floor": []}
    with serve(site, hosts=args.hosts, pages=args.pages) as (which, port):
        listing = list(urls(args.hosts, args.pages, port))
        n = len(listing)
        print(f"fetch_loop_cpu: {which}, {n} URLs, {size / args.pages / 1000:.0f} KB a page", file=sys.stderr)
        for r in range(args.repeats):
            for name in [args.only] if args.only else ["engine", "floor"]:
                out = work / f"{name}-{r}"
                out.mkdir(parents=True, exist_ok=True)
                coro = (_engine(listing, out, args.concurrency) if name == "engine"
                        else _crawl(listing, args.concurrency, "127.0.0.1", out / "floor.parquet"))
                c, w = _measure(name, coro)
                cpu[name].append(c / n * 1000)
                wall[name].append(n / w)
                print(f"  {name} #{r + 1}: {c / n * 1000:.3f} CPU ms/page, {n / w:.0f} pages/s", file=sys.stderr)
    if args.only:
        return
    print("| loop | CPU ms/page (median, min-max) | pages/s (median) |\n|---|---|---|")
    for name in ("engine", "floor"):
        print(f"| {name} | {statistics.median(cpu[name]):.3f} ({min(cpu[name]):.3f}-{max(cpu[name]):.3f}) | "
              f"{statistics.median(wall[name]):.0f} |")
    ratio = statistics.median(cpu["engine"]) / statistics.median(cpu["floor"])
    print(f"\nengine / floor CPU per page: **{ratio:.2f}x**")


if __name__ == "__main__":
    main()
