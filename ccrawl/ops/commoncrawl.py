"""Operations over Common Crawl's data: crawls, stats, paths, download, fetch, get, export.

Each takes its limits as keywords plus the front end's :class:`~ccrawl.ops.context.OpContext`
(``ctx``: the Common Crawl client's options, where notices go, the command line), the same
convention as :mod:`ccrawl.ops.search`. A stream of per-item work (fetch, download) names each
failure through the context's notice and carries on; it ends with exit 3 when there was nothing
to do and exit 1 when every item failed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated

from ccrawl.errors import CcrawlError, NothingMatched, UsageError
from ccrawl.jsontypes import JSONObject, Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, Value, WritePath
from ccrawl.ops.context import Notice, OpContext, context, stderr_notice

if TYPE_CHECKING:
    from ccrawl.commoncrawl.fetch import FetchResult
    from ccrawl.commoncrawl.records import Location
    from ccrawl.net.client import CCClient


def _crawls(crawl: str, c: OpContext) -> list[str]:
    from ccrawl.commoncrawl.crawls import resolve
    from ccrawl.net.client import run

    return run(lambda cc: resolve(cc, crawl, warn=c.notice), c.client, warn=c.notice)


def _end_of_stream(ok: int, failed: int, what: str) -> None:
    if ok == 0 and failed == 0:
        raise NothingMatched(f"no {what} to work on (the input was empty)")
    if ok == 0:
        raise CcrawlError(f"every {what} failed ({failed}); see the lines above")


# -- crawls and stats ----------------------------------------------------------------------------


@operation("crawls.list", summary="The monthly crawls, newest first", columns=("crawl", "name", "from", "to"))
def crawls_list(
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.crawls import list_crawls
    from ccrawl.net.client import run

    c = context(ctx)
    for crawl in run(lambda cc: list_crawls(cc, warn=c.notice), c.client, warn=c.notice):
        row = crawl.record()
        row.pop("cdx_api")
        yield row


@operation("crawls.latest", summary="The newest crawl ID", columns=("crawl",))
def crawls_latest(
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    for crawl in _crawls("latest", context(ctx)):
        yield {"crawl": crawl}


@operation("crawls.resolve", summary="Crawl IDs a -c value names (year, latest, all, N, list)", columns=("crawl",))
def crawls_resolve(
    ref: Value[str] = "latest",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    for crawl in _crawls(ref, context(ctx)):
        yield {"crawl": crawl}


@operation(
    "crawls.info", summary="File counts per archive kind for a crawl (stats)", columns=("crawl", "kind", "files")
)
def crawls_info(
    crawl: Value[str] = "latest",
    kinds: Value[Sequence[str] | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One row per crawl and kind; a manifest that cannot be fetched shows ``files`` -1, never a gap."""
    from ccrawl.commoncrawl.manifests import MANIFESTS, check_kind, count_paths
    from ccrawl.net.client import run

    wanted = [check_kind(k) for k in kinds] if kinds else list(MANIFESTS)
    c = context(ctx)
    crawls = _crawls(crawl, c)

    async def count_all(cc: CCClient) -> list[tuple[str, str, int]]:
        import asyncio

        jobs = [(c, k) for c in crawls for k in wanted]
        counts = await asyncio.gather(*(count_paths(cc, c, k) for c, k in jobs))
        return [(c, k, n) for (c, k), n in zip(jobs, counts, strict=True)]

    rows = run(count_all, c.client, warn=c.notice)
    for name, kind, files in rows:
        if files < 0:
            c.notice(f"stats: {name}: the {kind} manifest could not be read, files shown as -1")
    for name, kind, files in rows:
        yield {"crawl": name, "kind": kind, "files": files}


# -- paths and download --------------------------------------------------------------------------


def _paths_of(crawl: str, kind: str) -> Callable[[CCClient], Awaitable[list[str]]]:
    from ccrawl.commoncrawl.manifests import fetch_paths

    return lambda cc: fetch_paths(cc, crawl, kind)


