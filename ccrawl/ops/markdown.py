"""The Markdown dataset operations: ``markdown.export``, ``dedup`` and ``convert`` (library side of the CLI).

Each is a thin wrapper over :mod:`ccrawl.markdown` and :mod:`ccrawl.datasets.dedup`, so ``serve`` and
``mcp`` reach the same code the CLI does. Heavy imports happen inside the functions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, ReadPath, Value, WritePath

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
    locations: Value[Sequence[dict[str, Any]] | None] = None,
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
    client_options: Injected[dict[str, Any] | None] = None,
    executor: Limit[str] = "local",
    ray_address: Endpoint[str] = "",
) -> Iterator[dict[str, Any]]:
    """One record per file written or committed; progress and the summary go to ``ccrawl.markdown``."""
    from ccrawl.commoncrawl.records import location_from
    from ccrawl.markdown.export import Exporter, ExportOptions, open_export_repo

    locs = None
    if locations is not None:
        locs = [location_from(obj, where=f"location {i}") for i, obj in enumerate(locations)]
    opts = ExportOptions(
        out=Path(out), crawl=crawl, shards=shards, source_kind=source_kind, extractor=extractor, lang=lang,
        min_lang_confidence=min_lang_confidence, dedup_digest=dedup_digest, locations=locs, part_size=part_size,
        gap=gap, max_span=max_span, parallel=parallel, workers=workers, limit=limit, push=push, repo=repo,
        commit_batch=commit_batch, keep_parquet=keep_parquet, min_free_gb=min_free_gb,
        ledger=Path(ledger) if ledger else None, skip_errors=skip_errors, client_options=client_options or {},
        executor=executor, ray_address=ray_address,
    )
    opts.validate()
    logger = logging.getLogger("ccrawl.markdown")
    exporter = Exporter(opts, open_export_repo(repo, endpoint=endpoint) if push else None, log=logger.warning)
    yield from exporter.run()
    for line in exporter.language_lines():
        logger.info(line)
    logger.info(exporter.summary_line())


@operation("dedup", summary="Exact and near duplicate documents in a Markdown Parquet dataset",
           columns=("rows", "files", "distance", "exact", "near", "redundant", "no_fingerprint"))
def dedup(
    paths: ReadPath[Sequence[str]],
    distance: Annotated[int, Cap.VALUE, Bounds(0, 64)] = 3,
    top: Annotated[int, Cap.VALUE, Bounds(0, 10**7)] = 10,
) -> Iterator[dict[str, Any]]:
    """The report as one record."""
    from ccrawl.datasets.dedup import dedup_report

    yield dedup_report(list(paths), distance=distance, top=top).as_dict()


@operation("convert", summary="WARC/WAT/WET archives to Parquet or JSONL, one row per record",
           columns=("source", "output", "rows", "bytes", "sha256"), writes=True)
def convert(source: ReadPath[str], to: Value[str] = "parquet", out: WritePath[str] = "", markdown: Value[bool] = False,
            skip_bad_records: Value[bool] = False) -> Iterator[dict[str, Any]]:
    """One record per archive converted."""
    from ccrawl.markdown.convert_files import convert_file, inputs_of, plan_outputs

    for src, dest, _ in plan_outputs(inputs_of(Path(source)), fmt=to, out=Path(out) if out else None, library=None):
        done = convert_file(src, dest, fmt=to, markdown=markdown, skip_bad_records=skip_bad_records)
        yield {"source": str(src), "output": str(dest), "rows": done.rows, "bytes": done.bytes, "sha256": done.sha256}
