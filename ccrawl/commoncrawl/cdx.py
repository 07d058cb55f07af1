"""Search Common Crawl's URL index (the CDX API) over one or more crawls, page by page.

::

    query = CdxQuery("*.senate.gov", url_contains=("/budget",))
    for row in search(query, ["CC-MAIN-2024-10"], client_options={"cdx_endpoint": ...}):
        row["url"], row["filename"], row["offset"], row["length"]

How a run goes, per crawl: ``showNumPages=true`` says how many pages the answer has (5 ZipNum
blocks each), then the pages are read in order, ``workers`` of them in flight, through the
polite client (:mod:`ccrawl.net.client`: pacing, retries of 429/5xx and dropped connections,
byte counting). Filters are pushed to the server and checked again here
(:mod:`ccrawl.commoncrawl.cdx_query`); --at, --latest-only, --dedup and --sort run here under
one memory budget (:mod:`ccrawl.commoncrawl.cdx_reduce`).

Pages that will not read:

* a body that stops early (the index cuts large pages under load and closes the connection as
  if it had finished: the last line is cut) is read again, up to ``retries`` times;
* a page that fails every attempt is named on stderr (``search: CC-MAIN-2024-10: CDX page 252:
  HTTP 503, skipping the page``), the run carries on, and ends with one line saying the result
  is incomplete; ``strict=True`` raises :class:`~ccrawl.errors.TemporaryFailure` instead;
* a 404 whose body says "No Captures found" is a page with no rows, not an error.

Rows are the index's JSON objects with ``status``, ``offset`` and ``length`` as integers and the
``crawl`` they came from added.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ccrawl.commoncrawl.cdx_query import CdxQuery, normalise_timestamp
from ccrawl.commoncrawl.cdx_reduce import (
    Budget,
    DigestFilter,
    Reducer,
    RunStore,
    closest_to,
    latest,
    reduce_groups,
    sort_records,
)
from ccrawl.errors import CcrawlError, TemporaryFailure, Unreachable, UsageError
from ccrawl.jsontypes import JSONObject
from ccrawl.output import format_size

if TYPE_CHECKING:
    from ccrawl.net.client import CCClient

__all__ = [
    "COLUMNS",
    "DEFAULT_MAX_BUFFER",
    "LOCATION_COLUMNS",
    "CdxQuery",
    "PageInfo",
    "SearchStats",
    "estimate",
    "human_bytes",
    "search",
]

DEFAULT_MAX_BUFFER = 5_000_000
LINES_PER_BLOCK = 3000  # Common Crawl's ZipNum block size, for --estimate
COLUMNS = (
    "urlkey",
    "timestamp",
    "url",
    "mime",
    "mime-detected",
    "status",
    "digest",
    "length",
    "offset",
    "filename",
    "languages",
    "encoding",
    "redirect",
    "crawl",
)
LOCATION_COLUMNS = ("filename", "offset", "length")
_INT_FIELDS = ("status", "offset", "length")

Notice = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def human_bytes(n: int) -> str:
    """``50576`` -> ``49.4 KB`` (powers of 1024, one decimal), the way --explain prints sizes."""
    return format_size(n, units=("B", "KB", "MB", "GB", "TB"))


@dataclass(slots=True)
class PageInfo:
    """What ``showNumPages=true`` answered for one crawl."""

    pages: int
    page_size: int
    blocks: int


@dataclass
class SearchStats:
    """What a search cost and what went wrong; filled in as the run goes."""

    bytes_read: int = 0
    requests: int = 0
    pages_read: int = 0
    rereads: int = 0
    rows_received: int = 0
    rows_kept: int = 0
    skipped: list[tuple[str, int, str]] = field(default_factory=list)
    spilled_rows: int = 0

    @property
    def incomplete(self) -> bool:
        return bool(self.skipped)


class PageUnreadable(Exception):
    """A page that failed every attempt; the message is the reason (``HTTP 503``)."""


def _http_reason(exc: Exception) -> str:
    m = re.search(r"HTTP \d{3}", str(exc))
    if m:
        return m.group(0)
    if "truncated" in str(exc):
        return "truncated body"
    return "connection failed"


def _parse_page(body: bytes) -> tuple[list[JSONObject], bool]:
    """Rows of one page and whether the page arrived whole (ends in a newline, every line parses)."""
    if not body:
        return [], True
    complete = body.endswith(b"\n")
    rows: list[JSONObject] = []
    lines = body.split(b"\n")
    if complete:
        lines = lines[:-1]
        whole = [line for line in lines if line.strip()]
        try:  # the page at once: one parse, not one a line (a line that will not parse: line by line below)
            parsed = json.loads(b"[" + b",".join(whole) + b"]")
        except ValueError:
            parsed = None
        if isinstance(parsed, list) and len(parsed) == len(whole):
            return parsed, True
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            if i == len(lines) - 1:
                return rows, False
            raise PageUnreadable(f"line {i + 1} is not JSON") from None
    return rows, complete


async def page_info(client: CCClient, crawl: str, query: CdxQuery) -> PageInfo:
    """How many pages ``query`` has in ``crawl`` (a crawl the index does not know is an error)."""
    from ccrawl.net.client import HTTPStatusError

    url = query.request_url(client.cdx_url(crawl), [("showNumPages", "true")])
    try:
        resp = await client.get(url, accept=(200, 404))
    except HTTPStatusError as exc:
        raise CcrawlError(f"search: {crawl}: the index server refused the query ({exc})") from None
    if resp.status == 404:
        if b"No Captures found" in resp.body:
            return PageInfo(0, 5, 0)
        raise UsageError(f"search: {crawl}: the index server has no such crawl (HTTP 404); see `ccrawl crawls list`")
    try:
        info = json.loads(resp.body)
        return PageInfo(int(info.get("pages", 0)), int(info.get("pageSize", 5)), int(info.get("blocks", 0)))
    except (ValueError, AttributeError, TypeError):
        # pywb without ZipNum pagination answers the rows themselves: one page.
        return PageInfo(1, 5, 1)


async def read_page(client: CCClient, url: str, retries: int, stats: SearchStats) -> list[JSONObject]:
    """The rows of one page; a truncated body is read again up to ``retries`` times."""
    from ccrawl.net.client import HTTPStatusError

    for attempt in range(retries + 1):
        if attempt:
            stats.rereads += 1
        try:
            resp = await client.get(url, accept=(200, 404))
        except (TemporaryFailure, Unreachable) as exc:
            raise PageUnreadable(_http_reason(exc)) from None
        except HTTPStatusError as exc:
            text = exc.args[0] if exc.args else str(exc)
            raise CcrawlError(f"search: the index server refused the query: {text}") from None
        if resp.status == 404:
            if b"No Captures found" in resp.body:
                return []
            raise PageUnreadable("HTTP 404")
        rows, complete = _parse_page(resp.body)
        if complete:
            return rows
    raise PageUnreadable(f"the body was cut short on all {retries + 1} reads")


async def _crawl_rows(
    client: CCClient,
    crawls: Sequence[str],
    query: CdxQuery,
    *,
    retries: int,
    workers: int,
    strict: bool,
    stats: SearchStats,
    notice: Notice,
) -> AsyncIterator[tuple[str, list[JSONObject]]]:
    """Each page's rows with the crawl they came from: a page an item, so the synchronous side steps the event
    loop once a page, not once a row."""
    base_bytes, base_requests = client.stats.bytes_read, client.stats.requests

    def account() -> None:
        stats.bytes_read = client.stats.bytes_read - base_bytes
        stats.requests = client.stats.requests - base_requests

    for crawl in crawls:
        info = await page_info(client, crawl, query)
        account()
        endpoint = client.cdx_url(crawl)
        tasks: dict[int, asyncio.Task[list[JSONObject]]] = {}
        try:
            for page in range(info.pages):
                for ahead in range(page, min(info.pages, page + max(1, workers))):
                    if ahead not in tasks:
                        url = query.request_url(endpoint, [("page", str(ahead))])
                        tasks[ahead] = asyncio.ensure_future(read_page(client, url, retries, stats))
                task = tasks.pop(page)
                try:
                    rows = await task
                except PageUnreadable as exc:
                    account()
                    if strict:
                        raise TemporaryFailure(
                            f"search: {crawl}: CDX page {page}: {exc}; run it again, or drop --strict to skip "
                            "pages that will not read"
                        ) from None
                    stats.skipped.append((crawl, page, str(exc)))
                    notice(f"search: {crawl}: CDX page {page}: {exc}, skipping the page")
                    continue
                stats.pages_read += 1
                stats.rows_received += len(rows)
                account()
                yield crawl, rows
        finally:
            for task in tasks.values():
                task.cancel()
            account()


_SHAPED = COLUMNS[:-1]


def _shape(row: JSONObject, crawl: str) -> JSONObject:
    """The row in :data:`COLUMNS` order (its other keys after them, then ``crawl``), the numbers as integers."""
    get = row.get
    out: JSONObject = {name: get(name) for name in _SHAPED}
    for name in _INT_FIELDS:
        value = out[name]
        if isinstance(value, str | int) and str(value).isdigit():
            out[name] = int(value)
    if not row.keys() <= out.keys():
        for name, value in row.items():
            if name not in out:
                out[name] = value
    out["crawl"] = crawl
    return out


def _explain_lines(query: CdxQuery, crawls: Sequence[str], endpoint: str, local: Sequence[str]) -> list[str]:
    lines = [f"search: {len(crawls)} crawl{'s' * (len(crawls) != 1)}: {', '.join(crawls)}"]
    for crawl in crawls:
        lines.append(f"search: the index server answers {query.request_url(f'{endpoint}/{crawl}-index')}")
    pushed = query.pushed()
    lines.append(f"search: pushed to the server: {', '.join(pushed) if pushed else 'nothing'}")
    here = [f"{d} (again, on what the server sent)" for d in query.rechecked()]
    here += list(query.local_only()) + list(local)
    lines.append(f"search: applied here: {', '.join(here) if here else 'nothing'}")
    return lines


def search(
    query: CdxQuery,
    crawls: Sequence[str],
    *,
    client_options: Mapping[str, Any] | None = None,
    at: str | None = None,
    latest_only: bool = False,
    dedup: bool = False,
    sort: str | None = None,
    max_buffer: int = DEFAULT_MAX_BUFFER,
    strict: bool = False,
    explain: bool = False,
    locations: bool = False,
    workers: int = 2,
    limit: int = 0,
    tmpdir: str | None = None,
    notice: Notice | None = None,
    stats: SearchStats | None = None,
) -> Iterator[JSONObject]:
    """Captures matching ``query`` in ``crawls``, in index order unless --sort/--at say otherwise.

    ``client_options`` are :class:`~ccrawl.net.client.CCClient` keywords (endpoints, rate,
    retries, ...); ``retries`` there also bounds the re-reads of a truncated page. ``stats``
    (optional) is filled in as the run goes. Lines for stderr go to ``notice``.
    """
    from ccrawl.net.client import DEFAULT_CDX_ENDPOINT, iterate

    say = notice or _stderr
    stats = stats if stats is not None else SearchStats()
    options = dict(client_options or {})
    if at is not None and latest_only:
        raise UsageError("--at and --latest-only both pick one capture per URL: pass one of them")
    if sort not in (None, "newest", "oldest"):
        raise UsageError(f"--sort {sort!r}: use newest or oldest")
    if not crawls:
        raise UsageError("search needs at least one crawl (-c)")
    if max_buffer < 1:
        raise UsageError(f"--max-buffer {max_buffer}: must be at least 1")
    target = normalise_timestamp(at, flag="--at") if at is not None else None
    retries = int(options.get("retries", 3))
    local = []
    if at is not None:
        local.append(f"--at {at}")
    if latest_only:
        local.append("--latest-only")
    if dedup:
        local.append("--dedup")
    if sort:
        local.append(f"--sort {sort}")
    endpoint = str(options.get("cdx_endpoint", DEFAULT_CDX_ENDPOINT)).rstrip("/")
    if explain:
        for line in _explain_lines(query, crawls, endpoint, local):
            say(line)

    def source(client: CCClient) -> AsyncIterator[tuple[str, list[JSONObject]]]:
        return _crawl_rows(
            client, crawls, query, retries=retries, workers=workers, strict=strict, stats=stats, notice=say
        )

    budget = Budget(max_buffer)
    store = RunStore(budget, tmpdir)
    digests = DigestFilter(budget, say) if dedup else None
    emitted = 0
    raw = cast(Generator[tuple[str, list[JSONObject]], None, None], iterate(source, **options))
    try:
        kept = (_shape(row, crawl) for crawl, page in raw for row in page if query.keeps(row))
        rows: Iterator[JSONObject] = kept
        reducer: Reducer | None = closest_to(target) if target is not None else (latest if latest_only else None)
        if reducer is not None:
            rows = _reduce_across_crawls(kept, reducer, len(crawls), store)
        if digests is not None:
            rows = (r for r in rows if digests.keep(r))
        if sort is not None:
            rows = sort_records(
                rows, key=lambda r: (str(r["timestamp"]), r["urlkey"]), reverse=sort == "newest",
                budget=budget, tmpdir=tmpdir,
            )
        elif target is not None:
            rows = _newest_first_within(rows, budget, say)
        for row in rows:
            stats.rows_kept += 1
            yield {k: row[k] for k in LOCATION_COLUMNS} if locations else row
            emitted += 1
            if limit and emitted >= limit:
                break
    finally:
        try:
            raw.close()  # ends the requests in flight before the summary lines
        except RuntimeError:
            # Interrupted mid-request (SIGTERM, Ctrl-C): the event loop cannot finish the
            # generator; what matters now is that the spill files go.
            pass
        finally:
            stats.spilled_rows += store.spilled_rows
            store.close()
            if digests is not None:
                digests.close()
        if explain:
            say(f"search: read {human_bytes(stats.bytes_read)} from the index ({stats.bytes_read} bytes)")
        if stats.skipped:
            n = len(stats.skipped)
            say(
                f"search: the result is incomplete, {n} index page{'s' * (n != 1)} could not be read; "
                "run it again or pass --strict to fail instead"
            )


def _reduce_across_crawls(
    rows: Iterator[JSONObject], reducer: Reducer, n_crawls: int, store: RunStore
) -> Iterator[JSONObject]:
    """Each crawl's groups reduced as they stream past; several crawls' runs merged and reduced again."""
    if n_crawls == 1:
        yield from reduce_groups(rows, reducer)
        return
    import itertools

    for _, crawl_rows in itertools.groupby(rows, key=lambda r: r["crawl"]):
        store.add_run(reduce_groups(crawl_rows, reducer))
    merged = store.merged(key=lambda r: r["urlkey"])
    store.release()
    yield from reduce_groups(merged, reducer)


def _newest_first_within(rows: Iterator[JSONObject], budget: Budget, say: Notice) -> Iterator[JSONObject]:
    """--at's order: newest first when the result fits in the budget, index order past it (said once)."""
    held: list[JSONObject] = []
    room = budget.max_buffer  # a budget of its own: --at may hold twice --max-buffer while it hands over
    for row in rows:
        held.append(row)
        if len(held) > room:
            say(
                f"search: the --at result is larger than --max-buffer ({budget.max_buffer} records), "
                "so it comes out in index order instead of newest first"
            )
            yield from held
            yield from rows
            return
    held.sort(key=lambda r: str(r["timestamp"]), reverse=True)
    yield from held


def estimate(
    query: CdxQuery,
    crawls: Sequence[str],
    *,
    client_options: Mapping[str, Any] | None = None,
    lines_per_block: int = LINES_PER_BLOCK,
) -> Iterator[JSONObject]:
    """Per crawl: pages, ZipNum blocks and at most how many captures (blocks x lines per block).

    The bound ignores filters (``showNumPages`` does) and the first and last blocks are shared
    with neighbouring keys, so a narrow query is over-estimated by up to two blocks.
    """
    from ccrawl.net.client import run

    async def go(client: CCClient) -> list[PageInfo]:
        return [await page_info(client, c, query) for c in crawls]

    infos = run(go, **dict(client_options or {}))
    for crawl, info in zip(crawls, infos, strict=True):
        yield {
            "crawl": crawl,
            "pages": info.pages,
            "blocks": info.blocks,
            "max_captures": info.blocks * lines_per_block,
        }
