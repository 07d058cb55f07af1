"""``python -m ccrawl.testing.fakehub --port 0 --root DIR``: serve the fake Hub until interrupted.

The first line on stdout is the URL to point ``HF_ENDPOINT`` at; faults are set by POSTing JSON to
``<url>/__fakehub/faults`` (fields of :meth:`ccrawl.testing.fakehub.faults.Faults.add`, plus
``"clear": true``) and counters read from ``<url>/__fakehub/stats``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

from ccrawl.testing.fakehub import FakeHub


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccrawl.testing.fakehub", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind, loopback by default")
    parser.add_argument("--port", type=int, default=0, help="port, 0 for a free one (printed on stdout)")
    parser.add_argument("--root", type=Path, default=None, help="where repos are stored (default: a temp dir)")
    parser.add_argument("--token", action="append", default=[], help="accept only this write token (repeatable)")
    parser.add_argument("--page-size", type=int, default=1000, help="entries per tree listing page")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault storm generator")
    args = parser.parse_args(argv)
    root = args.root or Path(tempfile.mkdtemp(prefix="fakehub-"))
    hub = FakeHub(root, host=args.host, port=args.port, tokens=frozenset(args.token), page_size=args.page_size,
                  seed=args.seed)
    hub.start()
    print(hub.url, flush=True)
    print(f"fakehub: serving {root} at {hub.url}", file=sys.stderr, flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    hub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
