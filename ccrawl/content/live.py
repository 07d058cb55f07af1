"""Fetch a list of URLs live with the crawler's client and extract each page, concurrently, in order.

:func:`fetch_pages` is a plain iterator over :class:`LivePage` results in input order, so a
caller (an operation, the CLI) can stream them. Behind it one event loop runs a
:class:`~ccrawl.fetch.Fetcher` with at most ``concurrency`` URLs in flight; a slow URL holds back
the ones after it in the output (never more than ``concurrency`` of them), which is the price of
keeping input order. The input iterable is read on a daemon thread, so a slow producer on stdin
(``ccrawl search ... | ccrawl content quality -``) never stalls fetches already running, and a
consumer that stops early (``-n 20``) closes the fetcher and leaves the reader behind.

A URL that cannot be used comes back as a page with ``error`` set, never as an exception: the
fetch failed (``dns``, ``timeout``, ``refused``, ``tls``, ``other`` with the detail), the answer
was an HTTP error (status 400 and up), the body is not HTML, or its content coding is corrupt.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ccrawl.fetch.decoding import ContentDecodeError, decode_content, looks_like_html

if TYPE_CHECKING:
    from ccrawl.extract.model import Extraction
    from ccrawl.fetch import FetchConfig, Fetcher, FetchResult

#: The crawler's body cap; decoded bodies are held to it as well (a compression bomb stops here).
MAX_BODY = 10 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEFAULT_CONCURRENCY = 8
#: Seconds between two requests to one host (the crawler's default politeness).
DEFAULT_DELAY = 1.0
_END = object()


@dataclass(slots=True)
class LivePage:
    """One URL of the list: what came back and what the extractor made of it."""

    url: str
    """As given."""
    final_url: str = ""
    """Where redirects ended (``url`` when it did not move); links resolve against it."""
    status: int = 0
    html: str = ""
    """The decoded HTML, '' on an error."""
    extraction: Extraction | None = None
    error: str = ""
    """'' on success, else one line saying what went wrong."""

    @property
    def ok(self) -> bool:
        return not self.error


def live_config(
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_body: int = MAX_BODY,
    delay: float = DEFAULT_DELAY,
    user_agent: str = "",
    resolve: Mapping[str, str] | None = None,
    verify_tls: bool = True,
    concurrency: int = DEFAULT_CONCURRENCY,
    allow_private_addresses: bool = False,
) -> FetchConfig:
    """The crawler's fetch settings for a live content run (10 MB cap, brotli/zstd, redirects)."""
    from ccrawl.fetch import FetchConfig

    cfg = FetchConfig(
        timeout=timeout if timeout > 0 else DEFAULT_TIMEOUT,
        max_body=max_body,
        delay=delay,
        resolve=dict(resolve or {}),
        verify_tls=verify_tls,
        concurrency=max(1, concurrency),
        allow_private_addresses=allow_private_addresses,
    )
    if user_agent:
        cfg.user_agent = user_agent
    return cfg.validate()


# -- content coding --------------------------------------------------------------------------------


def _header(result: FetchResult, name: str) -> str:
    lowered = name.lower()
    return ", ".join(v for n, v in result.resp_headers if n.lower() == lowered)


def page_from_result(result: FetchResult, extractor: str = "h2m") -> LivePage:
    """Decode and extract one fetch result (or say why not)."""
    from ccrawl.extract.decode import decode_body
    from ccrawl.extract.engines import get_extractor

    page = LivePage(url=result.url, final_url=result.target_url, status=result.status)
    if result.error:
        page.error = f"{result.error}: {result.error_detail}" if result.error_detail else result.error
        return page
    if result.status >= 400:
        page.error = f"HTTP {result.status}" + (f" {result.reason}" if result.reason else "")
        return page
    try:
        body = decode_content(result.body, _header(result, "Content-Encoding"), MAX_BODY)
    except ContentDecodeError as exc:
        page.error = str(exc)
        return page
    if not looks_like_html(result.content_type, body):
        page.error = f"not HTML ({result.content_type.split(';', 1)[0].strip() or 'no Content-Type'})"
        return page
    decoded = decode_body(body, result.content_type or None)
    extraction = get_extractor(extractor).extract(decoded.text, page.final_url)
    # The extractor was handed text; record how the bytes were decoded, as a bytes input would.
    extraction.charset, extraction.charset_source = decoded.charset, decoded.source
    if decoded.note:
        extraction.notes.append(decoded.note)
    if result.body_truncated:
        extraction.notes.append(f"size: body cut at {len(result.body)} bytes by the fetch cap")
        extraction.truncated = True
    page.html, page.extraction = decoded.text, extraction
    return page


