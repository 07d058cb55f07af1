"""CC-NEWS operations: list, download, search (index or scan) and publish (build the index).

Same conventions as :mod:`ccrawl.ops.commoncrawl`: limits are keywords, ``ctx`` is the front end's
:class:`~ccrawl.ops.context.OpContext` (the client's options, where notices go). ``hub`` picks where
the index repo lives: ``""`` for ``$CCRAWL_HUB`` or else the HuggingFace Hub (``endpoint``), ``"hf"`` for
the Hub explicitly, or a directory for a local hub.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

from ccrawl.commoncrawl.news.monthpaths import month_paths
from ccrawl.jsontypes import Record
from ccrawl.rowbatch import rows_of

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.datasets.publish_news import NewsPublishStats
    from ccrawl.hub.repo import DatasetRepo, HubFile
from ccrawl.ops import batch_operation, operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, Value, WritePath
from ccrawl.ops.context import OpContext, context

LIST_COLUMNS = ("month", "path")
DOWNLOAD_COLUMNS = ("path", "file", "status", "bytes", "sha256")
SEARCH_COLUMNS = ("urlkey", "timestamp", "url", "mime", "mime-detected", "status", "digest", "length", "offset",
                  "filename", "charset", "languages", "redirect")
PUBLISH_COLUMNS = ("month", "file", "source", "rows", "articles", "bytes_read", "action", "commit")


@operation("news.list", summary="CC-NEWS archives of a month, from its warc.paths.gz", columns=LIST_COLUMNS)
def news_list(
    year: Annotated[int, Cap.VALUE, Bounds(1990, 2200)],
    month: Annotated[int, Cap.VALUE, Bounds(1, 12)],
    files: Annotated[int, Cap.VALUE, Bounds(0, 10**6)] = 0,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.news.months import Month

    paths = month_paths(year, month, ctx)
    for p in paths[:files] if files else paths:
        yield {"month": str(Month(year, month)), "path": p}


@operation("news.download", summary="Download CC-NEWS archives of a month (resumable)", columns=DOWNLOAD_COLUMNS,
           writes=True)
def news_download(
    year: Annotated[int, Cap.VALUE, Bounds(1990, 2200)],
    month: Annotated[int, Cap.VALUE, Bounds(1, 12)],
    out: WritePath[str] = ".",
    files: Annotated[int, Cap.VALUE, Bounds(0, 10**6)] = 0,
    flat: Value[bool] = False,
    workers: Limit[int] = 4,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.download import download_all
    from ccrawl.errors import CcrawlError, NothingMatched
    from ccrawl.net.client import iterate

    paths = month_paths(year, month, ctx)
    if files:
        paths = paths[:files]
    if not paths:
        raise NothingMatched(f"CC-NEWS {year:04d}/{month:02d} lists no archives")
    ok = failed = 0
    for row in iterate(lambda cc: download_all(cc, paths, out_dir=out, flat=flat, workers=workers),
                       context(ctx).client, warn=context(ctx).notice):
        if str(row["status"]).startswith("failed"):
            failed += 1
            context(ctx).notice(f"news download: {row['path']}: {row['status']}")
        else:
            ok += 1
        yield row
    if ok == 0 and failed:
        raise CcrawlError(f"every archive failed ({failed}); see the lines above")


def _open_read_repo(repo: str, hub: str, endpoint: str) -> DatasetRepo:
    import os

    from ccrawl.hub.factory import open_repo
    from ccrawl.hub.repo import HUB_ENV

    where = hub or os.environ.get(HUB_ENV, "") or "hf"
    return open_repo(repo, hub=where, endpoint=endpoint or None)


#: the declared fields of ``news.search``'s record batches: CDX fields, all text
SEARCH_FIELDS = tuple((name, "string") for name in SEARCH_COLUMNS)


@batch_operation("news.search", summary="A host's CC-NEWS articles in a month, from the index or by scanning",
                 columns=SEARCH_COLUMNS)
def news_search_batches(
    host: Value[str],
    year: Annotated[int, Cap.VALUE, Bounds(1990, 2200)],
    month: Annotated[int, Cap.VALUE, Bounds(1, 12)],
    repo: Endpoint[str] = "open-index/ccrawl-news",
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    no_index: Value[bool] = False,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    workers: Limit[int] = 0,
    ctx: Injected[OpContext | None] = None,
    report: Injected[Any] = None,
) -> Iterator[pa.RecordBatch]:
    """CDX rows as record batches of :data:`SEARCH_FIELDS` (a shard's matches from the index, chunks of the
    scan's); says on ``notice`` which path it took and what it could not search."""
    import os

    from ccrawl.commoncrawl.news.months import check_month
    from ccrawl.commoncrawl.news.search import SearchReport, normalize_host, scan_archives, search_index_batches
    from ccrawl.errors import CcrawlError
    from ccrawl.hub.repo import HubError
    from ccrawl.net.client import iterate
    from ccrawl.rowbatch import chunked

    say = context(ctx).notice
    query = normalize_host(host)
    m = check_month(year, month)
    workers = workers or max(2, min(8, (os.cpu_count() or 1) * 2))
    rep = report if report is not None else SearchReport()
    paths = month_paths(year, month, ctx)
    rep.manifest_files = len(paths)
    files: list[HubFile] = []
    target = None
    if not no_index:
        try:
            target = _open_read_repo(repo, hub, endpoint)
            files = [f for f in target.list_files(m.data_dir) if f.path.endswith(".parquet")]
        except (HubError, CcrawlError) as exc:
            say(f"news search: cannot read the index {repo} ({exc}); scanning the archives instead")
            files = []
    if files and target is not None:
        published = {f.path.rsplit("/", 1)[1][: -len(".parquet")] for f in files}
        from ccrawl.commoncrawl.news.months import source_name

        rep.missing = [p for p in paths if source_name(p) not in published]
        say(f"news search: reading the index {repo} for {m}: {len(files)} shard(s) "
            f"of {len(paths)} archive(s) in the month")
        if rep.missing:
            say(f"news search: {m} is partly indexed: {len(rep.missing)} of {len(paths)} archive(s) are not "
                "published yet and were not searched; the answer covers the published part only "
                "(--no-index scans them all)")
        yield from search_index_batches(target, m, query, files=files, limit=limit, workers=workers, report=rep)
        for bad in rep.unreadable:
            say(f"news search: skipped an unreadable shard, so the answer is partial: {bad}")
        pct = 100.0 * rep.bytes_read / rep.index_bytes if rep.index_bytes else 0.0
        say(f"news search: {rep.matches} match(es); read {rep.bytes_read:,} of {rep.index_bytes:,} index bytes "
            f"({pct:.1f}%), opened {rep.shards_opened} of {rep.shards} shard(s) past the host column")
        return
    why = "--no-index" if no_index else f"{m} is not indexed in {repo}"
    say(f"news search: scanning {len(paths)} archive(s) of {m} ({why})")
    archives = iterate(lambda cc: scan_archives(cc, paths, query, limit=limit, workers=workers, report=rep,
                                                notice=say), context(ctx).client, warn=context(ctx).notice)
    yield from chunked((row for rows in archives for row in rows), SEARCH_FIELDS)
    say(f"news search: {rep.matches} match(es); scanned {rep.archives_scanned} archive(s), "
        f"{rep.bytes_read:,} bytes")


#: ``news.search`` a dict a row, for a library caller
news_search = rows_of(news_search_batches)


def open_news_repo(repo_id: str, *, hub: str = "", endpoint: str = "", no_push: bool = False) -> DatasetRepo:
    """The repo ``news publish`` writes to; a push to the Hub without a token fails here (exit 4)."""
    from ccrawl.hub.factory import open_publish_repo

    return open_publish_repo(repo_id, hub=hub, endpoint=endpoint, no_push=no_push)


@operation("news.publish", summary="Build the CC-NEWS index and mirror it to a dataset repo",
           columns=PUBLISH_COLUMNS, writes=True)
def news_publish(
    months: Value[str],
    repo: Endpoint[str] = "open-index/ccrawl-news",
    files: Annotated[int, Cap.VALUE, Bounds(0, 10**6)] = 0,
    commit_every: Limit[int] = 8,
    workers: Limit[int] = 0,
    private: Value[bool] = False,
    keep: Value[bool] = False,
    min_free_gb: Limit[float] = 0.0,
    max_stall: Limit[float] = 600.0,
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    staging: WritePath[str] = "",
    ctx: Injected[OpContext | None] = None,
    stats: Injected[NewsPublishStats | None] = None,
    executor: Limit[str] = "local",
    ray_address: Endpoint[str] = "",
) -> Iterator[Record]:
    """One record per archive: committed, staged (``no_push``), exists (on the hub already) or failed; ``stats``,
    when given, is the run's tally as it goes (the publisher counts into it)."""
    from pathlib import Path

    from ccrawl.commoncrawl.news.months import Month, parse_months
    from ccrawl.datasets.publish_news import NewsPublisher, NewsPublishOptions, summary_line

    say = context(ctx).notice
    opts = NewsPublishOptions(
        parse_months(months), repo_id=repo, files=files, commit_every=commit_every, workers=workers,
        private=private, keep=keep, min_free_gb=min_free_gb, max_stall=max_stall, no_push=no_push,
        staging=Path(staging) if staging else Path("news-staging") / repo.replace("/", "__"),
        client_options=context(ctx).client.as_dict(), executor=executor, ray_address=ray_address,
    )
    target = open_news_repo(repo, hub=hub, endpoint=endpoint, no_push=no_push)

    def paths_of(m: Month) -> list[str]:
        return month_paths(m.year, m.month, ctx)

    publisher = NewsPublisher(opts, target, month_paths=paths_of, log=say, stats=stats)
    yield from publisher.run()
    say(summary_line(publisher.stats, no_push=no_push))
    if publisher.stats.failed:
        from ccrawl.errors import CcrawlError

        raise CcrawlError(f"news publish: {publisher.stats.failed} archive(s) failed (named above) and are not "
                          "in the index; run again to retry them")
