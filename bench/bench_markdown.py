"""``markdown export`` on one shard of real pages: the four engines compared, and export vs bare extraction.

    python bench/bench_markdown.py --pages 1032 --repeats 3 --out /tmp/md-bench

The shard is a WARC of the shared corpus's real pages (``html-eval/pages``, one response record
each, with the URL from ``evaldata.json`` when it has one), served by the fake Common Crawl on
loopback with a WET twin whose text is resiliparse's whole-page plain text (standing in for
Common Crawl's own WET extraction, which we cannot run here).

Two measurements, each engine in turn:

* the **engine comparison** the docs report: rows, Markdown bytes, Parquet bytes and wall time of
  ``markdown export --shards 0`` (one process, ``--workers 1``) for h2m, readability, raw and wet;
* the **overhead target**: pages per CPU second of that export (this process's CPU time, the
  export's threads included: download client, WARC decode, extraction, Parquet) against the bare
  extraction rate of the same engine on the same payloads (``get_extractor(name).extract`` over
  bodies already decoded in memory, which includes language and simhash, as the export's rows do).
  CPU time rather than wall time because the machine is shared; runs are interleaved (bare, export,
  bare, export, ...) and the median of the per-pair ratios reported.

Two readings of "the bare extraction rate", both reported:

* **with language and simhash** (``ratio``): the engine call as a user makes it, which computes both;
* **engine alone** (``strict``): the engine's time less its language detection and fingerprint, which
  the issue counts on the export's side ("WARC decode, language, simhash and Parquet writing cost at
  most a quarter on top").

This machine's speed moves 20-40% within seconds, so a pair's two runs can see different machines.
The **in-run shares** need no pairing: the engine's CPU inside an export (timed around each call)
over that export's CPU, with language and simhash counted in (``share``) or out (``strict_share``).
They leave out the freeing of each page's tree, which follows the call, so they are a floor.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import io
import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

# As the CLI does (ccrawl/_entry.py) before anything imports numpy: else OpenBLAS's idle threads spin in
# this process, and process_time() counts them against whichever side is running (1.4% of a perf profile).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

CRAWL = "CC-MAIN-2099-50"
#: CPU seconds inside the engine's calls, and inside its language detection and fingerprint.
SPENT: Counter[str] = Counter()


def timed(name: str, fn: Callable[..., Any], spent: Counter[str] = SPENT) -> Callable[..., Any]:
    """``fn``, adding the CPU seconds of each call to ``spent[name]`` (the stages bench passes its own)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start

    return run


def hook_engine(engine: str) -> None:
    """Time ``engine``'s ``extract`` and, inside it, language detection and simhash (the names it calls)."""
    from ccrawl.extract import engines

    cls = type(engines.get_extractor(engine))
    if not getattr(cls.extract, "_timed", False):
        cls.extract = timed("engine", cls.extract)  # type: ignore[method-assign]
        cls.extract._timed = True  # type: ignore[attr-defined]
    if not getattr(engines.detect_language, "_timed", False):
        engines.detect_language = timed("language", engines.detect_language)
        engines.detect_language._timed = True  # type: ignore[attr-defined]
        engines._simhash = timed("simhash", engines._simhash)


def build_shard(root: Path, corpus: Path, pages: int) -> int:
    from resiliparse.extract.html2text import extract_plain_text
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    urls = {v["file"]: u for u, v in json.loads((corpus / "evaldata.json").read_text()).items()}
    files = sorted((corpus / "pages").glob("*.html"))[:pages]
    warc, wet = io.BytesIO(), io.BytesIO()
    ww, tw = WARCWriter(warc, gzip=True), WARCWriter(wet, gzip=True)
    for f in files:
        body = f.read_bytes()
        url = urls.get(f.name, f"https://example.com/{f.stem}")
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                   protocol="HTTP/1.1")
        ww.write_record(ww.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers))
        text = extract_plain_text(body.decode("utf-8", "replace"), main_content=False)
        tw.write_record(tw.create_warc_record(url, "conversion", payload=io.BytesIO(text.encode()),
                                              warc_content_type="text/plain"))
    for kind, buf, rel in (("warc", warc, "w/warc/CC-MAIN-bench-00000.warc.gz"),
                           ("wet", wet, "w/wet/CC-MAIN-bench-00000.warc.wet.gz")):
        path = root / f"crawl-data/{CRAWL}/segments/{rel}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(buf.getvalue())
        (root / f"crawl-data/{CRAWL}/{kind}.paths.gz").write_bytes(
            gzip.compress(f"crawl-data/{CRAWL}/segments/{rel}\n".encode()))
    return len(files)


def payloads(root: Path) -> tuple[list[tuple[bytes, str, str | None]], list[tuple[bytes, str, str | None]]]:
    from ccrawl.warc.reader import decode_payload, iter_records

    warc = [(decode_payload(r), r.url or "", r.http_header("Content-Type"))
            for r in iter_records(next((root / f"crawl-data/{CRAWL}").rglob("*.warc.gz")))
            if r.warc_type == "response"]
    wet = [(r.payload, r.url or "", "text/plain; charset=utf-8")
           for r in iter_records(next((root / f"crawl-data/{CRAWL}").rglob("*.wet.gz"))) if r.warc_type == "conversion"]
    return warc, wet


