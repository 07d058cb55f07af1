"""The Fetcher: one per fetch process, hundreds of concurrent fetches, each ending as a FetchResult.

A fetch goes: robots.txt verdict (when on) -> the host's politeness clock and a concurrency slot
-> the request, following redirects by hand (so loops and hop limits are ours to report) -> the
body, read up to the cap with its content coding kept. Network failures become result rows with
an error class; only cancellation and programming errors propagate.
"""

from __future__ import annotations

import asyncio
import functools
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast
from urllib.parse import urlsplit

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ClientRequest
from aiohttp.connector import Connection
from aiohttp.tracing import Trace
from yarl import URL

from ccrawl.fetch.addresses import check_address, is_ip_literal
from ccrawl.fetch.classify import (
    CrawlDelayTooLong,
    RedirectLoop,
    RobotsDisallowed,
    RobotsUnreachable,
    TooManyRedirects,
    UnsupportedURL,
    classify,
    describe,
)
from ccrawl.fetch.config import DEFAULT_ACCEPT, FetchConfig
from ccrawl.fetch.dns import CachingResolver
from ccrawl.fetch.politeness import HostClock
from ccrawl.fetch.result import FetchResult, Phases, sha1_base32
from ccrawl.fetch.robots import RobotsCache
from ccrawl.fetch.stats import FetchStats, RecentFetches, RecentTracker
from ccrawl.fetch.trace import FetchTrace, current_trace

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_READ_CHUNK = 256 * 1024


class _PayloadErrorHandler(ResponseHandler):
    """aiohttp's response protocol, made to fail the body when the parser fails mid-body.

    aiohttp 3.14 closes the transport when its parser rejects bytes after the head has been
    handed out (a broken chunk-size line), but never sets the error on that response's body
    stream, so ``read()`` waits for the whole fetch timeout. Failing the body at once turns a
    30 s stall per broken page into an immediate ``other`` row. Covered by
    ``tests/fetch/test_faults.py::test_broken_chunked_encoding_is_an_other_row``.
    """

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        failure = self.exception()
        payload = getattr(self, "_payload", None)
        if failure is not None and payload is not None and not payload.is_eof() and payload.exception() is None:
            payload.set_exception(aiohttp.ClientPayloadError(f"Response payload is not completed: {failure}"))


