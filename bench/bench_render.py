"""The renderer from record batches against a one-process Python loop of ``surt.surt`` (issue 38).

Run from the repository root (after ``python setup.py build_ext --inplace``)::

    python bench/bench_render.py --urls 1000000 --runs 3                       # ~2-4 min on a loaded machine
    python bench/bench_render.py --urls 1000000 --runs 3 --before /work/main   # also the same commands on
                                                                               # another checkout, same run
    python bench/bench_render.py --columnar --runs 3 --before /work/main       # columnar count, native vs
                                                                               # duckdb, ~2 min

Every figure is a whole command, interpreter start-up included, wall seconds (median of ``--runs``) and
CPU seconds (user + sys of the process and its threads): ``ccrawl url surt -o tsv`` and ``-o jsonl``
with the URLs on stdin (one a line), output to a file, against the loop (stdin to stdout as
``url<TAB>surt``), which runs once: it is the slow side and its spread is small next to the ratio. The
runs are interleaved (each of ours, then the loop in the first round) so a slow minute weighs on all.

``--columnar``: ``ccrawl columnar count --tld com`` with ``--engine native`` (the default) and ``--engine
duckdb``, whole commands, against a fake Common Crawl on loopback (``ccrawl.testing.fakecc``, 20,000 captures
over 2,000 hosts, built once into a temporary directory), interleaved.

``--columnar-urls ROWS``: ``ccrawl columnar urls --local DIR`` with ``-o jsonl``, ``-o tsv`` and ``-o parquet``,
whole commands, output to a file, over a local copy of a cc-index-table of ROWS rows in one crawl: the fake
Common Crawl's table (``ccrawl.testing.fakecc``, as the tests build it) copied onto sibling hosts
(``r<k>.<host>``, as ``bench_columnar.py --profile large`` does) until it has ROWS rows, written by
``write_parts`` (sorted, row groups of 65,536 rows, page index). Built once into ``--root``; the outputs of
``--before`` must be the same bytes::

    python bench/bench_render.py --columnar-urls 1000000 --runs 5 --before /work/main

``--records N``: in one process, CPU seconds of N CDX-shaped records (12 text columns) rendered to a file
one at a time (``ccrawl.output.emit``) and a chunk at a time (``ccrawl.batchout.emit_records``, which
``search``, ``parse`` and ``news search`` use), the bytes asserted equal::

    python bench/bench_render.py --records 500000 --runs 3

``--ops``: the batch operations as whole commands, output to a file, the bytes of ``--before`` asserted equal
(issue 38 item 3): ``parse FILE --text -o jsonl`` over a WARC of ``--pages`` of the shared corpus's real pages
(``html-eval``, ~140 KB each); ``news search HOST -o jsonl`` over a local hub of synthetic index shards where
HOST has ``--hits`` rows (the month's manifest served on loopback); ``search '*.example.com' -o jsonl``
against the fake CDX index on loopback (``ccrawl.testing.fakecc.cdx``, in this process) holding ``--hits``
captures (capped at 100,000)::

    python bench/bench_render.py --ops --pages 300 --hits 200000 --runs 3 --before /work/main
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

LOOP = """
import sys, surt
w = sys.stdout.write
for line in sys.stdin:
    url = line.rstrip("\\n")
    try:
        w(url + "\\t" + surt.surt(url) + "\\n")
    except Exception as exc:
        w(url + "\\t\\t" + str(exc) + "\\n")
