"""The Markdown dataset operations: ``markdown.export``, ``markdown.refetch``, ``dedup`` and ``convert``.

Each is a thin wrapper over :mod:`ccrawl.markdown` and :mod:`ccrawl.datasets.dedup`, so ``serve`` and
``mcp`` reach the same code the CLI does. Heavy imports happen inside the functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, ReadPath, Value, WritePath
from ccrawl.ops.context import OpContext, after_stream, context

if TYPE_CHECKING:
    from ccrawl.commoncrawl.records import Location
    from ccrawl.markdown.export import ExportOptions

EXPORT_COLUMNS = ("unit", "crawl", "file", "rows", "bytes", "action", "commit")


@operation("markdown.export", summary="Convert Common Crawl's captured HTML to Markdown Parquet shards",
           columns=EXPORT_COLUMNS, writes=True)
def markdown_export(
    out: WritePath[str],
    crawl: Value[str] = "latest",
    shards: Value[str] = "",
    source_kind: Value[str] = "",
    extractor: Value[str] = "h2m",
    lang: Value[str] = "",
    min_lang_confidence: Annotated[float, Cap.VALUE, Bounds(0, 1)] = 0.8,
    dedup_digest: Value[bool] = False,
    locations: Value[Iterable[Mapping[str, object]] | None] = None,
    part_size: Limit[int] = 50_000,
    gap: Limit[int] = 1 << 20,
    max_span: Limit[int] = 16 << 20,
    parallel: Limit[int] = 1,
    workers: Limit[int] = 1,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    push: Value[bool] = False,
    repo: Endpoint[str] = "",
    commit_batch: Limit[int] = 10,
    keep_parquet: Value[bool] = False,
    min_free_gb: Limit[float] = 0.0,
    ledger: WritePath[str] = "",
    skip_errors: Value[bool] = False,
    endpoint: Endpoint[str] = "",
    journal: WritePath[str] = "",
    executor: Limit[str] = "local",
    ray_address: Endpoint[str] = "",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record per file written or committed; warnings to the context's notice, progress and summary lines
    to its ``info`` (:meth:`OpContext.report`). Exit 3 when a location stream held none, 1 when every unit
    failed."""
    from ccrawl.markdown.export import Exporter, open_export_repo

    c = context(ctx)
    opts = _export_options(c, out=out, crawl=crawl, shards=shards, source_kind=source_kind, extractor=extractor,
                           lang=lang, min_lang_confidence=min_lang_confidence, dedup_digest=dedup_digest,
                           locations=_locations(locations) if locations is not None else None, part_size=part_size,
                           gap=gap, max_span=max_span, parallel=parallel, workers=workers, limit=limit, push=push,
                           repo=repo, commit_batch=commit_batch, keep_parquet=keep_parquet, min_free_gb=min_free_gb,
                           ledger=ledger, skip_errors=skip_errors, journal=journal, executor=executor,
                           ray_address=ray_address)
    opts.validate()
    exporter = Exporter(opts, open_export_repo(repo, endpoint=endpoint) if push else None, log=c.notice,
                        info=c.report)
    try:
        yield from exporter.run()
    finally:
        for line in exporter.closing_lines():
            c.report(line)
    s = exporter.stats
    if locations is not None and not s.units:
        from ccrawl.errors import NothingMatched

        raise after_stream(NothingMatched("markdown export: the location stream held no locations"))
    if s.failed and not s.written and not s.already:
        from ccrawl.errors import CcrawlError

        raise after_stream(CcrawlError(f"markdown export: every one of {s.failed} unit(s) failed"))


@operation("markdown.refetch", summary="Re-fetch every URL of a crawl's shards live, then convert to Markdown "
           "Parquet", columns=EXPORT_COLUMNS, writes=True)
