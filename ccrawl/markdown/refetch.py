"""``markdown refetch``: every URL of a Common Crawl shard fetched live by the recrawl engine, then kept.

A unit is a shard of the crawl's ``warc.paths.gz``, as for ``markdown export``, and everything around
the build is the exporter's (ledger, commits, journal, lock, ``--lang``): only the build differs.

1. **URLs.** The shard's WARC file is downloaded to ``warc_cache_dir`` (default
   ``<out>/.warc-cache``; kept for the next run unless ``no_warc_cache``) and the target URI of every
   ``response`` record is taken, first capture of each URL, in file order (``limit`` caps the count).
2. **Fetch.** The URLs become a one-part work list under ``<out>/.refetch/<unit>/`` and
   :func:`ccrawl.recrawl.run_recrawl` (the engine's public entry point) fetches them: its politeness
   (``delay`` between two requests to one host, per-host queues), its process layout (fetch and
   extract processes, ``fetch_workers`` requests in flight), its capture columns, and its extraction
   with the chosen engine (none with ``fetch_only``). A failed fetch is a row with ``status`` 0 and the
   class in ``error``, like every recrawl row.
3. **Convert.** The capture shards are read back and written as one file per unit,
   ``data/crawl=<id>/NNNNNN.parquet``, in the refetch schema: ``doc_id`` and ``crawl_date`` of the
   Common Crawl capture the URL came from, then every capture column but ``body`` (the HTML stays out
   of a Markdown dataset; the recrawl's own output has it). ``--lang`` filters fetched pages; failed
   fetches are kept, since they are the record of what was tried.

The run prints ``phase totals`` (download, fetch, convert and commit seconds) and ``failures`` (rows
by error class) before the summary line.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl.errors import UsageError
from ccrawl.hub.repo import DatasetRepo
from ccrawl.jsontypes import Record
from ccrawl.markdown.convert import Converter
from ccrawl.markdown.export import Built, BuiltFile, Exporter, ExportOptions, passes_lang
from ccrawl.markdown.sources import ReadStats
from ccrawl.markdown.units import Unit

if TYPE_CHECKING:
    import pyarrow as pa

WARC_ENGINES = ("h2m", "readability", "raw")


@dataclass(slots=True)
class RefetchOptions:
    """What ``markdown refetch`` adds to the export's options."""

    fetch_workers: int = 64
    fetch_only: bool = False
    delay: float = 1.0
    timeout: float = 30.0
    max_redirects: int = 5
    """Redirect hops followed per URL; a longer chain is a failed row (``error`` other, ``meta_json`` says why)."""
    warc_cache_dir: Path | None = None
    no_warc_cache: bool = False
    resolve: Mapping[str, str] = field(default_factory=dict)
    """Resolver override for the fetch processes (tests point their host names at loopback)."""

    def validate(self, export: ExportOptions) -> None:
        if export.extractor not in WARC_ENGINES:
            raise UsageError(f"Extractor {export.extractor} reads {'wet' if export.extractor == 'wet' else 'other'} "
                             "shards; markdown refetch fetches live HTML, so use h2m, readability or raw.")
        if export.locations is not None:
            raise UsageError("markdown refetch works on --shards; --locations is an export flag")
        if export.lang and self.fetch_only:
            raise UsageError("--lang cannot be combined with markdown refetch --fetch-only, since fetch-only never "
                             "produces the Markdown the identifier reads")
        if self.fetch_workers < 1:
            raise UsageError(f"--fetch-workers must be at least 1, got {self.fetch_workers}")
        if self.delay < 0 or self.timeout <= 0:
            raise UsageError("--rate must be 0 or more and --timeout more than 0")
        if self.max_redirects < 0:
            raise UsageError(f"--max-redirects must be 0 or more, got {self.max_redirects}")


@dataclass(slots=True)
class Phases:
    """Seconds spent in each phase, summed over units."""

    download: float = 0.0
    fetch: float = 0.0
    convert: float = 0.0
    commit: float = 0.0