"""


def timed(cmd: list[str], stdin: Path, out: Path, pythonpath: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``cmd`` (its stdin a file, its stdout another)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdin, "rb") as given, open(out, "wb") as taken:
        subprocess.run(cmd, stdin=given, stdout=taken, stderr=subprocess.PIPE, env=env, check=True,
                       cwd=str(pythonpath))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def columnar(runs: int, trees: dict[str, Path]) -> None:
    """``columnar count`` end to end, native engine against DuckDB's, on every tree."""
    sys.path.insert(0, str(REPO))
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
    from ccrawl.testing.fakecc.columnar import many_hosts
    from ccrawl.testing.fakecc.site import HOSTS

    work = Path(tempfile.mkdtemp(prefix="ccrawl-render-cc-"))
    spec = SiteSpec(records=20000, files=4, older_records=100, older_files=2,
                    crawls=((2025, 26), (2025, 13), (2024, 51)), hosts=HOSTS + many_hosts(2000))
    with FakeCCServer(work / "cc", spec) as server:
        env = {"CCRAWL_COLLINFO_ENDPOINT": f"{server.url}/collinfo.json", "CCRAWL_DATA_ENDPOINT": server.url,
               "CCRAWL_CDX_ENDPOINT": server.url, "CCRAWL_DATA_DIR": str(work / "data"), "CCRAWL_GLOBAL_RATE": "0",
               "CCRAWL_CONFIG_DIR": str(work / "config")}
        os.environ.update(env)
        cases = {f"{tree} --engine {engine}": (path, [sys.executable, "-m", "ccrawl", "columnar", "count", "--tld",
                                                      "com", "--engine", engine, "-o", "jsonl"])
                 for tree, path in trees.items() for engine in ("native", "duckdb")}
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, (path, cmd) in cases.items():
                figures[name].append(timed(cmd, Path(os.devnull), work / "count.out", path))
    print(f"columnar count --tld com, fake Common Crawl on loopback; load {os.getloadavg()[0]:.1f}")
    print("| command | wall s (median; runs) | CPU s |")
    print("|---|---:|---:|")
    for name, done in figures.items():
        listed = ", ".join(f"{w:.2f}" for w, _ in done)
        wall, cpu = statistics.median(w for w, _ in done), statistics.median(c for _, c in done)
        print(f"| `{name}` | {wall:.2f} ({listed}) | {cpu:.2f} |")


