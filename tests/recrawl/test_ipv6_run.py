"""A recrawl of an IPv6 literal URL stores its response (issue #13, item 11: it used to be an
AssertionError row)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from warcio.archiveiterator import ArchiveIterator

from ccrawl.recrawl import run_recrawl


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.fixture
def v6_server() -> Iterator[int]:
    loop = asyncio.new_event_loop()
    port: list[int] = []
    runners: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application()

        async def page(request: web.Request) -> web.Response:
            return web.Response(text="<html><title>v6</title><p>hello over IPv6</p></html>", content_type="text/html")

        app.router.add_get("/", page)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "::1", 0)
        await site.start()
        runners.append(runner)
        port.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield port[0]
    asyncio.run_coroutine_threadsafe(runners[0].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_ipv6_literal_url_is_recrawled_into_a_warc(v6_server: int, tmp_path: Path, write_worklist: Any) -> None:
    url = f"http://[::1]:{v6_server}/"
    wl = write_worklist(tmp_path / "wl", [url], parts=1)
    s = run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), format="warc", delay=0, workers=2,
                    allow_private_addresses=True)
    assert s.done and s.failed == 0, s.lines()
    records = []
    for f in (tmp_path / "out").glob("*.warc.gz"):
        with open(f, "rb") as fh:
            records += [(r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-IP-Address"),
                         r.content_stream().read()) for r in ArchiveIterator(fh) if r.rec_type == "response"]
    assert len(records) == 1 and records[0][0] == url and records[0][1] == "::1"
    assert b"hello over IPv6" in records[0][2]
