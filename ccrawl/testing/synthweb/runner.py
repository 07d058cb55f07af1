"""Running the synthetic web: in a thread for synchronous callers, or standalone from the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ccrawl.testing.synthweb.app import SynthWeb


class SynthWebThread:
    """A :class:`SynthWeb` on its own event loop in a daemon thread, for synchronous callers.

    ``with SynthWebThread(hosts=10) as web: ...`` gives the started SynthWeb; a test can then run
    its own event loop (``asyncio.run``) or processes against it. Counters in ``web.stats`` are
    plain ints and Counters, safe to read from the calling thread.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.web = SynthWeb(**kwargs)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="synthweb", daemon=True)

    def __enter__(self) -> SynthWeb:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.web.start(), self._loop).result(timeout=30)
        return self.web

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.web.stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


async def _serve(args: argparse.Namespace) -> None:
    synth = SynthWeb(hosts=args.hosts, pages=args.pages, page_bytes=args.page_bytes, port=args.port, bind=args.bind)
    await synth.start()
    print(synth.port, flush=True)
    print(json.dumps(synth.info()), flush=True)
    if args.urls_out:
        with Path(args.urls_out).open("w") as out:
            for kind, urls in synth.catalog().items():
                for url in urls:
                    out.write(json.dumps({"kind": kind, "url": url}) + "\n")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await synth.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ccrawl.testing.synthweb", description="Serve the synthetic web on loopback."
    )
    parser.add_argument("--port", type=int, default=0, help="HTTP port (0 picks a free one)")
    parser.add_argument("--bind", default="127.0.0.1", help="loopback address to listen on")
    parser.add_argument("--hosts", type=int, default=100, help="number of site{i}.test hosts")
    parser.add_argument("--pages", type=int, default=10, help="pages per host")
    parser.add_argument("--page-bytes", type=int, default=24_000, help="approximate size of a page")
    parser.add_argument("--urls-out", help="write the URL catalog here as JSONL {kind, url}")
    args = parser.parse_args(argv)
    if not args.bind.startswith("127."):
        print("synthweb: --bind must be a loopback address (127.0.0.0/8)", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))
    return 0
