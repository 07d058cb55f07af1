"""A hostile web cannot send the fetcher to loopback, private, link-local or unspecified addresses:
not by redirect, not by a name that resolves there, not through robots.txt; unless allowed
(issue #13, item 6). A recorder server counts every request that reaches it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from ccrawl.fetch import FetchConfig, Fetcher, FetchResult, run
from ccrawl.fetch.addresses import blocked_reason
from ccrawl.testing.synthweb import SynthWeb


@dataclass
class Hostile:
    port: int
    port2: int
    hits: list[str] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)


def _app(hits: list[str], state: dict[str, str]) -> web.Application:
    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(request.query["u"])

    async def robots(request: web.Request) -> web.StreamResponse:
        target = state.get("robots_target", "")
        if target:
            raise web.HTTPFound(target)
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def secret(request: web.Request) -> web.StreamResponse:
        hits.append(f"{request.host}{request.path}")
        return web.Response(text="secret")

    app = web.Application()
    app.router.add_get("/r", redirect)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/secret", secret)
    app.router.add_get("/robots-secret", secret)
    return app


@pytest.fixture(scope="module")
def hostile() -> Iterator[Hostile]:
    """One app on 127.0.0.1 (the 'public' host pub.test, pinned there) and one on 127.0.0.2."""
    hits: list[str] = []
    state: dict[str, str] = {}
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    ports: list[int] = []
    runners: list[web.AppRunner] = []

    async def start() -> None:
        for ip in ("127.0.0.1", "127.0.0.2"):
            runner = web.AppRunner(_app(hits, state))
            await runner.setup()
            site = web.TCPSite(runner, ip, 0)
            await site.start()
            runners.append(runner)
            ports.append(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield Hostile(ports[0], ports[1], hits, state)
    for r in runners:
        asyncio.run_coroutine_threadsafe(r.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)


def _fetch(cfg: FetchConfig, url: str) -> FetchResult:
    async def main() -> FetchResult:
        async with Fetcher(cfg) as f:
            return await f.fetch(url)

    return run(main())


def _cfg(**kw: Any) -> FetchConfig:
    base: dict[str, Any] = {"resolve": {"pub.test": "127.0.0.1"}, "delay": 0.0, "timeout": 5.0}
    base.update(kw)
    return FetchConfig(**base)


@pytest.mark.parametrize(("target", "reason"), [
    ("http://127.0.0.2:{port2}/secret", "loopback"),
    ("http://localhost:{port}/secret", "loopback"),
    ("http://0.0.0.0:{port}/secret", "unspecified"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::1]:{port}/secret", "loopback"),
    ("http://[::ffff:127.0.0.1]:{port}/secret", "loopback"),
    ("http://10.0.0.1/", "private"),
    ("http://192.168.1.1/", "private"),
])
def test_redirect_into_private_space_is_refused(hostile: Hostile, target: str, reason: str) -> None:
    before = len(hostile.hits)
    url = target.format(port=hostile.port, port2=hostile.port2)
    r = _fetch(_cfg(), f"http://pub.test:{hostile.port}/r?u={url}")
    assert r.error == "skip" and reason in r.error_detail and "allow_private_addresses" in r.error_detail, r
    assert r.status == 0 and r.body == b""
    assert len(hostile.hits) == before, "nothing reached the private address"


def test_ip_literal_in_the_work_list_is_refused(hostile: Hostile) -> None:
    before = len(hostile.hits)
    r = _fetch(_cfg(), f"http://127.0.0.1:{hostile.port}/secret")
    assert r.error == "skip" and "loopback" in r.error_detail
    assert len(hostile.hits) == before


def test_a_name_that_resolves_to_loopback_is_refused(synth: SynthWeb) -> None:
    """site0.test is not pinned here: the synthetic web's DNS server answers it with 127.0.0.1."""
    r = _fetch(FetchConfig(nameservers=synth.nameservers, delay=0, timeout=5), f"http://site0.test:{synth.port}/")
    assert r.error == "skip" and "site0.test (127.0.0.1)" in r.error_detail, r


def test_robots_txt_redirect_into_private_space_is_not_followed(hostile: Hostile) -> None:
    app_target = f"http://127.0.0.2:{hostile.port2}/robots-secret"
    before = len(hostile.hits)
    hostile.state["robots_target"] = app_target
    try:
        r = _fetch(_cfg(robots=True, robots_timeout=3), f"http://pub.test:{hostile.port}/secret")
    finally:
        hostile.state["robots_target"] = ""
    assert len(hostile.hits) == before, f"robots.txt redirect reached {hostile.hits[before:]}"
    assert r.error == "skip"


def test_allowed_when_asked(hostile: Hostile) -> None:
    before = len(hostile.hits)
    r = _fetch(_cfg(allow_private_addresses=True),
               f"http://pub.test:{hostile.port}/r?u=http://127.0.0.2:{hostile.port2}/secret")
    assert r.error == "" and r.status == 200 and r.body == b"secret"
    assert hostile.hits[before:] == [f"127.0.0.2:{hostile.port2}/secret"]


def test_pinned_names_are_trusted_without_the_allow(hostile: Hostile) -> None:
    r = _fetch(_cfg(), f"http://pub.test:{hostile.port}/secret")
    assert r.error == "" and r.status == 200


@pytest.mark.parametrize(("ip", "reason"), [
    ("8.8.8.8", ""), ("2606:4700:4700::1111", ""), ("127.0.0.1", "loopback"), ("::1", "loopback"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("169.254.169.254", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.0.1", "private"), ("fc00::1", "private"),
    ("100.64.0.1", "not globally routable"), ("224.0.0.1", "multicast"), ("::ffff:10.0.0.1", "private"),
])
def test_blocked_reason(ip: str, reason: str) -> None:
    assert blocked_reason(ip) == reason