def build_urls_index(root: Path, rows: int) -> Path:
    """A local cc-index-table of about ``rows`` rows in one crawl (see the module docstring); reused when built."""
    sys.path.insert(0, str(REPO))
    import gzip

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.columnar.schema import arrow_schema
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
    from ccrawl.testing.fakecc.columnar import DICTIONARY_ENCODED, TABLE_ROOT, Layout, many_hosts
    from ccrawl.testing.fakecc.site import HOSTS

    marker = root / ".bench-render-urls.json"
    want = json.dumps({"rows": rows, "v": 1})
    if marker.exists() and marker.read_text() == want:
        return root
    spec = SiteSpec(records=2000, files=2, older_records=10, older_files=1, crawls=((2025, 26), (2024, 51)),
                    hosts=HOSTS + many_hosts(500))
    with FakeCCServer(root, spec) as server:
        crawl = server.site.crawls[0]
    layout = Layout(max_parts=4, rows_per_part=1, row_group_rows=65536, page_bytes=64 << 10, write_batch=1024)
    listed = gzip.decompress((root / f"crawl-data/{crawl}/cc-index-table.paths.gz").read_bytes()).decode().split()
    directories = sorted({(root / p).parent for p in listed})
    tables = {d: pa.concat_tables([pq.read_table(root / p) for p in listed if (root / p).parent == d])
              for d in directories}
    base = sum(t.num_rows for t in tables.values())
    copies = max(1, -(-rows // base))
    paths: list[str] = []
    for directory, table in tables.items():
        table = table.select([n for n in table.schema.names if n not in ("crawl", "subset")])
        out = []
        for k in range(copies):  # r<k>.<host>: same TLD and registered domain, its own SURT key prefix
            host = pc.binary_join_element_wise(f"r{k}.", pc.cast(table["url_host_name"], pa.string()), "")
            url = pc.replace_substring_regex(table["url"], "^([a-z]+://)", f"\\1r{k}.", max_replacements=1)
            key = pc.replace_substring(table["url_surtkey"], ")", f",r{k})", max_replacements=1)
            copy = table
            for name, column in (("url_host_name", host), ("url", url), ("url_surtkey", key)):
                copy = copy.set_column(copy.schema.get_field_index(name), name, column)
            out.append(copy)
        subset = directory.name.split("=", 1)[1]
        big = pa.concat_tables(out).slice(0, rows * table.num_rows // base)
        big = big.sort_by([("url_surtkey", "ascending"), ("fetch_time", "ascending"), ("warc_filename", "ascending")])
        for old in directory.glob("*.parquet"):
            old.unlink()
        n_parts = layout.max_parts
        for p in range(n_parts):  # as write_parts writes them, from Arrow (a million dicts is gigabytes)
            rel = f"{TABLE_ROOT}/crawl={crawl}/subset={subset}/part-{p:05d}.c000.gz.parquet"
            start, stop = p * big.num_rows // n_parts, (p + 1) * big.num_rows // n_parts
            pq.write_table(big.slice(start, stop - start).cast(arrow_schema()), root / rel, compression="gzip",
                           row_group_size=layout.row_group_rows, data_page_size=layout.page_bytes,
                           write_statistics=True, write_page_index=True, use_dictionary=list(DICTIONARY_ENCODED),
                           write_batch_size=layout.write_batch)
            paths.append(rel)
    manifest = root / f"crawl-data/{crawl}/cc-index-table.paths.gz"
    manifest.write_bytes(gzip.compress("".join(f"{p}\n" for p in paths).encode(), mtime=0))
    marker.write_text(want)
    return root


def columnar_urls(rows: int, runs: int, root: Path, trees: dict[str, Path]) -> None:
    """``columnar urls --local`` to JSONL, TSV and Parquet, whole commands, on every tree, interleaved."""
    build_urls_index(root, rows)
    work = Path(tempfile.mkdtemp(prefix="ccrawl-render-urls-"))
    cases = {f"{tree} -o {fmt}": (path, [sys.executable, "-m", "ccrawl", "-q", "-o", fmt, "columnar", "urls",
                                         "--local", str(root)])
             for tree, path in trees.items() for fmt in ("parquet", "jsonl", "tsv")}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    sizes: dict[str, int] = {}
    for run in range(runs):
        for name, (path, cmd) in cases.items():
            out = work / f"{name.replace(' ', '_')}.out"
            figures[name].append(timed(cmd, Path(os.devnull), out, path))
            if run == 0:
                sizes[name] = out.stat().st_size
                if name.startswith("before"):
                    ours = work / f"{name.replace('before', 'ours', 1).replace(' ', '_')}.out"
                    if not name.endswith("parquet"):
                        assert ours.read_bytes() == out.read_bytes(), f"{name}: output differs"
    print(f"columnar urls --local, {rows:,} rows; load {os.getloadavg()[0]:.1f}")
    print("| command | wall s (median; runs) | CPU s | x its -o parquet (wall) | bytes out |")
    print("|---|---:|---:|---:|---:|")
    for name, done in figures.items():
        listed = ", ".join(f"{w:.2f}" for w, _ in done)
        wall, cpu = statistics.median(w for w, _ in done), statistics.median(c for _, c in done)
        parquet = statistics.median(w for w, _ in figures[name.rsplit(" -o ", 1)[0] + " -o parquet"])
        print(f"| `{name}` | {wall:.2f} ({listed}) | {cpu:.2f} | {wall / parquet:.2f}x | {sizes[name]:,} |")


def records(n: int, runs: int) -> None:
    """In one process, CPU seconds: ``n`` CDX-shaped records (12 text columns, as ``search`` yields them)
    rendered one at a time (``ccrawl.output.emit``) and a chunk at a time (``ccrawl.batchout.emit_records``,
    what ``search``, ``parse`` and ``news search`` use), best of ``runs``, to a file."""
    sys.path.insert(0, str(REPO))
    from ccrawl._entry import refuse_pandas
    from ccrawl.batchout import emit_records
    from ccrawl.output import OutputOptions, emit

    refuse_pandas()
    cols = ("urlkey", "timestamp", "url", "mime", "mime-detected", "status", "digest", "length", "offset",
            "filename", "languages", "encoding")
    rows = [{c: f"{c}-{i}-\u00e9 x" for c in cols} for i in range(n)]
    work = Path(tempfile.mkdtemp(prefix="ccrawl-render-records-"))
    print(f"{n:,} records of {len(cols)} text columns, in one process; load {os.getloadavg()[0]:.1f}")
    print("| format | one at a time, CPU s (best) | a chunk at a time, CPU s (best) | x |")
    print("|---|---:|---:|---:|")
    for fmt in ("jsonl", "csv", "tsv"):
        best: dict[str, float] = {}
        outputs: dict[str, bytes] = {}
        for _ in range(runs):
            for name, render in (("one", emit), ("chunk", emit_records)):
                out = work / f"{name}.{fmt}"
                with open(out, "w", encoding="utf-8", newline="") as stream:
                    start = time.process_time()
                    render(iter(rows), OutputOptions(fmt=fmt), columns=cols, stream=stream)
                    taken = time.process_time() - start
                best[name] = min(best.get(name, taken), taken)
                outputs[name] = out.read_bytes()
        assert outputs["one"] == outputs["chunk"], f"-o {fmt}: the bytes differ"
        print(f"| {fmt} | {best['one']:.2f} | {best['chunk']:.2f} | {best['one'] / best['chunk']:.1f}x |")


def _parse_warc(work: Path, pages: int) -> Path:
    """A WARC of ``pages`` of the shared corpus's real pages, as responses."""
    corpus = Path(os.environ.get("CCRAWL_CORPUS", REPO.parent / "shared" / "corpus")) / "html-eval" / "pages"
    files = sorted(corpus.glob("*.html"))
    path = work / "pages.warc"
    with path.open("wb") as out:
        for n in range(pages):
            body = files[n % len(files)].read_bytes()
            block = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n"
                     % len(body) + body)
            out.write(b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://site%d.test/p%d\r\n"
                      b"WARC-Date: 2024-03-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:%032x>\r\n"
                      b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n"
                      % (n % 50, n, n, len(block)) + block + b"\r\n\r\n")
    return path


def _news_hub(work: Path, hits: int) -> tuple[Path, Path]:
    """A local hub of 8 synthetic index shards for 2026/07 where ``big.example`` has ``hits`` rows among others'
    (and the month's manifest under a data root); returns (hub, data root)."""
    import gzip

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.news.months import source_name
    from ccrawl.commoncrawl.news.schema import arrow_schema
    from ccrawl.hub.localhub import LocalRepo
    from ccrawl.hub.repo import Add

    data = work / "data"
    paths = [f"crawl-data/CC-NEWS/2026/07/CC-NEWS-20260701{k:06d}-{k:05d}.warc.gz" for k in range(8)]
    (data / "crawl-data/CC-NEWS/2026/07").mkdir(parents=True)
    (data / "crawl-data/CC-NEWS/2026/07/warc.paths.gz").write_bytes(gzip.compress("\n".join(paths).encode() + b"\n"))
    hub = work / "hub"
    repo = LocalRepo(hub, "bench/news")
    repo.create()
    schema = arrow_schema()
    adds = []
    per = -(-hits // len(paths))
    for path in paths:
        n = per * 2
        i = pc.cast(pa.array(range(n)), pa.string())
        big = pc.less(pa.array(range(n)), per)
        host = pc.if_else(big, "big.example", pc.binary_join_element_wise("h", i, ".other.example", ""))
        url = pc.binary_join_element_wise("https://", host, "/2026/07/article-", i, "?ref=\u00e9t\u00e9", "")
        cols = {
            "url_surtkey": pc.binary_join_element_wise("example,big)/2026/07/article-", i, ""),
            "url": url, "url_host_name": host, "url_host_registered_domain": pa.array(["example"] * n),
            "url_host_tld": pa.array(["example"] * n), "url_protocol": pa.array(["https"] * n),
            "fetch_time": pa.array([1782000000_000000 + j * 1000_000 for j in range(n)], pa.timestamp("us", tz="UTC")),
            "fetch_status": pa.array([200] * n, pa.int32()), "fetch_redirect": pa.nulls(n, pa.string()),
            "content_digest": pc.binary_join_element_wise("SHA1DIGEST", i, ""),
            "content_mime_type": pa.array(["text/html"] * n), "content_mime_detected": pa.array(["text/html"] * n),
            "content_charset": pa.array(["UTF-8"] * n), "content_languages": pa.array(["eng"] * n),
            "content_truncated": pa.nulls(n, pa.string()), "warc_filename": pa.array([path] * n),
            "warc_record_offset": pa.array([j * 40_000 for j in range(n)], pa.int64()),
            "warc_record_length": pa.array([30_000 + j % 9000 for j in range(n)], pa.int64()),
            "content_language_confidence": pa.array([0.99] * n), "content_language_declared": pa.nulls(n, pa.string()),
            "content_length": pa.array([90_000] * n, pa.int64()),
            "warc_record_id": pc.binary_join_element_wise("<urn:uuid:", i, ">", ""),
        }
        table = pa.table({name: cols[name] for name in schema.names}).cast(schema)
        out = work / f"{source_name(path)}.parquet"
        pq.write_table(table, out, row_group_size=65536, compression="zstd")
        adds.append(Add(f"data/2026/07/{out.name}", out))
    repo.commit(adds, message="bench shards")
    return hub, data


def ops_bench(runs: int, trees: dict[str, Path], pages: int, hits: int) -> None:
    """``parse --text``, ``news search`` and ``search`` as whole commands to JSONL, on every tree, interleaved."""
    import functools
    import http.server
    import threading

    sys.path.insert(0, str(REPO))
    from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer

    work = Path(tempfile.mkdtemp(prefix="ccrawl-render-ops-"))
    warc = _parse_warc(work, pages)
    hub, data = _news_hub(work, hits)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(data))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    crawl = "CC-MAIN-2025-26"
    n_cdx = min(hits, 100_000)
    rows = [{"urlkey": f"com,example)/p{i:07d}", "timestamp": f"2025070{i % 9 + 1}120000",
             "url": f"https://example.com/p{i:07d}?q=\u00e9", "mime": "text/html", "mime-detected": "text/html",
             "status": "200", "digest": f"SHA1DIGEST{i:010d}", "length": str(1000 + i % 5000),
             "offset": str(40_000 * i), "filename": f"crawl-data/{crawl}/segments/x/warc/f{i % 80:05d}.warc.gz",
             "languages": "eng", "encoding": "UTF-8"} for i in range(n_cdx)]
    with CdxServer(CdxIndex({crawl: rows})) as cdx:
        os.environ.update({"CCRAWL_DATA_ENDPOINT": f"http://127.0.0.1:{httpd.server_address[1]}",
                           "CCRAWL_CDX_ENDPOINT": cdx.url, "CCRAWL_GLOBAL_RATE": "0",
                           "CCRAWL_DATA_DIR": str(work / "ccdata"), "CCRAWL_CONFIG_DIR": str(work / "config"),
                           "CCRAWL_NO_CACHE": "1"})
        commands = {
            f"parse --text ({pages} pages)": ["parse", str(warc), "--text"],
            f"news search ({hits:,} hits)": ["news", "search", "big.example", "--year", "2026", "--month", "7",
                                             "--repo", "bench/news", "--hub", str(hub)],
            f"search ({n_cdx:,} captures)": ["-c", crawl, "search", "*.example.com"],
        }
        cases = {f"{what}, {tree}": (path, [sys.executable, "-m", "ccrawl", "-q", "-o", "jsonl", *cmd])
                 for what, cmd in commands.items() for tree, path in trees.items()}
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        sizes: dict[str, int] = {}
        for run in range(runs):
            for name, (path, cmd) in cases.items():
                out = work / f"{name.replace(' ', '_').replace('/', '_')}.out"
                figures[name].append(timed(cmd, Path(os.devnull), out, path))
                if run == 0:
                    sizes[name] = out.stat().st_size
                    if name.endswith(", before"):
                        ours = out.with_name(out.name.replace("before", "ours"))
                        assert ours.read_bytes() == out.read_bytes(), f"{name}: output differs"
    httpd.shutdown()
    print(f"batch operations to -o jsonl, whole commands; load {os.getloadavg()[0]:.1f}")
    print("| command | wall s (median; runs) | CPU s | x before (CPU) | bytes out |")
    print("|---|---:|---:|---:|---:|")
    for name, done in figures.items():
        listed = ", ".join(f"{w:.2f}" for w, _ in done)
        wall, cpu = statistics.median(w for w, _ in done), statistics.median(c for _, c in done)
        before = name.rsplit(", ", 1)[0] + ", before"
        ratio = f"{statistics.median(c for _, c in figures[before]) / cpu:.2f}x" if before in figures else ""
        print(f"| `{name}` | {wall:.2f} ({listed}) | {cpu:.2f} | {ratio} | {sizes[name]:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="another checkout to time the same commands on")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--columnar", action="store_true", help="time columnar count native vs duckdb instead")
    parser.add_argument("--columnar-urls", type=int, default=0, metavar="ROWS",
                        help="time columnar urls -o jsonl/tsv/parquet over a local index of ROWS rows instead")
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "ccrawl-render-urls",
                        help="where --columnar-urls builds (once) its local index")
    parser.add_argument("--records", type=int, default=0, metavar="N",
                        help="time N records rendered one at a time against a chunk at a time, in-process, instead")
    parser.add_argument("--ops", action="store_true",
                        help="time parse --text, news search and search to JSONL as whole commands instead")
    parser.add_argument("--pages", type=int, default=300, help="--ops: real pages in the parse WARC")
    parser.add_argument("--hits", type=int, default=200_000, help="--ops: rows news search and search find")
    args = parser.parse_args()
    if args.ops:
        ops_bench(args.runs, {"ours": REPO} | ({"before": args.before.resolve()} if args.before else {}), args.pages,
                  args.hits)
        return
    if args.records:
        records(args.records, args.runs)
        return
    if args.columnar_urls:
        columnar_urls(args.columnar_urls, args.runs, args.root,
                      {"ours": REPO} | ({"before": args.before.resolve()} if args.before else {}))
        return
    if args.columnar:
        columnar(args.runs, {"ours": REPO} | ({"before": args.before.resolve()} if args.before else {}))
        return

    from urlsets import distinct_host_urls

    work = Path(tempfile.mkdtemp(prefix="ccrawl-render-"))
    text = work / "urls.txt"
    text.write_text("\n".join(distinct_host_urls(args.urls)) + "\n", encoding="utf-8")
    trees = {"ours": REPO} | ({"before": args.before.resolve()} if args.before else {})
    cases = {f"{tree} -o {fmt}": (path, [sys.executable, "-m", "ccrawl", "-o", fmt, "-q", "url", "surt"])
             for tree, path in trees.items() for fmt in ("tsv", "jsonl")}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    loop: tuple[float, float] | None = None
    outputs: dict[str, bytes] = {}
    for run in range(args.runs):
        for name, (path, cmd) in cases.items():
            out = work / f"{name.replace(' ', '_')}.out"
            figures[name].append(timed(cmd, text, out, path))
            if run == 0:
                outputs[name] = out.read_bytes()
        if loop is None:
            loop = timed([sys.executable, "-c", LOOP], text, work / "loop.out", REPO)
    assert loop is not None
    if args.before:  # the renderer changed nothing a user sees: the bytes are the same
        for fmt in ("tsv", "jsonl"):
            assert outputs[f"ours -o {fmt}"] == outputs[f"before -o {fmt}"], f"-o {fmt} output differs"
    result: dict[str, Any] = {"urls": args.urls, "runs": args.runs, "loop_s": loop[0], "loop_cpu_s": loop[1]}
    load = os.getloadavg()[0]
    print(f"{args.urls:,} URLs on stdin; the loop: {loop[0]:.2f} s wall, {loop[1]:.2f} s CPU; load {load:.1f}")
    print("| command | wall s (median; runs) | x the loop | CPU s | x the loop's CPU |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        result[name] = {"wall_s": wall, "runs": [w for w, _ in runs], "cpu_s": cpu,
                        "ratio": loop[0] / wall, "cpu_ratio": loop[1] / cpu}
        listed = ", ".join(f"{w:.2f}" for w, _ in runs)
        print(f"| `{name}` | {wall:.2f} ({listed}) | **{loop[0] / wall:.1f}x** | {cpu:.2f} | {loop[1] / cpu:.1f}x |")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