def bare(engine: str, docs: list[tuple[bytes, str, str | None]]) -> float:
    from ccrawl.extract.engines import get_extractor
    from ccrawl.extract.model import NO_LINKS_BUDGET

    ex = get_extractor(engine)
    t = time.process_time()
    for body, url, ctype in docs:  # the export's own call: no links collected (it stores none)
        ex.extract(body, url, content_type=ctype, budget=NO_LINKS_BUDGET)
    return time.process_time() - t


def export(engine: str, out: Path, options: dict[str, Any]) -> tuple[float, float, float, dict[str, int]]:
    import shutil

    import pyarrow.parquet as pq

    from ccrawl.markdown.export import Exporter, ExportOptions

    shutil.rmtree(out, ignore_errors=True)
    opts = ExportOptions(out=out, crawl=CRAWL, shards="0", extractor=engine, push=False, workers=1,
                         client_options=options)
    t, cpu = time.perf_counter(), time.process_time()
    exporter = Exporter(opts)
    records = list(exporter.run())
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    events = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()]
    download = sum(e.get("download_seconds", 0.0) for e in events if e["event"] == "unit_written")
    path = out / records[0]["file"]
    table = pq.read_table(path, columns=["markdown_length"])
    return wall, cpu, download, {"rows": table.num_rows, "markdown_bytes": sum(table["markdown_length"].to_pylist()),
                  "parquet_bytes": path.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/html-eval"))
    ap.add_argument("--pages", type=int, default=1032)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default="h2m,readability,raw,wet")
    ap.add_argument("--out", type=Path, default=Path("/tmp/md-bench"))
    ap.add_argument("--inline-batch", type=int, default=0,
                    help="documents read ahead before converting in-process (default: the code's; 1 = one by one)")
    args = ap.parse_args()
    if args.inline_batch:
        from ccrawl.markdown import convert

        convert.INLINE_BATCH = args.inline_batch

    import subprocess
    import sys

    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

    root = args.out / "fakecc"
    FakeCCServer(root, SiteSpec(records=4, files=1))  # builds the bucket; served below from its own process
    n = build_shard(root, args.corpus, args.pages)
    # The server runs in a process of its own, as data.commoncrawl.org would: not in this one's GIL.
    server = subprocess.Popen([sys.executable, "-m", "ccrawl.testing.fakecc", "--root", str(root), "--records", "4",
                               "--files", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    options = {"collinfo_endpoint": f"{url}/collinfo.json", "data_endpoint": url, "cdx_endpoint": url,
               "s3_endpoint": url, "global_rate": 0}
    try:
        warc, wet = payloads(root)
        shard_mb = sum(p.stat().st_size for p in (root / f"crawl-data/{CRAWL}").rglob("*.warc.gz")) / 1e6
        print(f"shard: {n} pages, WARC {shard_mb:.1f} MB")
        results = []
        for engine in args.engines.split(","):
            docs = wet if engine == "wet" else warc
            hook_engine(engine)
            # One of each first, not counted: the first export imports the Parquet writer and warms the
            # server, a cost of the process rather than of a shard (it put the first pair 10% low).
            bare(engine, docs)
            export(engine, args.out / f"md-{engine}", options)
            bares, walls, cpus, downloads, stats = [], [], [], [], {}
            strict_bares, shares, strict_shares = [], [], []
            for _ in range(args.repeats):
                SPENT.clear()
                bares.append(bare(engine, docs))
                strict_bares.append(bares[-1] - SPENT["language"] - SPENT["simhash"])
                SPENT.clear()
                wall, cpu, download, stats = export(engine, args.out / f"md-{engine}", options)
                walls.append(wall)
                cpus.append(cpu)
                downloads.append(download)
                shares.append(SPENT["engine"] / cpu)
                strict_shares.append((SPENT["engine"] - SPENT["language"] - SPENT["simhash"]) / cpu)
            b, e, c, d = (statistics.median(x) for x in (bares, walls, cpus, downloads))
            # Per core: pages per CPU second of this process (the export's thread included), the same
            # clock for both, paired run by run; the median of the pairs' ratios is the figure.
            pairs = [bb / cc for bb, cc in zip(bares, cpus, strict=True)]
            strict_pairs = [bb / cc for bb, cc in zip(strict_bares, cpus, strict=True)]
            row = {"engine": engine, **stats, "export_s": round(e, 2), "download_s": round(d, 2),
                   "export_cpu_s": round(c, 2), "bare_cpu_s": round(b, 2),
                   "export_pages_cpu_s": round(stats["rows"] / c, 1), "bare_pages_cpu_s": round(len(docs) / b, 1),
                   "ratio": round(statistics.median(pairs), 3), "strict": round(statistics.median(strict_pairs), 3),
                   "share": round(statistics.median(shares), 3),
                   "strict_share": round(statistics.median(strict_shares), 3),
                   "export_cpu_runs": [round(x, 2) for x in cpus], "bare_cpu_runs": [round(x, 2) for x in bares],
                   "share_runs": [round(x, 3) for x in shares]}
            results.append(row)
            print(json.dumps(row))
        print("\n| engine | rows | Markdown bytes | Parquet bytes | time per shard (s) | of it download (s) "
              "| export pages per CPU s | bare pages per CPU s | export / bare | engine alone "
              "| in-run share | engine alone in-run |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in results:
            print(f"| {r['engine']} | {r['rows']} | {r['markdown_bytes']:,} | {r['parquet_bytes']:,} | {r['export_s']} "
                  f"| {r['download_s']} | {r['export_pages_cpu_s']} | {r['bare_pages_cpu_s']} | {r['ratio']} "
                  f"| {r['strict']} | {r['share']} | {r['strict_share']} |")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
