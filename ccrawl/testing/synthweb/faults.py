"""The synthetic web's fault endpoints: slow, reset, redirect chains and loops, codings, huge and broken bodies."""

from __future__ import annotations

import asyncio
import gzip
import socket
import struct
import zlib
from collections.abc import Awaitable, Callable

from aiohttp import web

from ccrawl.testing.synthweb.pages import page_html, site_host


def request_host(request: web.Request) -> str:
    """The Host header's name, lowercased, without the port."""
    return (request.host or "").split(":")[0].lower()


def _rst(request: web.Request) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0), the way a crashed server looks."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _raw_close(request: web.Request, framing: bytes, body: bytes) -> None:
    """Write a hand-made 200 answer straight to the socket and close it: malformed on purpose."""
    transport = request.transport
    if transport is not None:
        transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + framing + b"\r\n\r\n" + body)
        transport.close()


def _compress(coding: str, data: bytes) -> bytes:
    if coding == "gzip":
        return gzip.compress(data, 6)
    if coding == "deflate":
        return zlib.compress(data, 6)  # zlib-wrapped, which is what "deflate" means in HTTP
    if coding == "br":
        import brotli

        return bytes(brotli.compress(data, quality=5))
    if coding == "zstd":
        from backports import zstd

        return zstd.compress(data)
    raise ValueError(coding)


class FaultEndpoints:
    """Handlers of ``/fault/...``, mixed into :class:`~ccrawl.testing.synthweb.app.SynthWeb`."""

    port: int
    hosts: int
    pages: int
    page_bytes: int
    _page: Callable[[web.Request], Awaitable[web.StreamResponse]]

    def add_fault_routes(self, app: web.Application) -> None:
        add = app.router.add_get
        add("/fault/slow-ttfb", self._slow_ttfb)
        add("/fault/slow-body", self._slow_body)
        add("/fault/reset", self._reset)
        add("/fault/reset-mid-body", self._reset_mid_body)
        add("/fault/redirect/{n:\\d+}", self._redirect)
        add("/fault/loop/{which}", self._loop)
        add("/fault/self-redirect", self._self_redirect)
        add("/fault/redirect-cross", self._redirect_cross)
        add("/fault/redirect-private", self._redirect_private)
        add("/fault/encoding/{coding}", self._encoding)
        add("/fault/big", self._big)
        add("/fault/big-chunked", self._big)
        add("/fault/broken-chunked", self._broken_chunked)
        add("/fault/short-body", self._short_body)
        add("/fault/pdf", self._pdf)
        add("/fault/json", self._json)
        add("/fault/status/{code:\\d+}", self._status)
        add("/fault/huge-header", self._huge_header)
        add("/fault/many-headers", self._many_headers)

    async def _slow_ttfb(self, request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(float(request.query.get("s", "5")))
        return web.Response(text="<html><title>late</title>finally</html>", content_type="text/html")

    async def _slow_body(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "2000"})
        await resp.prepare(request)
        await resp.write(b"<html>" + b"x" * 994)
        await asyncio.sleep(float(request.query.get("s", "5")))
        await resp.write(b"y" * 1000)
        return resp

    async def _reset(self, request: web.Request) -> web.StreamResponse:
        _rst(request)
        raise asyncio.CancelledError  # nothing more to send on a reset connection

    async def _reset_mid_body(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "100000"})
        await resp.prepare(request)
        await resp.write(b"<html>" + b"x" * 20_000)
        await asyncio.sleep(0.05)
        _rst(request)
        raise asyncio.CancelledError

    async def _redirect(self, request: web.Request) -> web.StreamResponse:
        n = int(request.match_info["n"])
        if n == 0:
            return await self._page(request)
        raise web.HTTPFound(f"/fault/redirect/{n - 1}")

    async def _loop(self, request: web.Request) -> web.StreamResponse:
        other = "b" if request.match_info["which"] == "a" else "a"
        raise web.HTTPFound(f"/fault/loop/{other}")

    async def _self_redirect(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently(request.path)

    async def _redirect_cross(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently(f"http://{site_host(1)}:{self.port}/p/1")

    async def _redirect_private(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/private/landing")

    async def _encoding(self, request: web.Request) -> web.StreamResponse:
        coding = request.match_info["coding"]
        if coding not in ("gzip", "br", "deflate", "zstd"):
            raise web.HTTPNotFound()
        plain = page_html(request_host(request), 0, hosts=self.hosts, pages=self.pages, target_bytes=self.page_bytes)
        offered = [c.split(";")[0].strip() for c in request.headers.get("Accept-Encoding", "").split(",")]
        if coding not in offered:
            return web.Response(text=plain, content_type="text/html")
        body = _compress(coding, plain.encode())
        resp = web.Response(body=body, content_type="text/html", charset="utf-8")
        resp.headers["Content-Encoding"] = coding
        resp.headers["Vary"] = "Accept-Encoding"
        return resp

    async def _big(self, request: web.Request) -> web.StreamResponse:
        total = int(float(request.query.get("mb", "50")) * 1024 * 1024)
        headers = {"Content-Type": "application/octet-stream"}
        if request.path.endswith("/big"):
            headers["Content-Length"] = str(total)
        resp = web.StreamResponse(headers=headers)
        if "Content-Length" not in headers:
            resp.enable_chunked_encoding()
        await resp.prepare(request)
        block = (b"0123456789abcdef" * 4096)[: 64 * 1024]
        sent = 0
        while sent < total:
            piece = block[: total - sent]
            await resp.write(piece)
            sent += len(piece)
        await resp.write_eof()
        return resp

    async def _broken_chunked(self, request: web.Request) -> web.StreamResponse:
        first = b"<html><p>first chunk is fine</p>"
        # A chunk-size line that is not hex, after one good chunk, then the connection closes.
        _raw_close(
            request, b"Transfer-Encoding: chunked", b"%x\r\n%s\r\nzz-not-hex\r\nbroken\r\n" % (len(first), first)
        )
        raise asyncio.CancelledError  # the answer is already on the wire, hand-made

    async def _short_body(self, request: web.Request) -> web.StreamResponse:
        _raw_close(request, b"Content-Length: 5000", b"<html>" + b"s" * 1000)
        raise asyncio.CancelledError

    async def _pdf(self, request: web.Request) -> web.StreamResponse:
        body = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
        return web.Response(body=body, content_type="application/pdf")

    async def _json(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"host": request_host(request), "items": list(range(20))})

    async def _status(self, request: web.Request) -> web.StreamResponse:
        code = int(request.match_info["code"])
        return web.Response(status=code, text=f"<html><title>{code}</title></html>", content_type="text/html")

    async def _huge_header(self, request: web.Request) -> web.StreamResponse:
        kb = int(request.query.get("kb", "100"))
        headers = {"X-Huge": "h" * kb * 1024}
        return web.Response(text="<html>huge header</html>", content_type="text/html", headers=headers)

    async def _many_headers(self, request: web.Request) -> web.StreamResponse:
        n = int(request.query.get("n", "300"))
        resp = web.Response(text="<html>many headers</html>", content_type="text/html")
        for i in range(n):
            resp.headers.add("Set-Cookie" if i % 2 else f"X-Header-{i}", f"value-{i}")
        return resp
