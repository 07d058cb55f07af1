"""A small real HTTP server on loopback serving the fixture pages, for the live content tests.

Any host name is answered (point ``*.example`` at 127.0.0.1 with ``--resolve``/``FetchConfig.resolve``):

    /page/NAME        the page ``tests.content.pages.NAME`` as text/html
    /gzip/NAME        the same, gzip content coding
    /corrupt-gzip     Content-Encoding: gzip over bytes that are not gzip
    /slow/N           an article titled "slow N" after 0.2 s; the server counts requests in flight
    /redirect         302 to /page/ARTICLE
    /text             text/plain
    /status/CODE      that status
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import threading
from collections import Counter
from typing import Any

from aiohttp import web

from tests.content import pages


class FixtureServer:
    """``with FixtureServer() as srv: srv.url("a.example", "/page/ARTICLE")``."""

    def __init__(self) -> None:
        self.port = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.requests: Counter[str] = Counter()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="content-fixtures", daemon=True)
        self._runner: web.AppRunner | None = None

    @property
    def resolve(self) -> dict[str, str]:
        return {"*.example": "127.0.0.1"}

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/page/{name}", self._page)
        app.router.add_get("/gzip/{name}", self._gzip)
        app.router.add_get("/corrupt-gzip", self._corrupt)
        app.router.add_get("/slow/{n}", self._slow)
        app.router.add_get("/redirect", self._redirect)
        app.router.add_get("/text", self._text)
        app.router.add_get("/status/{code}", self._status)
        return app

    async def _count(self, request: web.Request) -> None:
        self.requests[request.path] += 1

    async def _page(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        html = getattr(pages, request.match_info["name"], None)
        if not isinstance(html, str):
            raise web.HTTPNotFound()
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def _gzip(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        html = getattr(pages, request.match_info["name"])
        body = gzip.compress(html.encode("utf-8"))
        return web.Response(body=body, headers={"Content-Type": "text/html; charset=utf-8", "Content-Encoding": "gzip"})

    async def _corrupt(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        return web.Response(
            body=b"this is not gzip at all" * 10, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
        )

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.2)
        finally:
            self.in_flight -= 1
        html = pages.article(title=f"slow {request.match_info['n']}")
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def _redirect(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        raise web.HTTPFound("/page/ARTICLE")

    async def _text(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        return web.Response(text="plain words", content_type="text/plain")

    async def _status(self, request: web.Request) -> web.StreamResponse:
        await self._count(request)
        return web.Response(status=int(request.match_info["code"]), text="no", content_type="text/html")

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server: Any = site._server  # the bound port of a port-0 site
        self.port = server.sockets[0].getsockname()[1]

    def __enter__(self) -> FixtureServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