class TimedConnector(aiohttp.TCPConnector):
    """A TCPConnector that charges connection set-up time and the peer IP to the current fetch,
    and refuses IP literals that are not public unless allowed (names: :class:`CachingResolver`)."""

    def __init__(self, *, allow_private: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._allow_private = allow_private
        factory = functools.partial(_PayloadErrorHandler, loop=self._loop)
        self._factory = cast("functools.partial[ResponseHandler]", factory)

    async def connect(self, req: ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout) -> Connection:
        host = req.url.host or ""
        if not self._allow_private and is_ip_literal(host):
            check_address(host, host)  # every hop comes through here: pages, redirects, robots.txt
        trace = current_trace.get()
        if trace is None:
            return await super().connect(req, traces, timeout)
        start = time.perf_counter()
        dns_before = trace.dns
        try:
            conn = await super().connect(req, traces, timeout)
        finally:
            trace.connect += (time.perf_counter() - start) - (trace.dns - dns_before)
        transport = conn.transport
        peer = transport.get_extra_info("peername") if transport is not None else None
        trace.peer = str(peer[0]) if peer else ""
        return conn


def raise_fd_limit() -> int:
    """Lift this process's soft open-files limit to the hard one; hundreds of sockets need it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            return soft
    return soft


def _parse_target(url: str) -> tuple[str, str]:
    """(lowercased host, '') for a fetchable URL, else (whatever host there is, what is wrong)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018  (raises ValueError on a port that is not a number in range)
    except ValueError as exc:
        return "", f"unparseable URL ({exc})"
    if parts.scheme not in ("http", "https") or not host:
        return host, "not an http(s) URL with a host"
    return host, ""


class Fetcher:
    """``async with Fetcher(config) as f: result = await f.fetch(url)``.

    One per process and event loop. ``fetch`` may be called from any number of tasks at once;
    ``config.concurrency`` bounds how many have a request on the wire, while tasks waiting for a
    host's clock or its robots.txt hold no slot. Callers bound how many tasks they start.
    """

    def __init__(self, config: FetchConfig | None = None) -> None:
        self.config = (config or FetchConfig()).validate()
        self._session: aiohttp.ClientSession | None = None
        self._resolver: CachingResolver | None = None
        self._robots: RobotsCache | None = None
        self._clock = HostClock()
        self._slots = asyncio.Semaphore(self.config.concurrency)
        self._stats = FetchStats()
        self._recent = RecentTracker()
        self._opened = 0.0
        self._agent_token = ""

    async def __aenter__(self) -> Fetcher:
        cfg = self.config
        raise_fd_limit()
        self._resolver = CachingResolver(
            override=cfg.resolve,
            max_in_flight=cfg.dns_lookups,
            cache_size=cfg.dns_cache_size,
            ttl=cfg.dns_ttl,
            timeout=cfg.dns_timeout,
            nameservers=cfg.nameservers,
            family=socket.AF_UNSPEC if cfg.ipv6 else socket.AF_INET,
            allow_private=cfg.allow_private_addresses,
        )
        connector = TimedConnector(
            allow_private=cfg.allow_private_addresses,
            resolver=self._resolver,
            use_dns_cache=False,  # the resolver caches, with a bound
            limit=0,  # our semaphore bounds page fetches; robots.txt fetches must not queue behind them
            # The resolver decides which families a *name* gets (``ipv6``); an IP literal carries its
            # own, and a connector pinned to AF_INET fails an IPv6 literal with an AssertionError.
            family=socket.AF_UNSPEC,
            ssl=cfg.verify_tls,  # True: verify with the default context; False: accept any certificate
            keepalive_timeout=cfg.keepalive_timeout,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,  # the body is stored as served, content coding kept
            timeout=aiohttp.ClientTimeout(total=None),  # our own asyncio.timeout covers redirects too
            headers={
                "User-Agent": cfg.user_agent,
                "Accept": DEFAULT_ACCEPT,
                "Accept-Encoding": cfg.accept_encoding,
            },
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            max_field_size=cfg.max_header_size,
            max_line_size=cfg.max_header_size,
            max_headers=cfg.max_headers,
        )
        if cfg.robots:
            self._robots = RobotsCache(
                self._session,
                user_agent=cfg.user_agent,
                timeout=cfg.robots_timeout,
                retries=cfg.robots_retries,
                ttl=cfg.robots_ttl,
                unreachable_ttl=cfg.robots_unreachable_ttl,
                max_entries=cfg.robots_cache_size,
            )
            self._agent_token = self._robots.agent
        self._opened = time.monotonic()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    async def fetch(
        self,
        url: str,
        *,
        etag: str = "",
        last_modified: str = "",
        paced: bool = False,
        on_start: Callable[[], None] | None = None,
    ) -> FetchResult:
        """Fetch ``url`` once; the validators, when given, make it a conditional request.

        ``paced=True`` says the caller spaces requests to a host itself (the recrawl's host-ready
        scheduler): the host clock is skipped, a slot is not. ``on_start`` is called the moment
        the request starts (right after ``fetched_at`` is stamped), so the caller's clock counts
        from the same instant as the row.
        """
        if self._session is None:
            raise RuntimeError("Fetcher used outside `async with`")
        host, problem = _parse_target(url)
        # Stamped now for rows that never send a request (skip, bad URL); re-stamped when one goes out.
        result = FetchResult(url=url, host=host, fetched_at=time.time_ns() // 1_000_000)
        phases = result.phases
        self._stats.started_fetches += 1
        try:
            if problem:
                raise UnsupportedURL(f"{problem}: {url!r}")
            # robots off: no coroutine to build and await per fetch
            delay = await self._robots_gate(url, phases) if self._robots is not None else self.config.delay
            waited = time.perf_counter()
            clock_wait = await self._clock.wait_turn(host, 0.0 if paced else delay, self._slots.acquire)
            phases.host_clock += clock_wait
            phases.slot += time.perf_counter() - waited - clock_wait
        except (RobotsDisallowed, RobotsUnreachable, CrawlDelayTooLong, UnsupportedURL) as exc:
            self._fail(result, exc)
            self._record(result)
            return result
        self._stats.enter()
        try:
            await self._fetch_on_slot(result, etag, last_modified, on_start)
        finally:
            self._slots.release()
            self._stats.leave()
        self._record(result)
        return result

    def _record(self, result: FetchResult) -> None:
        self._stats.record(result)
        self._recent.record(result)

    async def host_delay(self, url: str) -> float:
        """The spacing ``url``'s host asks for: ``config.delay``, or its robots.txt Crawl-delay when
        longer (robots on; fetches robots.txt once per host). A URL robots.txt refuses answers
        ``config.delay``: :meth:`fetch` turns it into a skip row without a request."""
        if self._robots is None:
            return self.config.delay
        start = time.perf_counter()
        try:
            verdict = await self._robots.verdict(url)
        finally:
            self._stats.phases.robots += time.perf_counter() - start
        crawl_delay = verdict.crawl_delay(self._agent_token)
        if crawl_delay > self.config.max_crawl_delay:
            return self.config.delay
        return max(self.config.delay, crawl_delay)

    async def _robots_gate(self, url: str, phases: Phases) -> float:
        """The host's delay, after checking robots.txt when it is on; raises to make a skip row."""
        if self._robots is None:
            return self.config.delay
        start = time.perf_counter()
        try:
            verdict = await self._robots.verdict(url)
        finally:
            phases.robots += time.perf_counter() - start
        if not verdict.can_fetch(url, self._agent_token):
            self._robots.stats.disallowed_urls += 1
            if verdict.failure is not None:
                raise RobotsUnreachable(verdict.detail, verdict.failure)
            raise RobotsDisallowed(verdict.detail or "disallowed by robots.txt")
        crawl_delay = verdict.crawl_delay(self._agent_token)
        if crawl_delay > self.config.max_crawl_delay:
            raise CrawlDelayTooLong(
                f"robots.txt asks for Crawl-delay {crawl_delay:g}s, above max_crawl_delay "
                f"{self.config.max_crawl_delay:g}s"
            )
        return max(self.config.delay, crawl_delay)

    async def _fetch_on_slot(
        self, result: FetchResult, etag: str, last_modified: str, on_start: Callable[[], None] | None = None
    ) -> None:
        trace = FetchTrace()
        token = current_trace.set(trace)
        result.fetched_at = time.time_ns() // 1_000_000
        if on_start is not None:
            on_start()
        start = time.perf_counter()
        head_at = 0.0
        try:
            async with asyncio.timeout(self.config.timeout):
                resp = await self._follow(result, etag, last_modified)
                head_at = time.perf_counter()
                try:
                    self._take_head(result, resp)
                    await self._read_body(result, resp)
                finally:
                    resp.release()
        except Exception as exc:  # every network failure is a row; the class comes from the type
            self._fail(result, exc)
        finally:
            current_trace.reset(token)
            end = time.perf_counter()
            phases = result.phases
            phases.dns += trace.dns
            phases.connect += max(0.0, trace.connect)
            if head_at:
                result.ttfb_ms = round((head_at - start) * 1000)
                phases.ttfb += max(0.0, head_at - start - trace.dns - trace.connect)
                phases.body += end - head_at
            else:
                phases.ttfb += max(0.0, end - start - trace.dns - trace.connect)
            result.fetch_duration_ms = round((end - start) * 1000)
            result.ip_address = trace.peer

    async def _follow(self, result: FetchResult, etag: str, last_modified: str) -> aiohttp.ClientResponse:
        """The final response of ``result.url``'s redirect chain, head read, body not yet."""
        assert self._session is not None
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        current = URL(result.url, encoded=False)
        seen = {str(current)}
        for hop in range(self.config.max_redirects + 1):
            resp = await self._session.get(current, headers=headers, allow_redirects=False)
            location = resp.headers.get("Location", "")
            if resp.status not in _REDIRECTS or not location or not self.config.follow_redirects:
                return resp
            resp.release()
            target = current.join(URL(location, encoded=False)).with_fragment(None)
            if target.scheme not in ("http", "https") or not target.host:
                raise UnsupportedURL(f"redirect to a non-http(s) URL: {location!r}")
            if str(target) in seen:
                raise RedirectLoop(f"redirect loop: {target} was already visited in this chain")
            if hop == self.config.max_redirects:
                raise TooManyRedirects(f"more than {self.config.max_redirects} redirects (next: {target})")
            seen.add(str(target))
            result.redirects.append(str(target))
            result.final_url = str(target)
            self._stats.redirects += 1
            if self._robots is not None:
                await self._robots_gate(str(target), result.phases)
            current = target
        raise TooManyRedirects(f"more than {self.config.max_redirects} redirects")  # pragma: no cover

    def _take_head(self, result: FetchResult, resp: aiohttp.ClientResponse) -> None:
        result.status = resp.status
        result.reason = resp.reason or ""
        result.http_version = f"{resp.version.major}.{resp.version.minor}" if resp.version else "1.1"
        result.resp_headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in resp.raw_headers]
        info = resp.request_info
        result.req_headers = list(info.headers.items())
        result.method = info.method
        result.request_target = info.url.raw_path_qs
        headers = resp.headers
        result.content_type = headers.get("Content-Type", "")
        result.etag = headers.get("ETag", "")
        result.last_modified = headers.get("Last-Modified", "")
        length = headers.get("Content-Length", "")
        result.declared_length = int(length) if length.isdigit() else -1
        result.unchanged = resp.status == 304

    async def _read_body(self, result: FetchResult, resp: aiohttp.ClientResponse) -> None:
        if result.unchanged:
            return  # a 304 stores no body and no digest; the earlier pass has them
        cap = self.config.max_body
        if 0 <= result.declared_length <= cap:
            body = await resp.read()
        else:
            chunks: list[bytes] = []
            size = 0
            while size <= cap:
                chunk = await resp.content.read(_READ_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            body = b"".join(chunks)
            if size > cap:
                body = body[:cap]
                result.body_truncated = True
                resp.close()  # do not drain the rest of an oversized body
        result.body = body
        result.digest = sha1_base32(body)

    @staticmethod
    def _fail(result: FetchResult, exc: BaseException) -> None:
        result.error = classify(exc)
        result.error_detail = describe(exc)
        # A failure row has no response to take a body, digest or headers from, even when the
        # head had arrived before the body failed (a reset or a timeout mid-body).
        result.status = 0
        result.reason = ""
        result.body = b""
        result.body_truncated = False
        result.declared_length = -1
        result.digest = ""
        result.resp_headers = []
        result.content_type = ""
        result.etag = ""
        result.last_modified = ""
        result.unchanged = False

    def recent(self) -> RecentFetches:
        """The slowest hosts and the failures since the last call (:meth:`RecentTracker.take`)."""
        return self._recent.take()

    def snapshot(self) -> FetchStats:
        """This Fetcher's counters now, with the resolver's and the robots cache's, as a copy."""
        out = self._stats.copy()
        out.elapsed_s = time.monotonic() - self._opened if self._opened else 0.0
        if self._resolver is not None:
            out.dns = replace(self._resolver.stats, cache_entries=self._resolver.cache_len())
        if self._robots is not None:
            out.robots = replace(self._robots.stats, cache_entries=len(self._robots))
        out.host_clock_entries = len(self._clock)
        return out

    def stats(self) -> dict[str, object]:
        """Counts and phase totals (plain data, JSON-ready): :meth:`snapshot` as a dict."""
        return self.snapshot().as_dict()
