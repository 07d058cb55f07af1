"""The ``recrawl.run`` operation: one recrawl run, yielding its summary as one record.

A thin wrapper over :func:`ccrawl.recrawl.run_recrawl`; every parameter is a keyword of the
library call (and a flag of ``ccrawl recrawl run``). It writes files, so ``serve`` hides it
unless started with ``--allow-writes``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ccrawl.ops import operation

SUMMARY_COLUMNS = ("fetched", "ok", "failed", "not_modified", "bytes", "files", "part", "row", "done",
                   "stopped_by", "pages_per_s", "elapsed_s")


@operation("recrawl.run", summary="Walk a published work list and fetch every URL in it, resumable",
           columns=SUMMARY_COLUMNS, writes=True)
def recrawl_run(
    source: str,
    release: str | None = None,
    column: str | None = None,
    out: str | None = None,
    format: str = "parquet",
    state: str | None = None,
    delay: float = 1.0,
    max_pages: int = 0,
    robots: bool = False,
    no_extract: bool = False,
    extractor: str = "h2m",
    extractors: int | None = None,
    shard_size: int = 512 * 1024 * 1024,
    prefix: str = "ccrawl",
    writers: int = 1,
    batch: int = 2000,
    queue_mb: float = 128.0,
    shard: int = 0,
    shards: int = 1,
    workers: int = 256,
    fetchers: int | None = None,
    dns_lookups: int | None = None,
    robots_timeout: float = 10.0,
    timeout: float = 30.0,
    previous: str | None = None,
    progress: str = "none",
    journal: str | None = None,
    metrics_addr: str | None = None,
    profile_dir: str | None = None,
    profile_name: str = "recrawl",
    **extra: Any,
) -> Iterator[dict[str, Any]]:
    from ccrawl.recrawl import run_recrawl

    summary = run_recrawl(
        source, release=release, column=column, out=out, format=format, state=state, delay=delay,
        max_pages=max_pages, robots=robots, no_extract=no_extract, extractor=extractor, extractors=extractors,
        shard_size=shard_size, prefix=prefix, writers=writers, batch=batch, queue_mb=queue_mb, shard=shard,
        shards=shards, workers=workers, fetchers=fetchers, dns_lookups=dns_lookups, robots_timeout=robots_timeout,
        timeout=timeout, previous=previous, progress=progress, journal=journal, metrics_addr=metrics_addr,
        profile_dir=profile_dir, profile_name=profile_name, **extra,
    )
    yield summary.as_dict()
