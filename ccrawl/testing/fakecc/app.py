"""The fake Common Crawl as an aiohttp app: collinfo.json, the bucket with Range support, and faults.

It behaves like ``index.commoncrawl.org`` plus ``data.commoncrawl.org`` and is no more generous:

* ``GET /collinfo.json`` lists the crawls newest first, each with its ``cdx-api`` on this server;
* ``GET|HEAD /<bucket path>`` serves files with ``Accept-Ranges: bytes``; one range
  (``bytes=a-b``, ``bytes=a-``, ``bytes=-n``) answers 206 with ``Content-Range``; a range that
  starts past the end answers 416; several ranges in one header answer 200 with the whole file,
  as S3 does; a missing file answers 404 with S3's ``NoSuchKey`` XML;
* the CDX API (``/<crawl>-index``) comes from :mod:`ccrawl.testing.fakecc.cdx` when it is present.

Every request goes through the fault middleware (:mod:`ccrawl.testing.fakecc.faults`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from ccrawl.testing.fakecc.faults import Faults, LoggedRequest
from ccrawl.testing.fakecc.site import FakeSite

FAULTS = web.AppKey("faults", Faults)
SITE = web.AppKey("site", FakeSite)

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _drop(request: web.Request) -> web.StreamResponse:
    transport = request.transport
    if transport is not None:
        transport.abort()
    # The connection is gone; raising ends the handler without aiohttp writing anything.
    raise asyncio.CancelledError


@web.middleware
async def fault_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    faults = request.app[FAULTS]
    entry = LoggedRequest(request.method, request.path, request.query_string, request.headers.get("Range"))
    with faults._lock:
        faults.log.append(entry)
        faults.inflight += 1
        crowded = faults.max_inflight is not None and faults.inflight > faults.max_inflight
    try:
        if faults.latency > 0:
            await asyncio.sleep(faults.latency)
        if crowded:
            entry.status = 503
            return web.Response(status=503, text="Slow Down", headers={"Retry-After": "1"})
        fault = faults.take(request.path)
        if fault is not None and fault.kind == "status":
            entry.status = fault.status
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            return web.Response(status=fault.status, text=f"injected {fault.status}", headers=headers)
        if fault is not None and fault.kind == "drop":
            entry.status = -1
            return await _drop(request)
        response = await handler(request)
        entry.status = response.status
        if fault is not None and fault.kind == "truncate" and isinstance(response, web.Response) and response.body:
            return await _truncated(request, response)
        return response
    finally:
        with faults._lock:
            faults.inflight -= 1


async def _truncated(request: web.Request, response: web.Response) -> web.StreamResponse:
    """Send the headers of ``response`` and half its body, then close: a body that stops early."""
    body = bytes(response.body)  # type: ignore[arg-type]
    stream = web.StreamResponse(status=response.status, headers=response.headers)
    stream.content_length = len(body)
    await stream.prepare(request)
    await stream.write(body[: len(body) // 2])
    return await _drop(request)


def _not_found(key: str) -> web.Response:
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code>'
        f"<Message>The specified key does not exist.</Message><Key>{key}</Key></Error>"
    )
    return web.Response(status=404, text=xml, content_type="application/xml")


def _parse_range(header: str, size: int) -> tuple[int, int] | str | None:
    """(start, end inclusive), None for no usable range (whole file), or "416"."""
    if "," in header:
        return None
    m = _RANGE.match(header.replace(" ", ""))
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    first, last = m.group(1), m.group(2)
    if first == "":
        n = int(last)
        if n == 0:
            return "416"
        return max(0, size - n), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or (last and int(last) < start):
        return "416"
    return start, end


async def collinfo(request: web.Request) -> web.Response:
    site = request.app[SITE]
    crawls = json.loads((site.root / "collinfo.json").read_text())
    base = f"{request.scheme}://{request.host}"
    for c in crawls:
        c["timegate"] = f"{base}/{c['id']}/"
        c["cdx-api"] = f"{base}/{c['id']}-index"
    return web.json_response(crawls)


async def bucket_file(request: web.Request) -> web.StreamResponse:
    site = request.app[SITE]
    key = request.match_info["key"]
    root = site.root.resolve()
    path = (root / key).resolve()
    if not str(path).startswith(str(root) + os.sep) or not path.is_file():
        return _not_found(key)
    stat = path.stat()
    size = stat.st_size
    headers = {
        "Accept-Ranges": "bytes",
        "ETag": f'"{stat.st_mtime_ns:x}-{size:x}"',
        "Content-Type": "application/octet-stream",
    }
    header = request.headers.get("Range")
    span = _parse_range(header, size) if header else None
    if span == "416":
        return web.Response(status=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    if request.method == "HEAD":
        return web.Response(status=200, headers={**headers, "Content-Length": str(size)})
    with open(path, "rb") as fh:
        if isinstance(span, tuple):
            start, end = span
            fh.seek(start)
            data = fh.read(end - start + 1)
            return web.Response(
                status=206, body=data, headers={**headers, "Content-Range": f"bytes {start}-{end}/{size}"}
            )
        return web.Response(status=200, body=fh.read(), headers=headers)


def make_app(site: FakeSite, faults: Faults | None = None) -> web.Application:
    """The aiohttp application serving ``site``; CDX routes are added when the CDX module exists."""
    app = web.Application(middlewares=[fault_middleware])
    app[FAULTS] = faults or Faults()
    app[SITE] = site
    app.router.add_get("/collinfo.json", collinfo)
    try:
        from ccrawl.testing.fakecc import cdx
    except ImportError:
        cdx = None  # type: ignore[assignment]
    if cdx is not None:
        cdx.add_cdx_routes(app, Path(site.root))
    from ccrawl.testing.fakecc import columnar

    columnar.ensure_table(site)  # the cc-index-table, real schema, consistent with the WARCs and CDX

    from ccrawl.testing.fakecc.news import add_news_routes

    add_news_routes(app, Path(site.root), bucket_file)

    from ccrawl.testing.fakecc.webgraph import add_webgraph_routes

    add_webgraph_routes(app, Path(site.root))
    app.router.add_route("GET", "/{key:.+}", bucket_file)
    app.router.add_route("HEAD", "/{key:.+}", bucket_file)
    return app
