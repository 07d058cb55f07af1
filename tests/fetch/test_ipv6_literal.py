"""An IPv6 literal URL (``http://[::1]:port/``) is fetched, with or without ``ipv6`` lookups, and never
ends as an AssertionError row (issue #13, item 11)."""

from __future__ import annotations

import socket

import pytest
from aiohttp import web

from ccrawl.fetch import FetchConfig, Fetcher, FetchResult, run


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
@pytest.mark.parametrize("ipv6", [False, True])
def test_ipv6_literal_is_fetched(ipv6: bool) -> None:
    async def main() -> tuple[FetchResult, FetchResult]:
        app = web.Application()

        async def page(request: web.Request) -> web.Response:
            return web.Response(text=f"host {request.host}")

        app.router.add_get("/", page)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "::1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            cfg = FetchConfig(allow_private_addresses=True, delay=0, timeout=5, ipv6=ipv6)
            async with Fetcher(cfg) as f:
                ok = await f.fetch(f"http://[::1]:{port}/")
            async with Fetcher(FetchConfig(delay=0, timeout=5, ipv6=ipv6)) as f:
                blocked = await f.fetch(f"http://[::1]:{port}/")
            return ok, blocked
        finally:
            await runner.cleanup()

    ok, blocked = run(main())
    assert ok.error == "" and ok.status == 200 and ok.ip_address == "::1", (ok.error, ok.error_detail)
    assert ok.body.startswith(b"host [::1]:")
    assert blocked.error == "skip" and "loopback" in blocked.error_detail
