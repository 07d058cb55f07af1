"""The search operation (CLI ``search``, alias ``cdx``): captures of a URL or pattern from the CDX index.

Thin over :mod:`ccrawl.commoncrawl.cdx`: resolve ``-c`` to crawl IDs, build the query, stream the
rows. Nothing matched at all is :class:`~ccrawl.errors.NothingMatched` (exit 3), raised after the
stream ends so the stderr summary lines come first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from ccrawl.commoncrawl.cdx import COLUMNS, DEFAULT_MAX_BUFFER, LOCATION_COLUMNS, CdxQuery, SearchStats
from ccrawl.errors import NothingMatched
from ccrawl.ops import batch_operation, operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, Value
from ccrawl.ops.context import OpContext, context
from ccrawl.rowbatch import rows_of

if TYPE_CHECKING:
    import pyarrow as pa

Record = dict[str, Any]

_NUMBERS = ("status", "offset", "length")
#: the declared fields of ``cc.search``'s record batches (a status such as ``-``, or any value the index sends
#: that its field's kind cannot hold, is carried exactly: :mod:`ccrawl.rowbatch`)
SEARCH_FIELDS = tuple((name, "int64" if name in _NUMBERS else "string") for name in COLUMNS)
LOCATION_FIELDS = tuple((name, "int64" if name in _NUMBERS else "string") for name in LOCATION_COLUMNS)


def resolve_crawls(crawl: str, ctx: OpContext | None) -> list[str]:
    """Crawl IDs for a ``-c`` value (explicit IDs need no network)."""
    from ccrawl.commoncrawl.crawls import explicit_id, needs_list, resolve
    from ccrawl.net.client import run

    if not needs_list(crawl):
        return [c for c in (explicit_id(p) for p in crawl.split(",")) if c]
    c = context(ctx)
    return run(lambda cc: resolve(cc, crawl, warn=c.notice), c.client, warn=c.notice)


def build_query(
    url: str,
    *,
    match: str | None = None,
    status: str | int | None = None,
    mime: str | None = None,
    lang: str | None = None,
    filters: Sequence[str] = (),
    url_contains: Sequence[str] = (),
    url_not_contains: Sequence[str] = (),
    from_ts: str | None = None,
    to_ts: str | None = None,
    push_filters: bool = True,
) -> CdxQuery:
    """A :class:`CdxQuery` from the flags search (and export) share."""
    return CdxQuery(
        url,
        match=match,
        status=None if status is None else str(status),
        mime=mime,
        lang=lang,
        filters=tuple(filters),
        url_contains=tuple(url_contains),
        url_not_contains=tuple(url_not_contains),
        from_ts=from_ts,
        to_ts=to_ts,
        push_filters=push_filters,
    )


@batch_operation("cc.search", summary="Captures of a URL or pattern from the CDX index", columns=COLUMNS)
def cc_search_batches(
    url: Value[str],
    crawl: Value[str] = "latest",
    match: Value[str | None] = None,
    status: Value[str | None] = None,
    mime: Value[str | None] = None,
    lang: Value[str | None] = None,
    filters: Value[Sequence[str]] = (),
    url_contains: Value[Sequence[str]] = (),
    url_not_contains: Value[Sequence[str]] = (),
    from_ts: Value[str | None] = None,
    to_ts: Value[str | None] = None,
    push_filters: Value[bool] = True,
    at: Value[str | None] = None,
    latest_only: Value[bool] = False,
    dedup: Value[bool] = False,
    sort: Value[str | None] = None,
    max_buffer: Limit[int] = DEFAULT_MAX_BUFFER,
    strict: Value[bool] = False,
    explain: Value[bool] = False,
    locations: Value[bool] = False,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    workers: Limit[int] = 2,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[pa.RecordBatch]:
    """Every capture matching the query over the crawls ``crawl`` names (see :func:`ccrawl.commoncrawl.cdx.search`),
    as record batches of :data:`SEARCH_FIELDS` (:data:`LOCATION_FIELDS` with ``locations``)."""
    from ccrawl.commoncrawl.cdx import search
    from ccrawl.rowbatch import chunked

    query = build_query(
        url, match=match, status=status, mime=mime, lang=lang, filters=filters, url_contains=url_contains,
        url_not_contains=url_not_contains, from_ts=from_ts, to_ts=to_ts, push_filters=push_filters,
    )
    c = context(ctx)
    crawls = resolve_crawls(crawl, c)
    stats = SearchStats()
    count = 0
    rows = search(
        query, crawls, client_options=c.client.as_dict(), at=at, latest_only=latest_only, dedup=dedup, sort=sort,
        max_buffer=max_buffer, strict=strict, explain=explain, locations=locations, workers=workers,
        limit=limit, notice=c.notice, stats=stats,
    )
    for batch in chunked(rows, LOCATION_FIELDS if locations else SEARCH_FIELDS):
        count += batch.num_rows
        yield batch
    if count == 0:
        where = crawls[0] if len(crawls) == 1 else f"{len(crawls)} crawls"
        raise NothingMatched(f"search: no capture of {url} matched in {where}")


#: ``cc.search`` a dict a row, for a library caller
cc_search = rows_of(cc_search_batches)


@operation(
    "cc.estimate",
    summary="How big a CDX query's answer is, per crawl, without listing it",
    columns=("crawl", "pages", "blocks", "max_captures"),
)
def cc_estimate(
    url: Value[str],
    crawl: Value[str] = "latest",
    match: Value[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Pages, blocks and an upper bound of captures per crawl (``showNumPages``)."""
    from ccrawl.commoncrawl.cdx import estimate

    c = context(ctx)
    crawls = resolve_crawls(crawl, c)
    yield from estimate(build_query(url, match=match), crawls, client_options=c.client.as_dict())


__all__ = [
    "LOCATION_COLUMNS", "LOCATION_FIELDS", "SEARCH_FIELDS", "build_query", "cc_estimate", "cc_search",
    "cc_search_batches", "resolve_crawls",
]
