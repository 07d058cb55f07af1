"""Throughput of ``recrawl run`` end to end against the benchmark web (nginx when installed).

    python -m bench.bench_recrawl --hosts 200 --pages 25 --max-pages 5000 [--format warc] [--no-extract]
                                  [--workers 128] [--fetchers 1] [--extractors 2] [--writers 1]

Builds the site and work list with ``bench.web``, runs :func:`ccrawl.recrawl.run_recrawl` with
delay 0 and the resolver override, and prints the run summary, the wall time and the peak RSS of
the parent and of the largest pipeline process. Bounded by ``--max-pages``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from bench.web import DOMAIN, prepare_site, serve, write_worklist


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=25)
    ap.add_argument("--max-pages", type=int, default=5000)
    ap.add_argument("--format", default="parquet")
    ap.add_argument("--no-extract", action="store_true")
    ap.add_argument("--workers", type=int, default=128)
    ap.add_argument("--fetchers", type=int)
    ap.add_argument("--extractors", type=int)
    ap.add_argument("--writers", type=int, default=1)
    ap.add_argument("--queue-mb", type=float, default=128)
    ap.add_argument("--server", default="auto")
    ap.add_argument("--corpus", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ccrawl-bench-") as tmp:
        root = Path(tmp)
        prepare_site(root / "site", pages=args.pages, corpus=args.corpus)
        with serve(root / "site", server=args.server, hosts=args.hosts, pages=args.pages) as (which, port):
            wl = write_worklist(root, args.hosts, args.pages, port)
            from ccrawl.recrawl import run_recrawl

            t0 = time.perf_counter()
            s = run_recrawl(
                str(wl), column="url", out=str(root / "out"), format=args.format, no_extract=args.no_extract,
                delay=0, workers=args.workers, fetchers=args.fetchers, extractors=args.extractors,
                writers=args.writers, queue_mb=args.queue_mb, max_pages=args.max_pages,
                resolve={f"*.{DOMAIN}": "127.0.0.1"}, progress="none",
            )
            wall = time.perf_counter() - t0
            kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            out_bytes = sum(f.stat().st_size for f in (root / "out").iterdir())
        print("\n".join(s.lines()), file=sys.stderr)
        print(json.dumps({"server": which, "pages": s.fetched, "failed": s.failed, "wall_s": round(wall, 2),
                          "pages_per_s_incl_startup": round(s.fetched / wall, 1), "pages_per_s": s.pages_per_s,
                          "peak_rss_parent_mb": round(me), "peak_rss_largest_child_mb": round(kids),
                          "output_mb": round(out_bytes / 1048576, 1), "files": len(s.files)}))


if __name__ == "__main__":
    main()
