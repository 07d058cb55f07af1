"""The polite bulk HTTP client every Common Crawl read goes through (collinfo, manifests, WARCs, CDX).

One :class:`CCClient` per run, used as an async context manager::

    async with CCClient(data_endpoint="http://127.0.0.1:8080", global_rate=0.2) as cc:
        body = await cc.get_range(cc.data_url("crawl-data/.../x.warc.gz"), 1234, 5678)

What it does for every request, in this order:

* **pacing** — ``rate`` (seconds between this process's requests) and ``global_rate`` (seconds
  between requests of every ccrawl process sharing ``data_dir``; see :mod:`ccrawl.net.ratelimit`);
* **retries** — 429, any 5xx, connection errors, timeouts and truncated bodies (fewer bytes than
  Content-Length, or than the range asked for) are retried ``retries`` times with exponential
  backoff (``backoff`` doubling per attempt, capped at ``backoff_max``, honouring Retry-After);
  a range the server answers up to the end of the file (``Content-Range: bytes a-b/size`` with
  ``b + 1 == size``) is not truncated but past the end: :class:`ShortRead` at once, no retry;
* **concurrency** — at most ``max_connections`` requests in flight, halved on every 429/5xx and
  grown back by one per window of successes (:class:`AdaptiveConcurrency`), so a server saying
  "Slow Down" gets fewer requests at once, not only later ones;
* **errors** — a transport failure on every attempt raises :class:`~ccrawl.errors.Unreachable`
  (exit 8); a 429/5xx that never clears raises :class:`~ccrawl.errors.TemporaryFailure` (exit 75);
  any other status raises :class:`HTTPStatusError` at once (exit 1), which callers may catch;
* **accounting** — bytes read and requests made, for ``--explain`` and run summaries.

``source="s3"`` reads bulk data from ``s3_endpoint`` instead of ``data_endpoint``; nothing else
changes. Every limit is a keyword argument; the CLI only passes settings through. Commands that are
not async use :func:`run` and :func:`iterate`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import random
import re
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ccrawl.errors import CcrawlError, InputError, TemporaryFailure, Unreachable, UsageError
from ccrawl.net.cache import DiskCache
from ccrawl.net.options import (
    DEFAULT_CDX_ENDPOINT,
    DEFAULT_COLLINFO_ENDPOINT,
    DEFAULT_DATA_ENDPOINT,
    DEFAULT_S3_ENDPOINT,
    DEFAULT_USER_AGENT,
    ClientOptions,
    seconds,
)
from ccrawl.net.ratelimit import NO_GATE, AdaptiveConcurrency, RateLimiter

if TYPE_CHECKING:
    import aiohttp

T = TypeVar("T")

__all__ = ["DEFAULT_CDX_ENDPOINT", "DEFAULT_COLLINFO_ENDPOINT", "DEFAULT_DATA_ENDPOINT", "DEFAULT_S3_ENDPOINT",
           "DEFAULT_USER_AGENT", "CCClient", "ClientOptions", "HTTPStatusError", "ShortRead", "client_options",
           "iterate", "run", "seconds"]

#: The keyword arguments :class:`CCClient` accepts; :func:`client_options` picks these out of settings.
OPTION_NAMES = (
    "collinfo_endpoint",
    "data_endpoint",
    "cdx_endpoint",
    "s3_endpoint",
    "source",
    "rate",
    "global_rate",
    "data_dir",
    "cache_dir",
    "no_cache",
    "timeout",
    "retries",
    "backoff",
    "backoff_max",
    "user_agent",
    "max_connections",
    "verbose",
)

def client_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``settings`` that :class:`CCClient` takes, unknown keys dropped."""
    return {k: settings[k] for k in OPTION_NAMES if k in settings and settings[k] is not None}


_RATE_REPORTED: set[str] = set()


class HTTPStatusError(CcrawlError):
    """The server answered with a status that retrying will not change (404, 403, 416, ...)."""

    def __init__(self, url: str, status: int, reason: str = "") -> None:
        self.url = url
        self.status = status
        super().__init__(f"{url}: HTTP {status}{(' ' + reason) if reason else ''}")


