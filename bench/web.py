"""The benchmark's synthetic web: N host names on loopback serving real HTML, and its work list.

    python -m bench.web --hosts 200 --pages 20 [--corpus DIR] [--server nginx|aiohttp] --out DIR

nginx serves the pages when it is installed (it is the throughput limit the runs are measured
against; ``scripts/install-system-deps`` installs it), else the aiohttp synthetic web does, and the
command says which. Pages come from a corpus directory of ``*.html`` files (``--corpus
../shared/corpus/html-eval/pages``) or, without one, from the synthetic web's page generator.
Every host name is ``h<i>.test`` (each its own registered domain); the engine and the peers
resolve them to 127.0.0.1.

The work list is Parquet (``<out>/worklist/part-00000.parquet``, one ``url`` column, hosts x
pages, host-interleaved so consecutive rows hit different hosts) and a plain list of the same
URLs (``<out>/urls.txt``) for the peers.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

#: Every host is ``h<i>.test``: ``.test`` is not on the public suffix list, so each host is its own
#: registered domain, as the hosts of a real work list mostly are (``h<i>.bench.test`` would make
#: them all one registered domain, pinned to one fetch process and one fleet shard).
DOMAIN = "test"


def host_name(i: int) -> str:
    return f"h{i}.{DOMAIN}"


def prepare_site(root: Path, *, pages: int, corpus: Path | None = None, page_bytes: int = 24_000) -> int:
    """Fill ``root/p/<i>.html`` with ``pages`` pages; returns the bytes written (or linked)."""
    target = root / "p"
    target.mkdir(parents=True, exist_ok=True)
    total = 0
    if corpus is not None:
        files = sorted(p for p in corpus.iterdir() if p.suffix in (".html", ".htm"))
        if not files:
            raise SystemExit(f"bench.web: no .html files in {corpus}")
        for i in range(pages):
            src = files[i % len(files)]
            dst = target / f"{i}.html"
            if not dst.exists():
                os.symlink(src.resolve(), dst)
            total += src.stat().st_size
        return total
    from ccrawl.testing.synthweb import page_html

    for i in range(pages):
        html = page_html("bench", i, hosts=1, pages=pages, target_bytes=page_bytes).encode()
        (target / f"{i}.html").write_bytes(html)
        total += len(html)
    return total


def urls(hosts: int, pages: int, port: int, *, host_sorted: bool = False) -> Iterator[str]:
    """Host-interleaved URLs: page 0 of every host, then page 1 of every host, ...

    ``host_sorted``: every page of host 0, then every page of host 1, ... (the order of a
    SURT-sorted URL index, the hard case for per-host politeness).
    """
    if host_sorted:
        for h in range(hosts):
            for page in range(pages):
                yield f"http://{host_name(h)}:{port}/p/{page}.html"
        return
    for page in range(pages):
        for h in range(hosts):
            yield f"http://{host_name(h)}:{port}/p/{page}.html"


def write_worklist(out: Path, hosts: int, pages: int, port: int, *, host_sorted: bool = False) -> Path:
    """The work list as Parquet (one ``url`` column) plus ``urls.txt``; returns the Parquet directory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    listing = list(urls(hosts, pages, port, host_sorted=host_sorted))
    wl = out / "worklist"
    wl.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"url": listing}), wl / "part-00000.parquet", row_group_size=50_000)
    (out / "urls.txt").write_text("\n".join(listing) + "\n")
    return wl


@contextlib.contextmanager
def serve(root: Path, *, server: str = "auto", hosts: int, pages: int) -> Iterator[tuple[str, int]]:
    """Start the web; yields (which server, port)."""
    from ccrawl.testing.nginx import NginxServer, nginx_binary

    if server in ("auto", "nginx") and nginx_binary() is not None:
        with NginxServer(root, workers=1) as web:
            yield "nginx", web.port
        return
    if server == "nginx":
        raise SystemExit("bench.web: nginx is not installed; run `bash scripts/install-system-deps`")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccrawl.testing.synthweb", "--hosts", str(hosts), "--pages", str(pages)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield "aiohttp", port
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--server", choices=["auto", "nginx", "aiohttp"], default="auto")
    parser.add_argument("--host-sorted", action="store_true", help="list every page of a host together")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    site = args.out / "site"
    size = prepare_site(site, pages=args.pages, corpus=args.corpus)
    with serve(site, server=args.server, hosts=args.hosts, pages=args.pages) as (which, port):
        wl = write_worklist(args.out, args.hosts, args.pages, port, host_sorted=args.host_sorted)
        print(f"bench.web: {which} on 127.0.0.1:{port}, {args.hosts} hosts x {args.pages} pages "
              f"({size / args.pages / 1000:.0f} KB a page), work list {wl}", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