@operation("cc.paths", summary="Archive file paths of a crawl, by kind", columns=("crawl", "kind", "path", "url"))
def cc_paths(
    kind: Value[str],
    crawl: Value[str] = "latest",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.manifests import check_kind
    from ccrawl.net.client import CCClient, run

    check_kind(kind)
    c = context(ctx)
    for crawl_id in _crawls(crawl, c):
        paths = run(_paths_of(crawl_id, kind), c.client, warn=c.notice)
        base = CCClient.of(c.client)
        for path in paths:
            yield {"crawl": crawl_id, "kind": kind, "path": path, "url": base.data_url(path)}


@operation(
    "cc.download",
    summary="Download whole archive files (resumable, sha256 as they stream)",
    columns=("path", "file", "status", "bytes", "sha256"),
    writes=True,
)
def cc_download(
    kind: Value[str | None] = None,
    paths: Value[Iterable[str] | None] = None,
    crawl: Value[str] = "latest",
    out: WritePath[str] = ".",
    flat: Value[bool] = False,
    workers: Limit[int] = 8,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    library: WritePath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Every file of ``kind`` in the crawls ``crawl`` names, or the given ``paths`` (``download -``).

    ``library`` (a library root) replaces ``out``/``flat``: files land in ``<library>/<crawl>/<kind>/``
    and each finished one is recorded in its ``library.json`` with the sha256 computed as it streamed.
    """
    from ccrawl.commoncrawl.download import download_all
    from ccrawl.commoncrawl.manifests import DOWNLOAD_KINDS, check_kind
    from ccrawl.net.client import iterate, run

    if library is not None and flat:
        raise UsageError("--flat and --library: the library keeps its own <crawl>/<kind>/<file> tree; drop --flat")
    c = context(ctx)
    if paths is None:
        if kind is None:
            raise UsageError("download needs a kind (warc, wat, wet, ...) or - to read paths on stdin")
        check_kind(kind, allowed=DOWNLOAD_KINDS)
        todo: list[str] = []
        for crawl_id in _crawls(crawl, c):
            todo += run(_paths_of(crawl_id, kind), c.client, warn=c.notice)
    else:
        todo = [p.strip() for p in paths if p and p.strip()]
    if limit > 0:
        todo = todo[:limit]
    if library is None:
        rows: Iterable[Record] = iterate(
            lambda cc: download_all(cc, todo, out_dir=out, flat=flat, workers=workers), c.client, warn=c.notice
        )
    else:
        from ccrawl.store.library import Library, download_relpath, record_downloads

        lib = Library(library)
        places = {p: lib.locate(download_relpath(p, kind)) for p in todo}  # a path with no place fails here
        rows = record_downloads(lib, iterate(
            lambda cc: download_all(cc, todo, out_dir=lib.root, workers=workers, place=places.__getitem__),
            c.client, warn=c.notice,
        ))
    ok = failed = 0
    for row in rows:
        if str(row["status"]).startswith("failed"):
            failed += 1
            c.notice(f"download: {row['path']}: {str(row['status'])[len('failed: '):]}")
        else:
            ok += 1
        yield row
    _end_of_stream(ok, failed, "file")


# -- fetch, get, export --------------------------------------------------------------------------


def _locations(items: Iterable[Mapping[str, object] | Location], notice: Notice) -> Iterator[Location]:
    from ccrawl.commoncrawl.records import Location, location_from

    for n, item in enumerate(items, start=1):
        if isinstance(item, Location):
            yield item
            continue
        try:
            yield location_from(item, where=f"location {n}")
        except CcrawlError as exc:
            notice(f"fetch: {exc}")


@operation("cc.fetch", summary="WARC records by location (one at a time or coalesced --batch)", columns=())
def cc_fetch(
    locations: Value[Iterable[Mapping[str, object]]],
    content: Value[str] = "body",
    batch: Value[bool] = False,
    gap: Limit[int] = 1 << 20,
    max_span: Limit[int] = 16 << 20,
    order: Value[str] = "file",
    lookahead: Limit[int] = 64,
    ledger: WritePath[str | None] = None,
    to_dir: WritePath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Rows per record under the ``content`` flag; each record's rows carry nothing of how it was read.

    With ``to_dir`` each record is written to a file of its own there instead, one row per file
    (``url``, ``filename``, ``offset``, ``path``, ``bytes``)."""
    from pathlib import Path

    from ccrawl.commoncrawl.fetch import write_record_file

    for result in fetch_results(
        locations, content=content, batch=batch, gap=gap, max_span=max_span, order=order, lookahead=lookahead,
        ledger=ledger, ctx=ctx,
    ):
        if to_dir is not None:
            yield write_record_file(Path(to_dir), result, content)
        else:
            yield from result.rows or ()


def fetch_results(
    locations: Iterable[Mapping[str, object] | Location],
    *,
    content: str = "body",
    batch: bool = False,
    gap: int = 1 << 20,
    max_span: int = 16 << 20,
    order: str = "file",
    lookahead: int = 64,
    ledger: str | None = None,
    ctx: OpContext | None = None,
) -> Iterator[FetchResult]:
    """The :class:`~ccrawl.commoncrawl.fetch.FetchResult` of every location that read; failures named."""
    from ccrawl.commoncrawl.fetch import Ledger, check_batch, fetch_batch, fetch_each
    from ccrawl.commoncrawl.records import check_content
    from ccrawl.net.client import iterate

    c = context(ctx)
    say = c.notice
    check_content(content)
    if batch:
        check_batch(gap, max_span, order, lookahead)
    # A list is checked whole before the first request (a location over the record cap is a
    # UsageError, see fetch.check_location); a stream one location at a time, as it is read.
    locs = list(_locations(locations, say)) if batch or isinstance(locations, Sequence) else _locations(locations, say)
    ok = failed = 0
    with Ledger(ledger) as book:
        if batch:
            stream = iterate(
                lambda cc: fetch_batch(
                    cc, locs, content=content, gap=gap, max_span=max_span, order=order, lookahead=lookahead, ledger=book
                ),
                c.client, warn=say,
            )
        else:
            stream = iterate(lambda cc: fetch_each(cc, locs, content=content, ledger=book), c.client, warn=say)
        for result in stream:
            if result.error is not None:
                failed += 1
                say(f"fetch: {result.location.key}: {result.error}")
                continue
            ok += 1
            note = result.rows[0].get("note") if result.rows else None
            if note:
                say(f"fetch: {result.location.key}: {note}")
            yield result
        if ok == 0 and failed == 0 and book.done:
            return  # everything was already in the ledger: a finished run, not an empty one
    _end_of_stream(ok, failed, "location")


def dry_run_line(
    locations: Iterable[Mapping[str, object] | Location], *, gap: int = 1 << 20, max_span: int = 16 << 20,
    ledger: str | None = None, notice: Notice | None = None,
) -> str:
    """The line ``fetch --batch --dry-run`` prints; nothing is fetched."""
    from ccrawl.commoncrawl.fetch import Ledger, check_batch, dry_run

    check_batch(gap, max_span, "file", 1)
    return dry_run(_locations(locations, notice or stderr_notice), gap=gap, max_span=max_span, ledger=Ledger(ledger))


def newest_capture(url: str, crawls: Sequence[str], *, ctx: OpContext | None = None) -> JSONObject | None:
    """The capture ``get`` fetches: in the newest crawl that has ``url``, its newest 200, else its newest."""
    from ccrawl.commoncrawl.cdx import CdxQuery, search

    c = context(ctx)
    for crawl in crawls:
        rows = list(search(CdxQuery(url, match="exact"), [crawl], client_options=c.client.as_dict(), notice=c.notice))
        if rows:
            ok = [r for r in rows if str(r.get("status")) == "200"]
            return max(ok or rows, key=lambda r: str(r.get("timestamp", "")))
    return None


@operation("cc.get", summary="What Common Crawl captured for a URL: the newest capture's record", columns=())
def cc_get(
    url: Value[str],
    content: Value[str] = "body",
    crawl: Value[str] = "latest",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Look ``url`` up in the index of the crawls ``crawl`` names (newest first), then fetch the record."""
    from ccrawl.commoncrawl.records import check_content

    check_content(content)
    c = context(ctx)
    crawls = _crawls(crawl, c)
    capture = newest_capture(url, crawls, ctx=c)
    if capture is None:
        where = crawls[0] if len(crawls) == 1 else f"{len(crawls)} crawls"
        raise NothingMatched(f"get: no capture of {url} in {where}; try -c all or `ccrawl search {url} -c all`")
    for result in fetch_results([capture], content=content, ctx=c):
        yield from result.rows or ()


@operation(
    "cc.export",
    summary="Captures into rotating .warc.gz files opening with a warcinfo record of provenance",
    columns=("file", "records", "bytes"),
    writes=True,
)
def cc_export(
    locations: Value[Iterable[Mapping[str, object]]],
    prefix: Value[str] = "ccrawl",
    subprefix: Value[str | None] = None,
    size: Limit[int] = 1_000_000_000,
    out_dir: WritePath[str] = ".",
    creator: Value[str | None] = None,
    operator: Value[str | None] = None,
    strict: Value[bool] = False,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Copy the records at ``locations`` (CDX rows or location JSON) into WARC files under ``out_dir``."""
    from ccrawl.commoncrawl.export import export_locations
    from ccrawl.net.client import iterate

    c = context(ctx)
    say = c.notice
    locs = list(_locations(locations, say))
    if not locs:
        raise NothingMatched("export: no captures to write")
    yield from iterate(
        lambda cc: export_locations(
            cc, locs, out_dir=out_dir, prefix=prefix, subprefix=subprefix, size=size, creator=creator,
            operator=operator, command_line=c.command_line, strict=strict, warn=say,
        ),
        c.client, warn=say,
    )