class ShortRead(InputError):
    """A range runs past the end of the file: the server sent every byte there is, and no more.

    Retrying cannot change that, so it is the location's error, not the network's. ``data`` holds
    the bytes that exist (from the range's start to the end of the file) and ``size`` the file's
    size, so a caller that read several records in one range keeps the ones that fit.
    """

    def __init__(self, url: str, start: int, length: int, size: int, data: bytes) -> None:
        self.url, self.start, self.length, self.size, self.data = url, start, length, size, data
        super().__init__(f"{url}: the file ends at byte {size}, before the end of the range "
                         f"{start}+{length} (is the length right?)")


class TruncatedBody(Exception):
    """Fewer bytes arrived than the server promised; retried like a dropped connection."""


@dataclass(slots=True)
class Response:
    """A finished request: status, headers (lower-cased names) and the whole body."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(slots=True)
class CachedFetch:
    """A body that may have come from the cache: ``age`` seconds old, ``stale`` when the fetch failed."""

    body: bytes
    age: float
    from_cache: bool
    stale: bool = False
    error: CcrawlError | None = None


@dataclass(slots=True)
class ClientStats:
    """What a run cost the servers: requests, retries, body bytes read."""

    requests: int = 0
    retries: int = 0
    bytes_read: int = 0
    by_host: dict[str, int] = field(default_factory=dict)


class _Retryable(Exception):
    """One failed attempt worth another: ``transport`` when no HTTP status came back at all.

    ``reset``: the host reset the connection before any byte of an answer. That is retried once, at
    once (a kept-alive connection the server had closed in the meantime looks the same), and a second
    one fails the request (exit 8) instead of backing off.
    """

    def __init__(self, message: str, *, transport: bool, retry_after: float | None = None,
                 reset: bool = False) -> None:
        super().__init__(message)
        self.transport = transport
        self.retry_after = retry_after
        self.reset = reset


def _host(url: str) -> str:
    """``host[:port]`` of ``url`` for a message: an endpoint's ``user:password@`` is not part of it."""
    from urllib.parse import urlsplit

    netloc = urlsplit(url).netloc
    return netloc.rpartition("@")[2] or url


def _raise_if_name_not_known(url: str, exc: BaseException) -> None:
    """A name that does not resolve fails at once with exit 8: no retry will make it resolve."""
    if name_not_known(exc):
        host = urlsplit_host(url)
        raise Unreachable(
            f"cannot reach {url}: the name {host} does not resolve (no DNS answer for it); "
            "check the network, or point the endpoint setting at a mirror"
        ) from exc


