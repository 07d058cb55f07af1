"""``ccrawl api``: the v2 REST API over the web-graph host store and the BM25 index.

Routes (JSON everywhere, errors included: ``{"error": ..., "status": N}``)::

    GET /v2/host/{host}      one host's profile from the rank table (404 when not loaded)
    GET /v2/hosts?tld=&n=    the top n hosts (default 100, at most 10,000), optionally of one TLD
    GET /v2/search?q=&k=     BM25 full-text search (503 when no index was given)
    GET /v2/health           liveness, and which stores are loaded
    GET /openapi.json        the OpenAPI 3.1 description of these routes (also /v2/openapi.json)

The host store is the top ``max_hosts`` rows of the web graph's host rank table, loaded once at
start-up; the server answers from memory. It is a local exploration tool: no authentication, no
rate limit, no pagination; it binds loopback unless told otherwise, answers only for its own host
names and origin, and wants a bearer token off loopback (:mod:`ccrawl.serve.guard`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ccrawl.jsontypes import JSONObject

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.typedefs import Handler

    from ccrawl.net.options import ClientOptions
    from ccrawl.serve.guard import Guard
    from ccrawl.store.textindex import Searcher

MAX_HOSTS_N = 10_000
MAX_K = 1_000


@dataclass(frozen=True, slots=True)
class HostProfile:
    """One host of the rank table."""

    host: str
    harmonic_pos: int
    harmonic_val: float
    pagerank_pos: int
    pagerank_val: float

    @property
    def tld(self) -> str:
        return self.host.rsplit(".", 1)[-1]

    def record(self, graph: str) -> JSONObject:
        from ccrawl.url.domain import registered_domain

        return {"host": self.host, "registered_domain": registered_domain(self.host) or None, "tld": self.tld,
                "harmonic_centrality_rank": self.harmonic_pos, "harmonic_centrality": self.harmonic_val,
                "pagerank_rank": self.pagerank_pos, "pagerank": self.pagerank_val, "graph": graph}


@dataclass(slots=True)
class HostStore:
    """Hosts by name and in rank order (harmonic centrality), with a per-TLD rank list."""

    graph: str
    ranked: list[HostProfile] = field(default_factory=list)
    by_name: dict[str, HostProfile] = field(default_factory=dict)
    by_tld: dict[str, list[HostProfile]] = field(default_factory=dict)

    @classmethod
    def build(cls, graph: str, profiles: Iterable[HostProfile]) -> HostStore:
        store = cls(graph)
        for p in profiles:
            store.ranked.append(p)
            store.by_name.setdefault(p.host, p)
            store.by_tld.setdefault(p.tld, []).append(p)
        store.ranked.sort(key=lambda p: p.harmonic_pos)
        for hosts in store.by_tld.values():
            hosts.sort(key=lambda p: p.harmonic_pos)
        return store

    def __len__(self) -> int:
        return len(self.ranked)


def openapi() -> JSONObject:
    """The OpenAPI description of the v2 routes."""
    def body(ref: str) -> JSONObject:
        return {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}

    def err(description: str) -> JSONObject:
        return {"description": description, "content": body("Error")}

    def ok(ref: str) -> JSONObject:
        return {"description": "OK", "content": body(ref)}

    def param(name: str, where: str, schema: JSONObject, required: bool, description: str) -> JSONObject:
        return {"name": name, "in": where, "required": required, "schema": schema, "description": description}

    host_schema: JSONObject = {
        "type": "object", "required": ["host", "harmonic_centrality_rank", "pagerank_rank", "graph"],
                   "properties": {"host": {"type": "string"}, "registered_domain": {"type": ["string", "null"]},
                                  "tld": {"type": "string"}, "harmonic_centrality_rank": {"type": "integer"},
                                  "harmonic_centrality": {"type": "number"}, "pagerank_rank": {"type": "integer"},
                                  "pagerank": {"type": "number"}, "graph": {"type": "string"}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "ccrawl v2 API", "version": "2"},
        "paths": {
            "/v2/host/{host}": {"get": {"summary": "A host's profile from the web-graph rank table",
                                        "parameters": [param("host", "path", {"type": "string"}, True, "host name")],
                                        "responses": {"200": ok("Host"), "404": err("not among the loaded hosts")}}},
            "/v2/hosts": {"get": {"summary": "Top hosts by harmonic centrality",
                                  "parameters": [param("tld", "query", {"type": "string"}, False, "only this TLD"),
                                                 param("n", "query", {"type": "integer", "minimum": 1,
                                                                      "maximum": MAX_HOSTS_N, "default": 100},
                                                       False, "how many")],
                                  "responses": {"200": ok("Hosts"), "400": err("bad n")}}},
            "/v2/search": {"get": {"summary": "BM25 full-text search over the index",
                                   "parameters": [param("q", "query", {"type": "string"}, True, "query terms (ORed)"),
                                                  param("k", "query", {"type": "integer", "minimum": 1,
                                                                       "maximum": MAX_K, "default": 10},
                                                        False, "results")],
                                   "responses": {"200": ok("Search"), "400": err("no q or a bad k"),
                                                 "503": err("no index loaded (start with --index-dir)")}}},
            "/v2/health": {"get": {"summary": "Liveness and the loaded stores", "responses": {"200": ok("Health")}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error", "status"],
                      "properties": {"error": {"type": "string"}, "status": {"type": "integer"}}},
            "Host": host_schema,
            "Hosts": {"type": "object", "properties": {"tld": {"type": ["string", "null"]}, "n": {"type": "integer"},
                                                       "hosts": {"type": "array", "items": host_schema}}},
            "Search": {"type": "object", "properties": {
                "query": {"type": "string"}, "k": {"type": "integer"},
                "results": {"type": "array", "items": {"type": "object", "properties": {
                    "rank": {"type": "integer"}, "score": {"type": "number"}, "url": {"type": "string"},
                    "title": {"type": ["string", "null"]}, "language": {"type": ["string", "null"]},
                    "snippet": {"type": ["string", "null"]}}}}}},
            "Health": {"type": "object", "properties": {"status": {"type": "string"},
                                                        "stores": {"type": "object"}}},
        }},
    }


def make_app(hosts: HostStore, searcher: Searcher | None = None, *, guard: Guard | None = None) -> web.Application:
    """The aiohttp application over a loaded host store and an optional open index; ``guard``
    (:class:`ccrawl.serve.guard.Guard`, default loopback names and no token) checks Host, Origin
    and the token before any route."""
    from aiohttp import web

    from ccrawl.output import to_json
    from ccrawl.serve import guard as guards

    def reply(status: int, body: Mapping[str, object]) -> web.Response:
        return web.Response(status=status, text=to_json(body) + "\n", content_type="application/json")

    def fail(status: int, message: str) -> web.Response:
        return reply(status, {"error": message, "status": status})

    @web.middleware
    async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return fail(exc.status, exc.reason or "error")

    def int_param(request: web.Request, name: str, default: int, top: int) -> int:
        raw = request.query.get(name)
        if raw is None or raw == "":
            return default
        if not raw.isdigit() or not 1 <= int(raw) <= top:
            raise ValueError(f"{name} must be a whole number from 1 to {top}")
        return int(raw)

    async def host(request: web.Request) -> web.Response:
        name = request.match_info["host"].strip().lower().rstrip(".")
        profile = hosts.by_name.get(name)
        if profile is None:
            return fail(404, f"{name} is not among the {len(hosts):,} hosts loaded from graph {hosts.graph}")
        return reply(200, profile.record(hosts.graph))

    async def top(request: web.Request) -> web.Response:
        try:
            n = int_param(request, "n", 100, MAX_HOSTS_N)
        except ValueError as exc:
            return fail(400, str(exc))
        tld = (request.query.get("tld") or "").strip().lower().lstrip(".") or None
        pool = hosts.by_tld.get(tld, []) if tld else hosts.ranked
        return reply(200, {"tld": tld, "n": n, "hosts": [p.record(hosts.graph) for p in pool[:n]]})

    async def search(request: web.Request) -> web.Response:
        if searcher is None:
            return fail(503, "full-text search is not loaded: start the server with --index-dir")
        query = (request.query.get("q") or "").strip()
        if not query:
            return fail(400, "q is required")
        try:
            k = int_param(request, "k", 10, MAX_K)
        except ValueError as exc:
            return fail(400, str(exc))
        import asyncio

        results = await asyncio.get_running_loop().run_in_executor(None, searcher.search, query, k)
        return reply(200, {"query": query, "k": k, "results": results})

    async def health(request: web.Request) -> web.Response:
        return reply(200, {"status": "ok", "stores": {
            "hosts": {"loaded": True, "count": len(hosts), "graph": hosts.graph},
            "search": {"loaded": searcher is not None,
                       "documents": getattr(searcher, "documents", None) if searcher is not None else None},
        }})

    spec = openapi()

    async def describe(request: web.Request) -> web.Response:
        return reply(200, spec)

    guard = guard or guards.Guard.for_address("127.0.0.1", loopback=True)
    app = web.Application(middlewares=[guards.middleware(guard, fail), json_errors])
    app.router.add_get("/v2/host/{host}", host)
    app.router.add_get("/v2/hosts", top)
    app.router.add_get("/v2/search", search)
    app.router.add_get("/v2/health", health)
    app.router.add_get("/openapi.json", describe)
    app.router.add_get("/v2/openapi.json", describe)
    return app


def load_host_store(client: ClientOptions, graph: str | None, max_hosts: int) -> HostStore:
    """The top ``max_hosts`` rows of the host rank table of ``graph`` (newest when None)."""
    import contextlib

    from ccrawl.commoncrawl import webgraph
    from ccrawl.net.client import run

    async def load(cc: Any) -> HostStore:
        rel = await webgraph.release(cc, graph)
        profiles: list[HostProfile] = []
        rows = cast(AsyncGenerator[Any, None], webgraph.rank_rows(cc, cc.data_url(webgraph.host_table(rel))))
        async with contextlib.aclosing(rows):
            async for row in rows:
                profiles.append(HostProfile(webgraph.reverse_host(row.name_rev), row.harmonic_pos,
                                            float(row.harmonic_val), row.pagerank_pos, float(row.pagerank_val)))
                if len(profiles) >= max_hosts:
                    break
        return HostStore.build(rel.id, profiles)

    store: HostStore = run(load, client)
    return store