def markdown_refetch(
    out: WritePath[str],
    shards: Value[str],
    crawl: Value[str] = "latest",
    extractor: Value[str] = "h2m",
    lang: Value[str] = "",
    min_lang_confidence: Annotated[float, Cap.VALUE, Bounds(0, 1)] = 0.8,
    fetch_workers: Limit[int] = 64,
    fetch_only: Value[bool] = False,
    delay: Limit[float] = 1.0,
    timeout: Limit[float] = 30.0,
    max_redirects: Limit[int] = 5,
    warc_cache_dir: WritePath[str] = "",
    no_warc_cache: Value[bool] = False,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    push: Value[bool] = False,
    repo: Endpoint[str] = "",
    commit_batch: Limit[int] = 10,
    keep_parquet: Value[bool] = False,
    ledger: WritePath[str] = "",
    skip_errors: Value[bool] = False,
    endpoint: Endpoint[str] = "",
    journal: WritePath[str] = "",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record per file written or committed (as ``markdown.export``), the pages fetched live through the
    recrawl engine; its phase, language and summary lines go to the context's ``info``."""
    from ccrawl.markdown.export import open_export_repo
    from ccrawl.markdown.refetch import Refetcher, RefetchOptions

    c = context(ctx)
    opts = _export_options(c, out=out, crawl=crawl, shards=shards, source_kind="warc", extractor=extractor,
                           lang=lang, min_lang_confidence=min_lang_confidence, limit=limit, push=push, repo=repo,
                           commit_batch=commit_batch, keep_parquet=keep_parquet, ledger=ledger,
                           skip_errors=skip_errors, journal=journal)
    more = RefetchOptions(fetch_workers=fetch_workers, fetch_only=fetch_only, delay=delay, timeout=timeout,
                          max_redirects=max_redirects, warc_cache_dir=Path(warc_cache_dir) if warc_cache_dir else None,
                          no_warc_cache=no_warc_cache)
    more.validate(opts)
    opts.validate()
    refetcher = Refetcher(opts, more, open_export_repo(repo, endpoint=endpoint) if push else None, log=c.notice,
                          info=c.report)
    try:
        yield from refetcher.run()
    finally:
        for line in refetcher.closing_lines():
            c.report(line)


def _locations(items: Iterable[Mapping[str, object] | Location]) -> Iterator[Location]:
    """Locations as they are read (a stream is not held whole): parsed ones pass, mappings are parsed."""
    from ccrawl.commoncrawl.records import Location, location_from

    for i, obj in enumerate(items):
        yield obj if isinstance(obj, Location) else location_from(obj, where=f"location {i}")


def _export_options(c: OpContext, *, out: str, ledger: str, journal: str, **given: Any) -> ExportOptions:
    """The one place an :class:`~ccrawl.markdown.export.ExportOptions` is built (export and refetch)."""
    from ccrawl.markdown.export import ExportOptions

    return ExportOptions(out=Path(out), ledger=Path(ledger) if ledger else None,
                         journal=Path(journal) if journal else None, command_line=c.command_line,
                         client_options=c.client_kwargs(), **given)


@operation("dedup", summary="Exact and near duplicate documents in a Markdown Parquet dataset",
           columns=("rows", "files", "distance", "exact", "near", "redundant", "no_fingerprint"))
def dedup(
    paths: ReadPath[Sequence[str]],
    distance: Annotated[int, Cap.VALUE, Bounds(0, 64)] = 3,
    top: Annotated[int, Cap.VALUE, Bounds(0, 10**7)] = 10,
) -> Iterator[Record]:
    """The report as one record."""
    from ccrawl.datasets.dedup import dedup_report

    yield dedup_report(list(paths), distance=distance, top=top).as_dict()


@operation("convert", summary="WARC/WAT/WET archives to Parquet or JSONL, one row per record",
           columns=("source", "output", "rows", "bytes", "sha256", "library"), writes=True)
def convert(source: ReadPath[str], to: Value[str] = "parquet", out: WritePath[str] = "", markdown: Value[bool] = False,
            skip_bad_records: Value[bool] = False, library: WritePath[str | None] = None,
            ctx: Injected[OpContext | None] = None) -> Iterator[Record]:
    """One record per archive converted; with ``library`` (a library root) the files go beside the raw ones in
    its layout and are recorded in it (``library`` then names each one's library path); a line per archive to
    the context's ``info``."""
    from ccrawl.markdown.convert_files import convert_file, inputs_of, plan_outputs, record_in_library

    lib = Path(library).expanduser() if library else None
    if lib is not None and out:
        from ccrawl.errors import UsageError

        raise UsageError("--library writes beside the raw files in the library layout: leave out -O")
    for src, dest, lib_path in plan_outputs(inputs_of(Path(source)), fmt=to, out=Path(out) if out else None,
                                            library=lib):
        done = convert_file(src, dest, fmt=to, markdown=markdown, skip_bad_records=skip_bad_records)
        done.library_path = lib_path
        if lib is not None:
            record_in_library(lib, done)
        context(ctx).report(f"convert: {src.name}: {done.rows} records -> {dest}")
        yield {"source": str(src), "output": str(dest), "rows": done.rows, "bytes": done.bytes, "sha256": done.sha256,
               "library": lib_path}