class Refetcher(Exporter):
    """``markdown export``'s run with a live fetch as the build."""

    command = "markdown refetch"

    def __init__(self, opts: ExportOptions, refetch: RefetchOptions, repo: DatasetRepo | None = None, *,
                 log: Callable[[str], None] | None = None, info: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        opts.source_kind = "warc"
        refetch.validate(opts)
        super().__init__(opts, repo, log=log, info=info, sleep=sleep)
        self.refetch = refetch
        self.phases = Phases()
        self.failures: Counter[str] = Counter()
        self.fetched = 0

    def _cached_shard(self, unit: Unit) -> Path:
        from ccrawl.commoncrawl.download import download_one
        from ccrawl.net.client import CCClient, ClientOptions

        cache = self.refetch.warc_cache_dir or (self.opts.out / ".warc-cache")
        # Only the file name from the manifest: a path with '..' in it must not escape the cache.
        dest = cache / unit.crawl / unit.path.rsplit("/", 1)[-1]
        if dest.exists():
            return dest

        async def fetch() -> None:
            async with CCClient.of(ClientOptions.parse(self.opts.client_options)) as cc:
                await download_one(cc, unit.path, dest)

        import asyncio

        asyncio.run(fetch())
        return dest

    def _sources(self, path: Path, read: ReadStats) -> dict[str, tuple[str, int | None]]:
        """URL -> (doc_id, crawl_date ms) of the first response record for it in the shard."""
        from ccrawl.markdown.convert import doc_id_of, epoch_ms
        from ccrawl.warc.reader import iter_records

        out: dict[str, tuple[str, int | None]] = {}
        for rec in iter_records(path, parse_http=False, skip_bad_records=self.opts.skip_errors):
            if rec.warc_type != "response" or not rec.url:
                continue
            read.records += 1
            if rec.url in out:
                read.duplicates += 1
                continue
            out[rec.url] = (doc_id_of(rec.record_id or ""), epoch_ms(rec.date or ""))
            if self.opts.limit and len(out) >= self.opts.limit:
                break
        return out

    def _build(self, unit: Unit, converter: Converter) -> Built:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ccrawl.markdown.schema import write_parquet
        from ccrawl.recrawl import run_recrawl

        started = time.perf_counter()
        read = ReadStats()
        t = time.perf_counter()
        shard = self._cached_shard(unit)
        read.download_seconds = time.perf_counter() - t
        self.phases.download += read.download_seconds
        sources = self._sources(shard, read)
        if self.refetch.no_warc_cache:
            shard.unlink(missing_ok=True)
        work = self.opts.out / ".refetch" / f"{unit.index:06d}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "urls").mkdir(parents=True)
        pq.write_table(pa.table({"url": list(sources)}), work / "urls" / "part-000000.parquet")
        t = time.perf_counter()
        run_recrawl(str(work / "urls"), column="url", out=str(work / "captures"), state=str(work / "state.json"),
                    workers=self.refetch.fetch_workers, delay=self.refetch.delay, timeout=self.refetch.timeout,
                    max_redirects=self.refetch.max_redirects, extractor=self.opts.extractor,
                    no_extract=self.refetch.fetch_only,
                    resolve=dict(self.refetch.resolve), progress="none", handle_signals=False,
                    command_line=self.opts.command_line)
        self.phases.fetch += time.perf_counter() - t
        t = time.perf_counter()
        files = sorted((work / "captures").glob("*.parquet"))
        table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="default") if files else None
        rows: list[Record] = []
        detected: Counter[str] = Counter()
        kept = dropped = 0
        for row in table.drop_columns([c for c in ("body",) if c in table.column_names]).to_pylist() if table else []:
            doc_id, date = sources.get(row["url"], ("", None))
            row = {"doc_id": doc_id, "crawl_date": date, **row}
            self.fetched += 1
            if row.get("error"):
                self.failures[str(row["error"])] += 1
            elif row.get("extractor"):
                detected[row.get("language") or "unknown"] += 1
                found = _Detected(row.get("language") or "", float(row.get("language_confidence") or 0.0))
                if self.opts.lang and not passes_lang(found, self.opts.lang, self.opts.min_lang_confidence):
                    dropped += 1
                    continue
            kept += 1
            rows.append(row)
        read.documents = len(sources)
        repo_path = unit.repo_path(unit.crawl)
        local = self.opts.out / repo_path
        schema = _refetch_schema(table.schema if table is not None else None)
        size = write_parquet(pa.Table.from_pylist(rows, schema=schema), local, self._provenance(unit, unit.crawl))
        self.phases.convert += time.perf_counter() - t
        shutil.rmtree(work, ignore_errors=True)
        return Built(unit, [BuiltFile(repo_path, local, unit.crawl, len(rows), size)], read, detected, kept, dropped,
                     0, time.perf_counter() - started)

    def _flush(self, batch: list[Built]) -> Iterator[Record]:
        t = time.perf_counter()
        yield from super()._flush(batch)
        self.phases.commit += time.perf_counter() - t

    def phase_lines(self) -> list[str]:
        p = self.phases
        lines = [f"phase totals: download {p.download:.1f}s, fetch {p.fetch:.1f}s, convert {p.convert:.1f}s, "
                 f"commit {p.commit:.1f}s; {self.fetched} URLs fetched"]
        if self.failures:
            mix = " ".join(f"{k}={n}" for k, n in self.failures.most_common())
            lines.append(f"failures: {sum(self.failures.values())} of {self.fetched} fetches ({mix})")
        else:
            lines.append(f"failures: 0 of {self.fetched} fetches")
        return lines

    def summary_line(self) -> str:
        return super().summary_line().replace("markdown export:", "markdown refetch:", 1)

    def closing_lines(self) -> list[str]:
        """The phase totals and failures, then an export's closing lines."""
        return [*self.phase_lines(), *super().closing_lines()]


@dataclass(frozen=True, slots=True)
class _Detected:
    """A fetched row's language, as the language filter reads it."""

    language: str
    language_confidence: float


def _refetch_schema(capture: pa.Schema | None) -> pa.Schema:
    """``doc_id`` and ``crawl_date`` of the source capture, then the capture columns without ``body``."""
    import pyarrow as pa

    fields = [pa.field("doc_id", pa.string()), pa.field("crawl_date", pa.timestamp("ms", tz="UTC"))]
    if capture is not None:
        fields += [f for f in capture if f.name != "body"]
    return pa.schema(fields)
