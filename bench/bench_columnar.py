"""Columnar engines over the fake Common Crawl's cc-index-table: native vs DuckDB, bytes read, host lists.

Builds (once, into ``--root``) a fake bucket with many hosts, serves it on loopback, and runs each
query on both engines over the same ranged-HTTP source, interleaved, ``--repeats`` times, with the
client's disk cache off and a fresh source per run (so every run pays its footers). The time is the
query's wall clock once the part list is known (crawl list and manifests are read before, the same
for both). Prints a Markdown table: median wall seconds per engine, the ratio, and bytes read as a
share of the index bytes.

    python bench/bench_columnar.py --root /tmp/colbench --repeats 5

``--profile large`` serves a copy of that bucket whose table has the shape of Common Crawl's parts
(within the fake's means): every capture repeated on 8 sibling hosts (``r0.www.example.com``...,
same registered domain), row groups of 65,536 rows and 64 KiB pages, so a key column chunk has
tens of pages as a real one does (the default profile: whole parts of 1,200-20,000 rows in one or two
row groups, 8 KiB pages, ~10 pages a chunk). Built once into ``--root`` (default ``<tmp>/colbench-large``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ccrawl.commoncrawl.columnar import parts, query
from ccrawl.commoncrawl.columnar.filters import Filters
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.columnar import many_hosts, part_paths
from ccrawl.testing.fakecc.site import HOSTS

CRAWLS = ((2025, 26), (2025, 13), (2024, 51))


def build(root: Path) -> FakeCCServer:
    if (root / "captures.jsonl").exists():
        return FakeCCServer(root)
    spec = SiteSpec(records=40000, files=8, older_records=12000, older_files=3, crawls=CRAWLS,
                    hosts=HOSTS + many_hosts(4000))
    return FakeCCServer(root, spec)


LARGE = {"v": 2, "copies": 8, "row_group_rows": 65536, "page_bytes": 64 << 10, "write_batch": 1024, "parts": 2}


def _sibling(host: str, k: int) -> str:
    # A subdomain of the host: the registered domain, the TLD and so the key prefixes stay the same.
    return f"r{k}.{host}"


def build_large(root: Path, small: Path) -> FakeCCServer:
    """The small bucket copied to ``root``, its table rewritten with every capture on 8 hosts and big row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.testing.fakecc.columnar import TABLE_ROOT, Layout, write_parts

    marker = root / ".bench-large.json"
    if marker.exists() and json.loads(marker.read_text()) == LARGE:
        return FakeCCServer(root)
    build(small).site  # noqa: B018  (builds the small bucket when it is not there yet)
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(small, root)
    layout = Layout(max_parts=int(LARGE["parts"]), rows_per_part=1, row_group_rows=int(LARGE["row_group_rows"]),
                    page_bytes=int(LARGE["page_bytes"]), write_batch=int(LARGE["write_batch"]))
    manifests: dict[str, list[str]] = {}
    for directory in sorted((root / TABLE_ROOT).glob("crawl=*/subset=*")):
        crawl, subset = directory.parent.name.split("=", 1)[1], directory.name.split("=", 1)[1]
        rows = pa.concat_tables([pq.read_table(p) for p in sorted(directory.glob("*.parquet"))]).to_pylist()
        out = []
        for k in range(int(LARGE["copies"])):
            for r in rows:
                host = r["url_host_name"]
                new = _sibling(host, k)
                rest = r["url_surtkey"].partition(")")[2]
                c = dict(r)
                c["url_host_name"] = new
                c["url"] = r["url"].replace(f"//{host}", f"//{new}", 1)
                c["url_surtkey"] = ",".join(reversed(new.split("."))) + ")" + rest
                c["url_host_name_reversed"] = ".".join(reversed(new.split(".")))
                out.append(c)
        manifests.setdefault(crawl, []).extend(write_parts(root, crawl, subset, out, layout))
    for crawl, paths in manifests.items():
        import gzip

        manifest = root / f"crawl-data/{crawl}/cc-index-table.paths.gz"
        manifest.write_bytes(gzip.compress("".join(f"{p}\n" for p in paths).encode(), mtime=0))
    marker.write_text(json.dumps(LARGE))
    return FakeCCServer(root)


SOURCE = "http"


