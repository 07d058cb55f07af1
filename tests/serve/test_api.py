"""api: the v2 REST routes over real HTTP on loopback, with a host store and a real index."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ccrawl.serve.api import HostProfile, HostStore, make_app, openapi
from ccrawl.store.textindex import Document, Searcher, build
from ccrawl.testing.nginx import free_port

HOSTS = [
    HostProfile("www.example.com", 3, 0.9, 5, 0.01),
    HostProfile("news.bbc.co.uk", 1, 1.5, 1, 0.2),
    HostProfile("example.org", 2, 1.2, 9, 0.001),
    HostProfile("blog.example.org", 4, 0.5, 2, 0.1),
]


def _get_all(app: web.Application, paths: list[str]) -> list[tuple[int, Any]]:
    async def main() -> list[tuple[int, Any]]:
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            out = []
            async with aiohttp.ClientSession() as s:
                for path in paths:
                    r = await s.get(f"http://127.0.0.1:{port}{path}")
                    assert r.headers["Content-Type"].startswith("application/json"), path
                    out.append((r.status, await r.json()))
            return out
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_host_routes_answer_from_the_store_in_rank_order() -> None:
    store = HostStore.build("cc-main-2026-jan-feb-mar", HOSTS)
    (s1, one), (s2, top), (s3, org), (s4, missing), (s5, bad) = _get_all(make_app(store), [
        "/v2/host/www.example.com", "/v2/hosts?n=3", "/v2/hosts?tld=org", "/v2/host/nowhere.test", "/v2/hosts?n=0"])
    assert s1 == 200 and one == {"host": "www.example.com", "registered_domain": "example.com", "tld": "com",
                                 "harmonic_centrality_rank": 3, "harmonic_centrality": 0.9, "pagerank_rank": 5,
                                 "pagerank": 0.01, "graph": "cc-main-2026-jan-feb-mar"}
    assert s2 == 200 and [h["host"] for h in top["hosts"]] == ["news.bbc.co.uk", "example.org", "www.example.com"]
    assert s3 == 200 and [h["host"] for h in org["hosts"]] == ["example.org", "blog.example.org"]
    assert s4 == 404 and "not among the 4 hosts" in missing["error"] and missing["status"] == 404
    assert s5 == 400 and "n must be" in bad["error"]


def test_search_is_503_without_an_index_and_ranks_with_one(tmp_path: Path) -> None:
    store = HostStore.build("g", HOSTS)
    [(status, body), (hs, health)] = _get_all(make_app(store), ["/v2/search?q=web", "/v2/health"])
    assert status == 503 and "--index-dir" in body["error"]
    assert hs == 200 and health["stores"]["search"]["loaded"] is False and health["stores"]["hosts"]["count"] == 4

    build(tmp_path, [Document("http://a.test/", "web server web", "A"), Document("http://b.test/", "web", "B"),
                     Document("http://c.test/", "other")])
    app = make_app(store, Searcher.open(tmp_path))
    [(status, body), (s2, noq), (s3, badk), (hs, health)] = _get_all(
        app, ["/v2/search?q=web%20server&k=5", "/v2/search", "/v2/search?q=x&k=abc", "/v2/health"])
    assert status == 200 and [r["url"] for r in body["results"]] == ["http://a.test/", "http://b.test/"]
    assert body["k"] == 5 and body["results"][0]["title"] == "A"
    assert s2 == 400 and noq["error"] == "q is required"
    assert s3 == 400 and "k must be" in badk["error"]
    assert health["stores"]["search"] == {"loaded": True, "documents": 3}


def test_unknown_routes_and_methods_answer_json_errors_and_openapi_is_served() -> None:
    store = HostStore.build("g", HOSTS)
    [(s1, nf), (s2, spec), (s3, spec2)] = _get_all(make_app(store), ["/v3/nothing", "/openapi.json",
                                                                      "/v2/openapi.json"])
    assert s1 == 404 and nf["status"] == 404
    assert s2 == 200 and s3 == 200 and spec == openapi() == spec2
    assert set(spec["paths"]) == {"/v2/host/{host}", "/v2/hosts", "/v2/search", "/v2/health"}
    assert spec["paths"]["/v2/search"]["get"]["responses"]["503"]


def test_api_refuses_a_rebound_host_a_foreign_origin_and_a_missing_token() -> None:
    from ccrawl.serve.guard import Guard

    store = HostStore.build("g", HOSTS)

    async def main(app: web.Application, calls: list[dict[str, str]]) -> list[int]:
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            async with aiohttp.ClientSession() as s:
                out = []
                for headers in calls:
                    r = await s.get(f"http://127.0.0.1:{port}/v2/host/www.example.com", headers=headers)
                    body = await r.json()
                    assert r.status == 200 or body["status"] == r.status
                    out.append(r.status)
                out.append((await s.get(f"http://127.0.0.1:{port}/v2/health")).status)
                return out
        finally:
            await runner.cleanup()

    statuses = asyncio.run(main(make_app(store), [
        {}, {"Host": "attacker.example"}, {"Origin": "http://attacker.example"}, {"Sec-Fetch-Site": "cross-site"}]))
    assert statuses == [200, 421, 403, 403, 200]
    token = "a-token-of-32-characters-or-so!!"
    guarded = make_app(store, guard=Guard.for_address("127.0.0.1", loopback=True, token=token))
    statuses = asyncio.run(main(guarded, [{}, {"Authorization": "Bearer nope"}, {"Authorization": f"Bearer {token}"}]))
    assert statuses == [401, 401, 200, 200]  # /v2/health needs no token
