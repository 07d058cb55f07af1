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

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl import ops
from ccrawl.errors import (
    EXIT_USAGE,
    CcrawlError,
)
from ccrawl.ops.caps import Cap
from ccrawl.serve.binding import Policy, bind, fields_of, input_schema, unsupplied
from ccrawl.serve.errors import error_body
from ccrawl.serve.guard import Guard
from ccrawl.serve.worker import Busy, Runner, wire_line
from ccrawl.serve.worker import wants_notice as notices

if TYPE_CHECKING:
    from aiohttp import web

    from ccrawl.jsontypes import JSONObject

NDJSON = "application/x-ndjson"


def exposed(
    registry: Mapping[str, ops.Operation],
    *,
    allow_writes: bool,
    policy: Policy | None = None,
    defaults: Mapping[str, Mapping[str, object]] | None = None,
) -> dict[str, ops.Operation]:
    """The operations a front end offers: writes only when allowed, and only those whose required
    parameters a client or the server's configuration can supply."""
    policy = policy or Policy(allow_writes=allow_writes)
    defaults = defaults or {}
    return {name: op for name, op in sorted(registry.items())
            if (allow_writes or not op.writes) and fields_of(op, policy) is not None
            and not unsupplied(op, policy, defaults.get(name))}


def server_only(op: ops.Operation, policy: Policy) -> list[str]:
    """The parameters of ``op`` a client may not set under ``policy`` (the front end's own excluded)."""
    return [p.name for p in op.params if not policy.settable(p) and p.cap is not Cap.INJECTED]


def describe(op: ops.Operation, policy: Policy | None = None) -> JSONObject:
    policy = policy or Policy()
    return {"name": op.name, "summary": op.summary, "columns": list(op.columns), "writes": op.writes,
            "input_schema": input_schema(op, policy), "server_configured": list(server_only(op, policy))}


def make_app(
    registry: Mapping[str, ops.Operation],
    *,
    allow_writes: bool = False,
    root: str | Path | None = None,
    defaults: Mapping[str, Mapping[str, object]] | None = None,
    injected: Mapping[str, object] | None = None,
    max_body: int = 16 << 20,
    runner: Runner | None = None,
    guard: Guard | None = None,
) -> web.Application:
    """The aiohttp application.

    ``root`` is the one folder a client's paths may name (None: no path from a client);
    ``defaults[op_name]`` is the server's configuration for that operation's parameters;
    ``injected`` fills the operations' front-end parameters (``ctx``, the server's
    :class:`~ccrawl.ops.context.OpContext`); a JSON body over
    ``max_body`` bytes is refused (413). Each operation runs in a child of ``runner`` (default: a
    fork server with the default :class:`~ccrawl.serve.worker.Budget`). ``guard`` checks Host,
    Origin and the token (default: loopback names only, no token).
    """
    from aiohttp import web

    from ccrawl.output import to_json
    from ccrawl.serve import guard as guards

    policy = Policy(allow_writes=allow_writes, root=Path(os.path.realpath(root)) if root is not None else None)
    defaults = defaults or {}
    offered = exposed(registry, allow_writes=allow_writes, policy=policy, defaults=defaults)
    runner = runner or Runner()
    guard = guard or guards.Guard.for_address("127.0.0.1", loopback=True)
    front = {k: v for k, v in (injected or {}).items() if k != "notice"}

    def json_response(status: int, body: Mapping[str, object],
                      headers: Mapping[str, str] | None = None) -> web.Response:
        return web.Response(status=status, text=to_json(body) + "\n", content_type="application/json",
                            headers=headers)

    async def health(request: web.Request) -> web.Response:
        return json_response(200, {"status": "ok", "operations": len(offered), "writes": allow_writes,
                                   "running": len(runner.running)})

    async def listing(request: web.Request) -> web.Response:
        return json_response(200, {"operations": [describe(op, policy) for op in offered.values()]})

    async def run_operation(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        op = offered.get(name)
        if op is None:
            return json_response(404, {"error": f"no operation {name[:100]!r} here (GET /ops lists them)"})
        values: dict[str, object]
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
            kwargs = bind(op, values, from_text=from_text, policy=policy, defaults=defaults.get(name), injected=front)
        except Exception as exc:  # a BindError is a 400; anything else is ours, and still one JSON line
            return json_response(*error_body(exc))
        wants_notice = notices(op)
        response: web.StreamResponse | None = None
        try:
            async with contextlib.aclosing(runner.stream(name, kwargs, wants_notice=wants_notice)) as frames:
                async for frame in frames:
                    if frame.kind == "R":
                        if response is None:
                            response = web.StreamResponse(headers={"Content-Type": NDJSON, "X-Ccrawl-Operation": name})
                            await response.prepare(request)
                        await response.write(frame.data)
                    elif frame.kind == "E":
                        err = json.loads(frame.data)
                        if response is None:
                            return json_response(err["status"], err["body"])
                        await response.write(wire_line(to_json({**err["body"], "partial": True})))
                        break
        except Busy as exc:
            return json_response(503, {"error": str(exc), "exit_code": exc.exit_code}, {"Retry-After": "1"})
        except CcrawlError as exc:  # a budget ran out, or the child died
            status, body = error_body(exc)
            if response is None:
                return json_response(status, body)
            await response.write(wire_line(to_json({**body, "partial": True})))
        if response is None:  # no record at all: an empty, complete stream
            response = web.StreamResponse(headers={"Content-Type": NDJSON, "X-Ccrawl-Operation": name})
            await response.prepare(request)
        await response.write_eof()
        return response

    def refuse(status: int, message: str) -> web.Response:
        return json_response(status, {"error": message, "exit_code": EXIT_USAGE})

    app = web.Application(client_max_size=max_body, middlewares=[guards.middleware(guard, refuse)])
    app.router.add_get("/health", health)
    app.router.add_get("/ops", listing)
    app.router.add_route("GET", "/ops/{name}", run_operation)
    app.router.add_route("POST", "/ops/{name}", run_operation)

    async def stop_children(app: web.Application) -> None:
        runner.stop_all()

    app.on_shutdown.append(stop_children)
    return app