def _os_errno_in(exc: BaseException, codes: set[int]) -> bool:
    """True when ``exc`` or what caused it is an OSError whose errno is one of ``codes``."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in codes:
            return True
        cur = getattr(cur, "os_error", None) or cur.__cause__ or cur.__context__
    return False


def connection_refused(exc: BaseException) -> bool:
    """True when ``exc`` (or its cause) is ECONNREFUSED: nothing listens there, an answer and not a blip."""
    return _os_errno_in(exc, {errno.ECONNREFUSED})


def _raise_if_refused(url: str, exc: BaseException) -> None:
    """A refused connection fails at once with exit 8, as an unknown name does: a retry finds the port as shut."""
    if connection_refused(exc):
        raise Unreachable(
            f"cannot reach {url}: {_host(url)} refused the connection (nothing listens on that port); "
            "check the endpoint setting, or that the mirror is running"
        ) from exc


def _transport_failure(url: str, exc: BaseException, *, answered: bool) -> _Retryable:
    """The retryable failure for a transport error, after the non-transient ones were raised.

    ``answered``: the response's headers had arrived, so a reset now is a cut mid-transfer (retried).
    """
    _raise_if_name_not_known(url, exc)
    _raise_if_refused(url, exc)
    reset = not answered and _os_errno_in(exc, {errno.ECONNRESET})
    return _Retryable(f"{type(exc).__name__}: {exc}".rstrip(": "), transport=True, reset=reset)


def urlsplit_host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or url


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After") or headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


def _check_end_of_file(url: str, content_range: str, asked: int, body: bytes) -> None:
    """Raise :class:`ShortRead` when a short 206 is whole and ends at the end of the file."""
    m = _CONTENT_RANGE.fullmatch(content_range.strip())
    if m is None:
        return
    first, last, size = (int(g) for g in m.groups())
    if last + 1 == size and len(body) == size - first and first + asked > size:
        raise ShortRead(url, first, asked, size, body)


#: c-ares answers (aiodns, aiohttp's resolver when it is installed) that say the name does not exist
_ARES_NO_NAME = {1, 4}  # ARES_ENODATA, ARES_ENOTFOUND
#: getaddrinfo's (the threaded resolver's) answers that say the same
_EAI_NO_NAME = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, n)}


def name_not_known(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) is a DNS answer that the name does not exist.

    That is an answer, not a transient failure: retrying it only makes an offline machine wait. A
    resolver that timed out or failed (EAI_AGAIN, SERVFAIL) is transient and is retried.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, socket.gaierror):
            return cur.errno in _EAI_NO_NAME
        if type(cur).__module__.startswith("aiodns") and cur.args and cur.args[0] in _ARES_NO_NAME:
            return True
        cur = getattr(cur, "os_error", None) or cur.__cause__ or cur.__context__
    return False


class CCClient:
    """Polite, retrying, rate-limited HTTP access to Common Crawl's hosts (or a mirror of them)."""

    def __init__(
        self,
        *,
        collinfo_endpoint: str = DEFAULT_COLLINFO_ENDPOINT,
        data_endpoint: str = DEFAULT_DATA_ENDPOINT,
        cdx_endpoint: str = DEFAULT_CDX_ENDPOINT,
        s3_endpoint: str = DEFAULT_S3_ENDPOINT,
        source: str = "https",
        rate: float | str = 0.0,
        global_rate: float | str = 0.2,
        data_dir: Path | str | None = None,
        cache_dir: Path | str | None = None,
        no_cache: bool = False,
        timeout: float | str = 0.0,
        retries: int = 3,
        backoff: float | str = 0.5,
        backoff_max: float | str = 30.0,
        user_agent: str = DEFAULT_USER_AGENT,
        max_connections: int = 64,
        verbose: int = 0,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        if source not in ("https", "s3"):
            raise UsageError(f"--source {source!r}: use https or s3")
        if int(retries) < 0:
            raise UsageError(f"--retries {retries}: must be 0 or more")
        self.collinfo_endpoint = collinfo_endpoint
        self.data_endpoint = data_endpoint.rstrip("/")
        self.cdx_endpoint = cdx_endpoint.rstrip("/")
        self.s3_endpoint = s3_endpoint.rstrip("/")
        self.source = source
        self.timeout = seconds(timeout, name="--timeout")
        self.retries = int(retries)
        self.backoff = seconds(backoff, name="backoff")
        self.backoff_max = seconds(backoff_max, name="backoff_max")
        self.user_agent = user_agent
        self.max_connections = max(1, int(max_connections))
        self.verbose = int(verbose)
        self._warn = warn or (lambda msg: print(msg, file=sys.stderr, flush=True))
        data_path = Path(data_dir).expanduser() if data_dir else None
        cache_path = Path(cache_dir).expanduser() if cache_dir else (data_path / "cache" if data_path else None)
        self.cache = DiskCache(cache_path, enabled=not no_cache)
        self.limiter = RateLimiter(
            rate=seconds(rate, name="--rate"),
            global_rate=seconds(global_rate, name="--global-rate"),
            lock_path=data_path / "ratelimit.lock" if data_path else None,
            warn=self._warn,
        )
        self.stats = ClientStats()
        self.concurrency = AdaptiveConcurrency(self.max_connections)
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def of(cls, options: ClientOptions | None, *, warn: Callable[[str], None] | None = None) -> CCClient:
        """A client configured by ``options`` (None: every default), its warnings to ``warn``."""
        o = options or ClientOptions()
        return cls(collinfo_endpoint=o.collinfo_endpoint, data_endpoint=o.data_endpoint, cdx_endpoint=o.cdx_endpoint,
                   s3_endpoint=o.s3_endpoint, source=o.source, rate=o.rate, global_rate=o.global_rate,
                   data_dir=o.data_dir, cache_dir=o.cache_dir, no_cache=o.no_cache, timeout=o.timeout,
                   retries=o.retries, backoff=o.backoff, backoff_max=o.backoff_max, user_agent=o.user_agent,
                   max_connections=o.max_connections, verbose=o.verbose, warn=warn)

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> CCClient:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def open(self) -> None:
        import aiohttp

        if self._session is not None:
            return
        timeout = aiohttp.ClientTimeout(
            total=self.timeout or None, sock_connect=min(self.timeout or 30.0, 30.0), sock_read=self.timeout or 120.0
        )
        connector = aiohttp.TCPConnector(limit=self.max_connections, limit_per_host=self.max_connections)
        self._session = aiohttp.ClientSession(
            timeout=timeout, connector=connector, headers={"User-Agent": self.user_agent}, auto_decompress=True
        )
        if hasattr(self._session, "_retry_connection"):
            # aiohttp silently re-sends a request whose keep-alive connection dropped, outside our
            # pacing and our count; every retry here goes through the limiter and is counted.
            self._session._retry_connection = False
        if self.verbose > 0:
            line = self.limiter.describe()
            # Commands open several clients; the rate in force is said once per process.
            if line not in _RATE_REPORTED:
                _RATE_REPORTED.add(line)
                self._warn(line)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        self.limiter.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("CCClient used outside `async with`")
        return self._session

    # -- addresses -------------------------------------------------------------------------------

    @property
    def data_base(self) -> str:
        """Where bulk files are read from: ``data_endpoint``, or ``s3_endpoint`` with ``source="s3"``."""
        return self.s3_endpoint if self.source == "s3" else self.data_endpoint

    def data_url(self, path: str) -> str:
        """The full URL of a bucket path (``crawl-data/...``); a full URL is returned unchanged."""
        if path.startswith(("http://", "https://")):
            return path
        if path.startswith("s3://commoncrawl/"):
            path = path[len("s3://commoncrawl/") :]
        return f"{self.data_base}/{path.lstrip('/')}"

    def cdx_url(self, crawl: str) -> str:
        """The CDX API endpoint of one crawl, e.g. ``https://index.commoncrawl.org/CC-MAIN-2024-10-index``."""
        return f"{self.cdx_endpoint}/{crawl}-index"

    def describe_rate(self) -> str:
        return self.limiter.describe()

    # -- requests --------------------------------------------------------------------------------

    def retry_delay(self, attempt: int, retry_after: float | None) -> float:
        base = min(self.backoff_max, self.backoff * float(2**attempt))
        # Equal jitter: never less than half the nominal wait, so retries stay polite, but
        # several processes hitting the same 503 do not come back in lock step.
        delay = base / 2 + random.uniform(0, base / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max))
        return delay

    def _gate(self, gated: bool) -> Any:
        return self.concurrency if gated else NO_GATE

    async def _with_retries(self, url: str, attempt_fn: Callable[[], Awaitable[T]], *, gated: bool = True) -> T:
        failures: list[_Retryable] = []
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retries += 1
                # a first reset before any byte is tried again at once (see _Retryable)
                wait = 0.0 if failures[-1].reset else self.retry_delay(attempt - 1, failures[-1].retry_after)
                if wait >= 1.0:
                    # a wait a person notices is said, so a slow command does not look hung
                    self._warn(f"ccrawl: {_host(url)}: {failures[-1]}; retrying ({attempt}/{self.retries}) "
                               f"in {wait:.0f} s")
                await asyncio.sleep(wait)
            async with self._gate(gated):
                await self.limiter.acquire()
                self.stats.requests += 1
                try:
                    result = await attempt_fn()
                except _Retryable as exc:
                    if exc.reset and failures and failures[-1].reset:
                        raise Unreachable(
                            f"cannot reach {url}: {_host(url)} reset the connection before answering, "
                            f"{len(failures) + 1} times in a row; check the endpoint setting, or that the mirror "
                            "is running"
                        ) from exc
                    failures.append(exc)
                    if not exc.transport:
                        self.concurrency.slow_down()
                    continue
            self.concurrency.went_well()
            return result
        attempts = len(failures)
        last = failures[-1]
        if all(f.transport for f in failures):
            raise Unreachable(
                f"cannot reach {url} ({attempts} attempt{'s' * (attempts > 1)}): {last}; "
                "check the network, or point the endpoint setting at a mirror"
            )
        raise TemporaryFailure(
            f"{url}: still failing after {attempts} attempt{'s' * (attempts > 1)} ({last}); "
            "run it again later or raise --retries"
        )

    async def _request(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        expect_length: int | None = None,
        accept: tuple[int, ...] = (200,),
    ) -> Response:
        import aiohttp

        answered = False
        try:
            async with self.session.get(url, params=params, headers=headers) as resp:
                answered = True
                status = resp.status
                hdrs = {k.lower(): v for k, v in resp.headers.items()}
                if status == 429 or status >= 500:
                    await resp.read()
                    raise _Retryable(f"HTTP {status}", transport=False, retry_after=_retry_after(hdrs))
                if status not in accept:
                    raise HTTPStatusError(str(resp.url), status, resp.reason or "")
                body = await resp.read()
        except (TimeoutError, aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
            raise _transport_failure(url, exc, answered=answered) from exc
        self._count(url, len(body))
        declared = hdrs.get("content-length")
        unencoded = "content-encoding" not in hdrs
        if declared is not None and unencoded and declared.isdigit() and int(declared) != len(body):
            raise _Retryable(f"truncated body: {len(body)} of {declared} bytes", transport=True)
        if expect_length is not None and status == 206 and len(body) != expect_length:
            _check_end_of_file(str(url), hdrs.get("content-range", ""), expect_length, body)
            raise _Retryable(f"truncated range: {len(body)} of {expect_length} bytes", transport=True)
        return Response(str(url), status, hdrs, body)

    def _count(self, url: str, n: int) -> None:
        from urllib.parse import urlsplit

        self.stats.bytes_read += n
        host = urlsplit(url).netloc
        self.stats.by_host[host] = self.stats.by_host.get(host, 0) + n

    async def get(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        accept: tuple[int, ...] = (200,),
    ) -> Response:
        """GET ``url`` with pacing and retries; statuses outside ``accept`` raise :class:`HTTPStatusError`."""
        return await self._with_retries(
            url, lambda: self._request(url, params=params, headers=headers, accept=accept)
        )

    async def get_range(self, url: str, start: int, length: int) -> bytes:
        """Exactly ``length`` bytes of ``url`` from ``start`` (a short read is retried, then an error)."""
        if start < 0 or length <= 0:
            raise UsageError(f"a range needs offset >= 0 and length > 0, got offset {start} length {length}")
        headers = {"Range": f"bytes={start}-{start + length - 1}", "Accept-Encoding": "identity"}

        async def attempt() -> bytes:
            resp = await self._request(url, headers=headers, expect_length=length, accept=(200, 206))
            if resp.status == 200:
                # A server that ignores Range sends the whole file; cut our slice out of it.
                body = resp.body[start : start + length]
                if len(body) != length:
                    raise HTTPStatusError(url, 416, f"the file ends before byte {start + length}")
                return body
            return resp.body

        return await self._with_retries(url, attempt)

    async def get_cached(
        self,
        url: str,
        *,
        max_age: float | None,
        stale_ok: bool = True,
        validate: Callable[[bytes], object] | None = None,
    ) -> CachedFetch:
        """The body of ``url`` from the cache when fresher than ``max_age``, else fetched and stored.

        When the fetch fails and ``stale_ok`` holds, a cached copy of any age is returned with
        ``stale=True`` and the error that forced it, so the caller can say so on stderr.
        ``validate`` (raising a CcrawlError) keeps a body that came back wrong, an HTML error page
        served with 200 say, out of the cache and counts it as a failed fetch.
        """
        hit = self.cache.get(url, max_age=max_age)
        if hit is not None:
            return CachedFetch(hit.body, hit.age, from_cache=True)
        try:
            resp = await self.get(url)
            if validate is not None:
                validate(resp.body)
        except CcrawlError as exc:
            old = self.cache.get(url) if stale_ok else None
            if old is None:
                raise
            return CachedFetch(old.body, old.age, from_cache=True, stale=True, error=exc)
        self.cache.put(url, resp.body)
        return CachedFetch(resp.body, 0.0, from_cache=False)

    @asynccontextmanager
    async def stream(self, url: str, *, start: int = 0) -> AsyncIterator[Stream]:
        """Open ``url`` for streaming from byte ``start``; opening is retried, reading is the caller's.

        A caller that loses the connection part way reopens with ``start`` at the bytes it has,
        which is how :mod:`ccrawl.commoncrawl.download` resumes.
        """
        import aiohttp

        headers = {"Accept-Encoding": "identity"}
        if start > 0:
            headers["Range"] = f"bytes={start}-"

        async def attempt() -> aiohttp.ClientResponse:
            try:
                resp = await self.session.get(url, headers=headers)
            except (TimeoutError, aiohttp.ClientConnectionError) as exc:
                raise _transport_failure(url, exc, answered=False) from exc
            if resp.status == 429 or resp.status >= 500:
                resp.release()
                raise _Retryable(f"HTTP {resp.status}", transport=False, retry_after=_retry_after(resp.headers))
            if resp.status not in (200, 206) or (start > 0 and resp.status != 206):
                resp.release()
                raise HTTPStatusError(url, resp.status, resp.reason or "")
            return resp

        resp = await self._with_retries(url, attempt, gated=False)
        try:
            yield Stream(self, url, resp, start)
        finally:
            resp.release()


class Stream:
    """An open streaming response: where it starts, how long the whole file is, and its chunks."""

    def __init__(self, client: CCClient, url: str, resp: aiohttp.ClientResponse, start: int) -> None:
        self._client = client
        self.url = url
        self._resp = resp
        self.start = start
        self.status = resp.status

    @property
    def total_size(self) -> int | None:
        """The size of the whole file, from Content-Range or Content-Length, when the server says."""
        content_range = self._resp.headers.get("Content-Range", "")
        if "/" in content_range and content_range.rsplit("/", 1)[1].isdigit():
            return int(content_range.rsplit("/", 1)[1])
        length = self._resp.headers.get("Content-Length")
        if length is not None and length.isdigit():
            return self.start + int(length)
        return None

    async def chunks(self, size: int = 1 << 20) -> AsyncIterator[bytes]:
        """The body in chunks; a dropped connection raises :class:`TruncatedBody` after what arrived."""
        import aiohttp

        try:
            async for chunk in self._resp.content.iter_chunked(size):
                self._client._count(self.url, len(chunk))
                yield chunk
        except (TimeoutError, aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
            raise TruncatedBody(f"{self.url}: connection lost mid-body ({type(exc).__name__})") from exc


# -- sync bridges for commands that are not async ------------------------------------------------


def _client(typed: ClientOptions | None, warn: Callable[[str], None] | None, options: dict[str, Any]) -> CCClient:
    if typed is not None:
        return CCClient.of(typed, warn=warn)
    if warn is not None:
        options = {**options, "warn": warn}
    return CCClient(**options)


def run(fn: Callable[[CCClient], Awaitable[T]], typed: ClientOptions | None = None, /, *,
        warn: Callable[[str], None] | None = None, **options: Any) -> T:
    """Open a client configured by ``typed`` (or the keyword ``options``), await ``fn(client)`` and close it."""

    async def main() -> T:
        async with _client(typed, warn, options) as client:
            return await fn(client)

    return asyncio.run(main())


def iterate(fn: Callable[[CCClient], AsyncIterator[T]], typed: ClientOptions | None = None, /, *,
            warn: Callable[[str], None] | None = None, **options: Any) -> Iterator[T]:
    """Drive the async generator ``fn(client)`` from synchronous code, one item at a time.

    The event loop runs only while the next item is awaited, so a consumer that stops early
    (``-n``) closes the generator and the client cleanly, and nothing runs behind its back.
    """
    loop = asyncio.new_event_loop()
    client = _client(typed, warn, options)
    agen: AsyncIterator[T] | None = None
    try:
        loop.run_until_complete(client.open())
        agen = fn(client)
        while True:
            try:
                item = loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
            yield item
    finally:
        try:
            if agen is not None and hasattr(agen, "aclose"):
                # a signal that lands mid-step leaves the generator running: it can only be dropped
                with contextlib.suppress(RuntimeError):
                    loop.run_until_complete(agen.aclose())
            loop.run_until_complete(client.close())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
