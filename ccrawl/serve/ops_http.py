"""``ccrawl serve``: every registered operation as an NDJSON streaming endpoint.

Routes (all JSON; records as ``application/x-ndjson``, one JSON object a line)::

    GET  /health                 {"status": "ok", "operations": N, "writes": false}
    GET  /ops                    the operations: name, summary, columns, writes, input schema
    GET  /ops/{name}             run it with query-string parameters (a repeated key is a list)
    POST /ops/{name}             run it with a JSON object body (lists and records go here)

A request is bound to the operation's typed parameters before it runs (400 with the parameter
and the reason when a value does not fit). An error raised before the first record answers with
its status (usage 400, nothing matched 404, credential 401, Common Crawl unreachable 502,
temporary 503, else 500) and ``{"error": ..., "exit_code": ...}``; one raised after records were
sent ends the stream with a last line ``{"error": ..., "exit_code": ..., "partial": true}``, so a
client never takes a cut stream for a whole one. Write operations are not routed (404) unless the
server was started with ``allow_writes``. A client that disconnects cancels its operation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ccrawl import ops
from ccrawl.errors import (
    EXIT_CREDENTIAL,
    EXIT_NOTHING,
    EXIT_TEMPORARY,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CcrawlError,
)
from ccrawl.serve.binding import BindError, bind, fields_of, input_schema

NDJSON = "application/x-ndjson"
_STATUS = {EXIT_USAGE: 400, EXIT_NOTHING: 404, EXIT_CREDENTIAL: 401, EXIT_UNREACHABLE: 502, EXIT_TEMPORARY: 503}


def exposed(registry: Mapping[str, ops.Operation], *, allow_writes: bool) -> dict[str, ops.Operation]:
    """The operations a front end offers: carriable parameters, and writes only when allowed."""
    return {name: op for name, op in sorted(registry.items())
            if fields_of(op) is not None and (allow_writes or not op.writes)}


def describe(op: ops.Operation) -> dict[str, Any]:
    return {"name": op.name, "summary": op.summary, "columns": list(op.columns), "writes": op.writes,
            "input_schema": input_schema(op)}


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for an exception an operation raised."""
    if isinstance(exc, BindError):
        return 400, {"error": str(exc), "param": exc.param, "exit_code": EXIT_USAGE}
    if isinstance(exc, CcrawlError):
        return _STATUS.get(exc.exit_code, 500), {"error": str(exc), "exit_code": exc.exit_code}
    return 500, {"error": f"internal error: {type(exc).__name__}: {exc}", "exit_code": 1}


def make_app(
    registry: Mapping[str, ops.Operation],
    *,
    allow_writes: bool = False,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    injected: Mapping[str, Any] | None = None,
    max_body: int = 64 << 20,
) -> Any:
    """The aiohttp application. ``defaults[op_name]`` fills fields a request leaves out; a JSON
    body over ``max_body`` bytes is refused (413)."""
    from aiohttp import web

    from ccrawl.output import to_json
    from ccrawl.serve.streams import RecordStream

    offered = exposed(registry, allow_writes=allow_writes)
    defaults = defaults or {}

    def json_response(status: int, body: Mapping[str, Any]) -> web.Response:
        return web.Response(status=status, text=to_json(body) + "\n", content_type="application/json")

    async def health(request: web.Request) -> web.Response:
        return json_response(200, {"status": "ok", "operations": len(offered), "writes": allow_writes})

    async def listing(request: web.Request) -> web.Response:
        return json_response(200, {"operations": [describe(op) for op in offered.values()]})

    async def run_operation(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        op = offered.get(name)
        if op is None:
            return json_response(404, {"error": f"no operation {name!r} here (GET /ops lists them)"})
        values: dict[str, Any]
        from_text = request.method == "GET"
        if from_text:
            values = {key: request.query.getall(key) for key in request.query}
        else:
            try:
                body = await request.json() if request.can_read_body else {}
            except ValueError:
                return json_response(400, {"error": "the body is not JSON", "exit_code": EXIT_USAGE})
            except web.HTTPRequestEntityTooLarge:
                return json_response(413, {"error": f"the body is over {max_body:,} bytes; send the values in "
                                                    "several requests", "exit_code": EXIT_USAGE})
            if not isinstance(body, dict):
                return json_response(400, {"error": "the body must be a JSON object of parameters",
                                           "exit_code": EXIT_USAGE})
            values = body
        try:
            kwargs = bind(op, values, from_text=from_text, defaults=defaults.get(name), injected=injected)
        except BindError as exc:
            return json_response(*error_body(exc))
        stream = RecordStream(lambda: op(**kwargs)).start()
        response: web.StreamResponse | None = None
        try:
            while True:
                try:
                    record = await stream.next()
                except StopAsyncIteration:
                    break
                except BaseException as exc:
                    if isinstance(exc, asyncio_cancelled()):
                        raise
                    status, body = error_body(exc)
                    if response is None:
                        return json_response(status, body)
                    body["partial"] = True
                    await response.write((to_json(body) + "\n").encode("utf-8"))
                    break
                if response is None:
                    response = web.StreamResponse(headers={"Content-Type": NDJSON, "X-Ccrawl-Operation": name})
                    await response.prepare(request)
                await response.write((to_json(record) + "\n").encode("utf-8"))
        finally:
            stream.cancel()
        if response is None:  # no record at all: an empty, complete stream
            response = web.StreamResponse(headers={"Content-Type": NDJSON, "X-Ccrawl-Operation": name})
            await response.prepare(request)
        await response.write_eof()
        return response

    app = web.Application(client_max_size=max_body)
    app.router.add_get("/health", health)
    app.router.add_get("/ops", listing)
    app.router.add_route("GET", "/ops/{name}", run_operation)
    app.router.add_route("POST", "/ops/{name}", run_operation)
    return app


def asyncio_cancelled() -> type[BaseException]:
    import asyncio

    return asyncio.CancelledError
