"""Where ``markdown export``'s CPU goes beyond the engine: per-stage costs, the WARC read against fastwarc, the table.

    python bench/bench_markdown_stages.py --pages 1032 --runs 6 --out /tmp/md-stages

Builds the same shard as ``bench_markdown.py`` (the corpus's real pages, served by the fake Common
Crawl from its own process), then, in this process:

* **stages**: ``runs`` h2m exports after one warm-up, with ``time.process_time`` hooks around the
  download, the WARC read (``file_docs``), the engine (``extract``), ``convert_doc``, the table and the
  Parquet write; one line per run;
* **read**: the shard's responses read into a list by ccrawl's reader, by the same reader without its
  whole-member fast path (``ccrawl-streaming``: every member through the streaming inflater) and by
  fastwarc 2 (``ArchiveIterator(parse_http=True)``, ``reader.read()``), alternating, min and median;
* **table**: one shard's rows to Arrow by ``columns_to_table`` (buffers) and by ``Table.from_pydict``
  (which imports pandas on its first call), alternating, after checking both give the same Parquet bytes.
"""

from __future__ import annotations

import argparse
import functools
import io
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_markdown as bm

SPENT: Counter[str] = Counter()


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    return bm.timed(name, fn, SPENT)


def _timed_iter(name: str, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Iterator[Any]:
        it = fn(*args, **kwargs)
        while True:
            start = time.process_time()
            try:
                value = next(it)
            except StopIteration:
                SPENT[name] += time.process_time() - start
                return
            SPENT[name] += time.process_time() - start
            yield value

    return run


def _hook_stages() -> None:
    from ccrawl.extract import engines
    from ccrawl.markdown import convert, export, schema

    export.Exporter._download = _timed("download", export.Exporter._download)  # type: ignore[method-assign]
    export.file_docs = _timed_iter("read", export.file_docs)
    schema.columns_to_table = _timed("table", schema.columns_to_table)
    schema.write_parquet = _timed("parquet", schema.write_parquet)
    convert.convert_doc = _timed("convert_doc", convert.convert_doc)
    engine = type(engines.get_extractor("h2m"))
    engine.extract = _timed("extract", engine.extract)  # type: ignore[method-assign]


def stages(root: Path, out: Path, options: dict[str, Any], runs: int) -> None:
    _hook_stages()
    bm.export("h2m", out, options)  # warm-up: imports
    for i in range(runs):
        SPENT.clear()
        _, cpu, _, _ = bm.export("h2m", out, options)
        known = sum(v for k, v in SPENT.items() if k != "extract")
        parts = " ".join(f"{k} {v:.3f}" for k, v in sorted(SPENT.items()))
        outside = SPENT["convert_doc"] - SPENT["extract"]
        print(f"stages run {i}: cpu {cpu:.3f} {parts} convert_doc-extract {outside:.3f} "
              f"beyond-engine {cpu - SPENT['extract']:.3f} rest {cpu - known:.3f}", flush=True)


def read(warc: Path, rounds: int) -> None:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from ccrawl.markdown.sources import ReadStats, file_docs

    def ours() -> list[Any]:
        return list(file_docs(warc, kind="warc", dedup_digest=False, stats=ReadStats(), skip_errors=False,
                              warn=print))

    def streaming() -> list[Any]:  # the reader without its whole-member fast path (libdeflate)
        from ccrawl.warc import source

        fast = source.native_inflater
        source.native_inflater = lambda *a, **k: None
        try:
            return ours()
        finally:
            source.native_inflater = fast

    def fastwarc() -> list[Any]:
        with open(warc, "rb") as fh:
            return [(r.headers.get("WARC-Target-URI"), r.reader.read())
                    for r in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True)]

    _alternate("read", {"ccrawl": ours, "ccrawl-streaming": streaming, "fastwarc": fastwarc}, rounds)


def table(warc: Path, rounds: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.markdown import schema
    from ccrawl.markdown.convert import SourceDoc, convert_doc
    from ccrawl.warc.reader import decode_payload, iter_records

    docs = [convert_doc("h2m", SourceDoc(r.url or "", r.date or "", r.record_id or "", decode_payload(r),
                                         r.http_header("Content-Type")))
            for r in iter_records(warc) if r.warc_type == "response"]

    def buffers() -> Any:
        return schema.columns_to_table({n: [getattr(d, n) for d in docs] for n in schema.COLUMN_NAMES})

    def from_pydict() -> Any:
        return pa.Table.from_pydict({n: [getattr(d, n) for d in docs] for n in schema.COLUMN_NAMES},
                                    schema=schema.arrow_schema())

    def parquet(t: Any) -> bytes:
        sink = io.BytesIO()
        pq.write_table(t, sink, compression="zstd", row_group_size=schema.ROW_GROUP_ROWS)
        return sink.getvalue()

    ours = buffers()
    before = "pandas" in sys.modules
    start = time.process_time()
    theirs = from_pydict()
    print(f"table: first from_pydict {time.process_time() - start:.3f} s (pandas loaded before: {before}, "
          f"after: {'pandas' in sys.modules})")
    assert ours.equals(theirs) and parquet(ours) == parquet(theirs)
    _alternate("table", {"columns_to_table": buffers, "from_pydict": from_pydict}, rounds)


def _alternate(what: str, fns: dict[str, Callable[[], Any]], rounds: int) -> None:
    spent: dict[str, list[float]] = {name: [] for name in fns}
    for i in range(rounds):
        order = list(fns) if i % 2 == 0 else list(reversed(fns))
        for name in order:
            start = time.process_time()
            fns[name]()
            spent[name].append(time.process_time() - start)
    for name, values in spent.items():
        print(f"{what}: {name} min {min(values):.4f} median {statistics.median(values):.4f} s ({rounds} rounds)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/html-eval"))
    ap.add_argument("--pages", type=int, default=1032)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--out", type=Path, default=Path("/tmp/md-stages"))
    args = ap.parse_args()

    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

    root = args.out / "fakecc"
    FakeCCServer(root, SiteSpec(records=4, files=1))
    bm.build_shard(root, args.corpus, args.pages)
    warc = next((root / f"crawl-data/{bm.CRAWL}").rglob("*.warc.gz"))
    table(warc, 3 * args.runs)
    read(warc, args.runs)
    server = subprocess.Popen([sys.executable, "-m", "ccrawl.testing.fakecc", "--root", str(root), "--records", "4",
                               "--files", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    options = {"collinfo_endpoint": f"{url}/collinfo.json", "data_endpoint": url, "cdx_endpoint": url,
               "s3_endpoint": url, "global_rate": 0}
    try:
        stages(root, args.out / "md-h2m", options, args.runs)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
