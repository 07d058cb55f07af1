"""The synthetic web's app and servers: pages, robots.txt variants, ports, the URL catalog."""

from __future__ import annotations

import asyncio
import collections
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from ccrawl.jsontypes import Record
from ccrawl.testing.synthweb.dnsserver import DnsServer
from ccrawl.testing.synthweb.faults import FaultEndpoints, request_host
from ccrawl.testing.synthweb.pages import (
    DOMAIN,
    LAST_MODIFIED,
    ROBOTS_DEFAULT,
    etag_for,
    not_modified,
    page_html,
    site_host,
)


@dataclass
class SynthStats:
    """What the synthetic web saw; tests read it to check what the fetcher really sent."""

    requests: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    log: collections.deque[tuple[float, str, str, dict[str, str]]] = field(
        default_factory=lambda: collections.deque(maxlen=200_000)
    )
    """(monotonic time, host, path, selected request headers) per request, newest last."""
    dns_queries: int = 0
    dns_in_flight: int = 0
    dns_peak_in_flight: int = 0

    def times(self, host: str, path: str | None = None) -> list[float]:
        return [t for t, h, p, _ in self.log if h == host and (path is None or p == path)]


class SynthWeb(FaultEndpoints):
    """The app, its ports and its catalog. ``async with SynthWeb(...) as web:`` starts everything."""

    def __init__(
        self,
        *,
        hosts: int = 100,
        pages: int = 10,
        page_bytes: int = 24_000,
        crawl_delay: float = 0.3,
        robots_stall: float = 30.0,
        dns_delay: float = 0.0,
        bind: str = "127.0.0.1",
        port: int = 0,
        link_port: bool = False,
    ) -> None:
        self.hosts, self.pages, self.page_bytes = hosts, pages, page_bytes
        self.crawl_delay, self.robots_stall, self.dns_delay = crawl_delay, robots_stall, dns_delay
        self.bind, self.want_port = bind, port
        self.link_port = link_port
        """True: links to other sites carry this server's port (a discovery crawl on loopback follows them)."""
        self.stats = SynthStats()
        self.port = self.tls_port = self.refused_port = self.dns_port = 0
        self._runner: web.AppRunner | None = None
        self._dns_transport: asyncio.DatagramTransport | None = None
        self._page_cache: dict[tuple[str, int | None], bytes] = {}

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> SynthWeb:
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.bind, self.want_port, backlog=1024)
        await site.start()
        self.port = _bound_port(site)
        tls = _self_signed_context()
        if tls is not None:
            tls_site = web.TCPSite(self._runner, self.bind, 0, ssl_context=tls)
            await tls_site.start()
            self.tls_port = _bound_port(tls_site)
        self.refused_port = _closed_port(self.bind)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(lambda: DnsServer(self), local_addr=(self.bind, 0))
        self._dns_transport = transport
        self.dns_port = transport.get_extra_info("sockname")[1]
        return self

    async def stop(self) -> None:
        if self._dns_transport is not None:
            self._dns_transport.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> SynthWeb:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- how a client reaches it --------------------------------------------------------------

    @property
    def resolve(self) -> dict[str, str]:
        """The override table for ``FetchConfig.resolve``: every ``.test`` name to this server."""
        return {f"*.{DOMAIN}": self.bind}

    @property
    def nameservers(self) -> tuple[str, ...]:
        """For ``FetchConfig.nameservers``: this web's DNS server (answers ``.test``, NXDOMAIN else)."""
        return (f"{self.bind}:{self.dns_port}",)

    def url(self, host: str, path: str = "/", *, tls: bool = False) -> str:
        return f"https://{host}:{self.tls_port}{path}" if tls else f"http://{host}:{self.port}{path}"

    def page_urls(self) -> list[str]:
        """Every page of every site, host-interleaved (what a work list of URLs looks like)."""
        return [self.url(site_host(h), f"/p/{n}") for n in range(self.pages) for h in range(self.hosts)]

    def home_urls(self) -> list[str]:
        return [self.url(site_host(h)) for h in range(self.hosts)]

    def catalog(self) -> dict[str, list[str]]:
        """One or more URLs of every kind, by kind; failures are named by the error they cause."""
        u, h = self.url, site_host(0)
        kinds: dict[str, list[str]] = {
            "page": self.page_urls(),
            "home": self.home_urls(),
            "slow-ttfb": [u(h, "/fault/slow-ttfb?s=60")],
            "slow-body": [u(h, "/fault/slow-body?s=60")],
            "reset": [u(h, "/fault/reset")],
            "reset-mid-body": [u(h, "/fault/reset-mid-body")],
            "refused": [f"http://{h}:{self.refused_port}/"],
            "unknown-host": ["http://no-such-host.invalid/", f"http://lapsed.invalid:{self.port}/"],
            "redirect-chain": [u(h, "/fault/redirect/3")],
            "redirect-too-long": [u(h, "/fault/redirect/9")],
            "redirect-loop": [u(h, "/fault/loop/a")],
            "redirect-cross-host": [u(h, "/fault/redirect-cross")],
            "redirect-self": [u(h, "/fault/self-redirect")],
            "redirect-into-disallowed": [u(h, "/fault/redirect-private")],
            "not-modified": [u(h, "/p/0")],
            "robots-disallow": [u("rdeny-0.test", "/p/0"), u(h, "/private/x")],
            "robots-5xx": [u("r5xx-0.test", "/p/0")],
            "robots-timeout": [u("rslow-0.test", "/p/0")],
            "robots-crawl-delay": [u("rdelay-0.test", f"/p/{n}") for n in range(3)],
            "robots-404": [u("r404-0.test", "/p/0")],
            "robots-429": [u("r429-0.test", "/p/0")],
            "robots-redirect-loop": [u("rloop-0.test", "/p/0")],
            "encoding": [u(h, f"/fault/encoding/{c}") for c in ("gzip", "br", "deflate", "zstd")],
            "big-body": [u(h, "/fault/big?mb=50")],
            "broken-chunked": [u(h, "/fault/broken-chunked")],
            "short-body": [u(h, "/fault/short-body")],
            "non-html": [u(h, "/fault/pdf"), u(h, "/fault/json")],
            "huge-header": [u(h, "/fault/huge-header?kb=100")],
            "many-headers": [u(h, "/fault/many-headers?n=300")],
            "status": [u(h, f"/fault/status/{c}") for c in (404, 410, 500, 503)],
        }
        if self.tls_port:
            kinds["tls-self-signed"] = [u(h, "/p/0", tls=True)]
        kinds["tls-plain-port"] = [f"https://{h}:{self.port}/p/0"]
        return kinds

    def info(self) -> Record:
        return {
            "port": self.port,
            "tls_port": self.tls_port,
            "refused_port": self.refused_port,
            "dns": self.nameservers[0],
            "resolve": self.resolve,
            "hosts": self.hosts,
            "pages": self.pages,
        }

    # -- the app ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        add = app.router.add_get
        add("/robots.txt", self._robots)
        add("/robots-real.txt", self._robots_real)
        add("/", self._page)
        add("/p/{n:\\d+}", self._page)
        add("/p/{n:\\d+}.html", self._page)  # the benchmark web's paths (bench/web.py), for its aiohttp fallback
        add("/private/{rest:.*}", self._page)
        add("/_synthweb/stats", self._stats_json)
        self.add_fault_routes(app)
        return app

    @web.middleware
    async def _record(self, request: web.Request,
                      handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        host = (request.host or "").split(":")[0].lower()
        keep = ("If-None-Match", "If-Modified-Since", "Accept-Encoding", "User-Agent")
        seen = {k: request.headers[k] for k in keep if k in request.headers}
        self.stats.requests[(host, request.path)] += 1
        self.stats.log.append((time.monotonic(), host, request.path, seen))
        response: web.StreamResponse = await handler(request)
        return response

    async def _robots(self, request: web.Request) -> web.StreamResponse:
        variant = request_host(request).split("-", 1)[0]
        if variant == "r404":
            raise web.HTTPNotFound()
        if variant == "r5xx":
            raise web.HTTPServiceUnavailable()
        if variant == "r429":
            raise web.HTTPTooManyRequests()
        if variant == "rslow":
            await asyncio.sleep(self.robots_stall)
        if variant == "rredirect":
            raise web.HTTPMovedPermanently("/robots-real.txt")
        if variant == "rloop":
            raise web.HTTPMovedPermanently("/robots.txt")
        return await self._robots_real(request)

    async def _robots_real(self, request: web.Request) -> web.StreamResponse:
        variant = request_host(request).split("-", 1)[0]
        if variant == "rdeny":
            text = "User-agent: *\nDisallow: /\n"
        elif variant == "rdelay":
            text = f"User-agent: *\nCrawl-delay: {self.crawl_delay:g}\nDisallow: /private/\n"
        else:
            text = ROBOTS_DEFAULT
        return web.Response(text=text, content_type="text/plain")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        host = request_host(request)
        n = int(request.match_info["n"]) if "n" in request.match_info else None
        etag = etag_for(host, request.path)
        headers = {"ETag": etag, "Last-Modified": LAST_MODIFIED, "Cache-Control": "max-age=60"}
        if not_modified(request, etag):
            return web.Response(status=304, headers=headers)
        key = (host, n)
        body = self._page_cache.get(key)
        if body is None:
            body = page_html(
                host, n, hosts=self.hosts, pages=self.pages, target_bytes=self.page_bytes,
                link_port=self.port if self.link_port else None,
            ).encode()
            if len(self._page_cache) < 20_000:
                self._page_cache[key] = body
        return web.Response(body=body, content_type="text/html", charset="utf-8", headers=headers)

    async def _stats_json(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"requests": sum(self.stats.requests.values()), "dns": self.stats.dns_queries})


def _bound_port(site: web.TCPSite) -> int:
    server = site._server  # aiohttp keeps the listening server here; port 0 needs the real one
    assert server is not None
    sockets = getattr(server, "sockets", None)
    assert sockets
    return int(sockets[0].getsockname()[1])


def _closed_port(bind: str) -> int:
    """A port nothing listens on: bound, then closed, so connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind((bind, 0))
        return int(sock.getsockname()[1])


def _self_signed_context() -> ssl.SSLContext | None:
    """A server context with a certificate for ``*.test`` from a throwaway CA (``trustme``)."""
    try:
        import trustme
    except ImportError:
        return None
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(f"*.{DOMAIN}", "127.0.0.1").configure_cert(context)
    return context