# -- the concurrent, ordered stream ----------------------------------------------------------------


class _InputFeed:
    """Reads the input iterable on a daemon thread and hands values to the loop, a bounded few at a time."""

    def __init__(self, urls: Iterable[str], loop: asyncio.AbstractEventLoop, ahead: int) -> None:
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self._room = threading.Semaphore(ahead)
        self._stop = threading.Event()
        self._loop = loop
        self._thread = threading.Thread(target=self._read, args=(iter(urls),), daemon=True, name="content-input")
        self._thread.start()

    def _push(self, item: object) -> bool:
        try:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the consumer has gone
            return False
        return True

    def _read(self, urls: Iterator[str]) -> None:
        try:
            for url in urls:
                self._room.acquire()
                if self._stop.is_set() or not self._push(url):
                    return
        except BaseException as exc:  # re-raised in the loop, where the caller sees it
            self._push(exc)
            return
        self._push(_END)

    def took_one(self) -> None:
        self._room.release()

    def stop(self) -> None:
        self._stop.set()
        self._room.release()


async def _stream(
    urls: Iterable[str], config: FetchConfig, extractor: str, concurrency: int
) -> AsyncGenerator[LivePage, None]:
    from ccrawl.fetch import Fetcher

    feed = _InputFeed(urls, asyncio.get_running_loop(), ahead=max(concurrency * 4, 64))
    pending: deque[asyncio.Task[LivePage]] = deque()
    getter: asyncio.Task[object] | None = None
    ended = False
    try:
        async with Fetcher(config) as fetcher:
            while not ended or pending:
                if not ended and getter is None and len(pending) < concurrency:
                    getter = asyncio.ensure_future(feed.queue.get())
                waiters: list[asyncio.Future[Any]] = [t for t in (getter, pending[0] if pending else None) if t]
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                if pending and pending[0].done():
                    yield pending.popleft().result()
                    continue
                if getter is not None and getter.done():
                    item, getter = getter.result(), None
                    feed.took_one()
                    if item is _END:
                        ended = True
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        pending.append(asyncio.create_task(_one(fetcher, str(item), extractor)))
    finally:
        feed.stop()
        for task in [*pending, *([getter] if getter else [])]:
            task.cancel()


async def _one(fetcher: Fetcher, url: str, extractor: str) -> LivePage:
    result = await fetcher.fetch(url.strip())
    result.url = url
    try:
        return page_from_result(result, extractor)
    except Exception as exc:  # one page that breaks the extractor must not end the whole list
        return LivePage(
            url=url,
            final_url=result.target_url,
            status=result.status,
            error=f"extraction failed: {type(exc).__name__}: {exc}",
        )


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def fetch_pages(
    urls: Iterable[str],
    *,
    config: FetchConfig | None = None,
    extractor: str = "h2m",
    concurrency: int = DEFAULT_CONCURRENCY,
) -> Generator[LivePage, None, None]:
    """Fetch and extract every URL, ``concurrency`` at a time, yielding pages in input order."""
    from ccrawl.extract.engines import get_extractor

    get_extractor(extractor)  # an unknown name is a usage error before anything is fetched
    cfg = config or live_config(concurrency=concurrency)
    agen = _stream(urls, cfg, extractor, max(1, concurrency))

    async def step() -> LivePage | None:
        try:
            return await agen.__anext__()
        except StopAsyncIteration:
            return None

    async def close() -> None:
        await agen.aclose()

    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        try:
            while True:
                page = runner.run(step())
                if page is None:
                    return
                # The loop is paused while the consumer handles the page; fetches resume after.
                yield page
        finally:
            runner.run(close())
