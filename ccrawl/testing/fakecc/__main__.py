"""``python -m ccrawl.testing.fakecc``: serve a fake Common Crawl on loopback until interrupted."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from ccrawl.testing.fakecc.server import FakeCCServer
from ccrawl.testing.fakecc.site import SiteSpec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccrawl.testing.fakecc", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--root", type=Path, help="bucket directory (default: a temporary one)")
    parser.add_argument("--records", type=int, default=30, help="records in the newest crawl's WARC files")
    parser.add_argument("--files", type=int, default=3, help="WARC files in the newest crawl")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every request waits")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fakecc-") as tmp:
        root = args.root or Path(tmp)
        server = FakeCCServer(root, SiteSpec(records=args.records, files=args.files), host=args.host, port=args.port)
        server.faults.latency = args.latency
        with server:
            print(server.url, flush=True)
            print(f"fakecc: serving {root} with crawls {', '.join(server.site.crawls)}", file=sys.stderr, flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