class ServerProcess:
    """The fake served by a Python process of its own, so its request handling is not timed with the client's."""

    def __init__(self, root: Path) -> None:
        import subprocess
        import sys

        code = ("import sys, time\nfrom ccrawl.testing.fakecc import FakeCCServer\n"
                "s = FakeCCServer(sys.argv[1]).start()\nprint(s.url, flush=True)\nsys.stdin.read()\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.close()
            raise RuntimeError("the fake server process did not start")

    def client_options(self, **extra: Any) -> dict[str, Any]:
        options: dict[str, Any] = {"collinfo_endpoint": f"{self.url}/collinfo.json", "data_endpoint": self.url,
                                   "cdx_endpoint": self.url, "s3_endpoint": self.url, "global_rate": 0,
                                   "backoff": 0.01, "backoff_max": 0.05}
        options.update(extra)
        return options

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # the child's read returns and it exits
        self.proc.wait(30)


def once(server: Any, kind: str, f: Filters, engine: str, jobs: int) -> tuple[float, query.Explain, Any]:
    if SOURCE == "local":
        index = parts.open_local(server.site.root)
    else:
        index = parts.open_http(server.client_options(no_cache=True), "all", connections=2 * jobs)
    try:
        explain = query.Explain()
        # Timed from here: the crawl list and manifests (the same for both engines) are already read.
        started = time.perf_counter()
        answer = list(query.run(kind, f.with_crawls(index.crawls), index, engine=engine, jobs=jobs,
                                explain=explain))
        return time.perf_counter() - started, explain, answer
    finally:
        index.source.close()


def _canon(kind: str, answer: list[dict[str, Any]]) -> Any:
    return sorted(map(str, answer)) if kind in ("urls", "locations") else answer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default=str(Path(tempfile.gettempdir()) / "colbench"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--source", choices=("http", "local"), default="http",
                    help="ranged reads over loopback HTTP (default) or from the files (engine compute alone)")
    ap.add_argument("--profile", choices=("small", "large"), default="small",
                    help="the fake's own table (default) or the large-row-group copy (see the module doc)")
    ap.add_argument("--server", choices=("thread", "process"), default="thread",
                    help="the fake in a thread of the bench (default: its request handling is timed with both "
                         "engines) or in a process of its own")
    ap.add_argument("--large-root", default=str(Path(tempfile.gettempdir()) / "colbench-large"))
    args = ap.parse_args()
    global SOURCE
    SOURCE = args.source
    server = build(Path(args.root)) if args.profile == "small" else build_large(Path(args.large_root),
                                                                                Path(args.root))
    with contextlib.ExitStack() as stack:
        if args.server == "thread":
            stack.enter_context(server)
            endpoint: Any = server
        else:
            endpoint = ServerProcess(Path(server.site.root))
            stack.callback(endpoint.close)
        total = sum(p.stat().st_size for p in part_paths(server.site.root))
        import pyarrow.parquet as pq

        rows = sum(pq.read_metadata(p).num_rows for p in part_paths(server.site.root))
        domain = "example.com"
        hosts = sorted({c["url"].split("/")[2] for c in server.site.captures})
        rng = random.Random(5)
        if args.profile == "large":
            hosts = sorted(_sibling(h, k) for h in hosts for k in range(int(LARGE["copies"])))
        listed = rng.sample(hosts, 100) + [f"h{i}.absent-{i % 97}.example" for i in range(9900)]
        print(f"index: {len(part_paths(server.site.root))} parts, {total:,} bytes, {rows:,} rows, "
              f"{len(hosts):,} hosts\n")
        cases = [
            ("count", Filters(domains=(domain,)), f"count --domain {domain}"),
            ("urls", Filters(domains=(domain,)), f"urls --domain {domain}"),
            ("langs", Filters(domains=(domain,)), f"langs --domain {domain}"),
            ("count", Filters(tlds=("vn",), not_langs=("vie",)), "count --tld vn --not-lang vie"),
            ("langs", Filters(tlds=("de",)), "langs --tld de"),
            ("urls", Filters(hosts=tuple(listed)), "urls --hosts-file (10,000 hosts, 100 present)"),
            ("count", Filters(statuses=(200,)), "count --status 200 (no key prefix: full scan of a column)"),
        ]
        print("| query | native s | duckdb s | duckdb/native | native bytes read | duckdb bytes read | "
              "native requests |")
        print("|---|---|---|---|---|---|---|")
        for kind, f, _label in cases[:2]:  # warm-up: imports, kernels, connections; not counted
            for engine in ("native", "duckdb"):
                once(endpoint, kind, f, engine, args.jobs)
        for kind, f, label in cases:
            times: dict[str, list[float]] = {"native": [], "duckdb": []}
            explains: dict[str, query.Explain] = {}
            answers: dict[str, Any] = {}
            for _ in range(args.repeats):
                for engine in ("native", "duckdb"):
                    t, ex, ans = once(endpoint, kind, f, engine, args.jobs)
                    times[engine].append(t)
                    explains[engine] = ex
                    answers[engine] = _canon(kind, ans)
            assert answers["native"] == answers["duckdb"], label
            n, d = statistics.median(times["native"]), statistics.median(times["duckdb"])
            bn, bd = explains["native"].bytes_read, explains["duckdb"].bytes_read
            print(f"| `{label}` | {n:.3f} | {d:.3f} | {d / n:.2f}x | {bn:,} ({100 * bn / total:.2f}%) | "
                  f"{bd:,} ({100 * bd / total:.2f}%) | {explains['native'].requests} |")


if __name__ == "__main__":
    main()
