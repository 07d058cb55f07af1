"""``python -m ccrawl.testing.fakecc``: serve a fake Common Crawl on loopback until interrupted.

SIGINT or SIGTERM stops it and removes its temporary bucket (``--root`` is the caller's and is kept).
CC-NEWS months are made from the shared corpus: ``$CCRAWL_CORPUS``, else ``../shared/corpus`` beside
the checkout; stderr says at start whether they are served, and without the corpus every CC-NEWS
request answers 424 naming what is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from ccrawl.testing.fakecc.server import FakeCCServer
from ccrawl.testing.fakecc.site import SiteSpec


class _Stop(Exception):
    """SIGINT or SIGTERM: unwind, so the temporary bucket is removed on the way out."""


def _stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccrawl.testing.fakecc", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--root", type=Path, help="bucket directory (default: a temporary one)")
    parser.add_argument("--records", type=int, default=30, help="records in the newest crawl's WARC files")
    parser.add_argument("--files", type=int, default=3, help="WARC files in the newest crawl")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every request waits")
    args = parser.parse_args(argv)
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _serve(args)
    except _Stop:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _serve(args: argparse.Namespace) -> None:
    from ccrawl.testing.fakecc.news import find_corpus

    with contextlib.ExitStack() as stack:
        root = args.root or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fakecc-")))
        server = FakeCCServer(root, SiteSpec(records=args.records, files=args.files), host=args.host, port=args.port)
        server.faults.latency = args.latency
        with server:
            print(server.url, flush=True)
            print(f"fakecc: serving {root} with crawls {', '.join(server.site.crawls)}", file=sys.stderr, flush=True)
            corpus, missing = find_corpus()
            print(f"fakecc: CC-NEWS months from the shared corpus at {corpus}" if corpus is not None
                  else f"fakecc: no CC-NEWS (its requests answer 424): {missing}", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
