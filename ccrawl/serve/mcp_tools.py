"""``ccrawl mcp``: the registered operations as MCP tools over stdio (the ``mcp`` SDK, an extra).

Each operation the registry offers (writes hidden, as in ``serve``) is one tool whose input
schema holds the parameters a client may set (:mod:`ccrawl.serve.binding`: the same capability
classes and policy as ``serve``, for the transport most likely to be driven by text a model read
on a web page). A call runs the operation in a child process within the server's budgets
(:mod:`ccrawl.serve.worker`) and answers with its records as JSON Lines text, at most
``max_records`` of them; a cut answer says so in its last line (``{"partial": true, ...}``) so a
model never takes it for the whole. Errors come back as tool errors carrying the one-line message
and the exit code. Each tool's description says what it cannot do.
"""

from __future__ import annotations

import contextlib
import json
import re
import weakref
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ccrawl import ops
from ccrawl.errors import CcrawlError, UsageError
from ccrawl.jsontypes import JSONObject
from ccrawl.ops.caps import Cap
from ccrawl.serve.binding import BindError, Policy, bind, input_schema
from ccrawl.serve.ops_http import exposed, server_only
from ccrawl.serve.worker import Budget, Runner
from ccrawl.serve.worker import wants_notice as notices

if TYPE_CHECKING:
    import mcp.types as mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server


def tool_name(op_name: str) -> str:
    """MCP tool names allow letters, digits, ``_`` and ``-``: ``cc.fetch`` becomes ``cc_fetch``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", op_name)


#: Each server :func:`make_server` built, and the runner whose children :func:`run_stdio` stops at the end.
_RUNNERS: weakref.WeakKeyDictionary[Server[object], Runner] = weakref.WeakKeyDictionary()


def load_sdk() -> ModuleType:
    try:
        import mcp.server.lowlevel as lowlevel
    except ImportError:
        raise UsageError("`ccrawl mcp` needs the MCP SDK: pip install 'ccrawl[mcp]'") from None
    return lowlevel


async def call(
    op: ops.Operation,
    arguments: Mapping[str, object],
    *,
    runner: Runner,
    policy: Policy,
    defaults: Mapping[str, object] | None,
    injected: Mapping[str, object] | None,
    max_records: int,
) -> tuple[str, bool]:
    """Run ``op`` in a child of ``runner`` and render its records as JSON Lines; (text, is_error)."""
    from ccrawl.output import to_json

    lines: list[str] = []
    try:
        kwargs = bind(op, arguments, policy=policy, defaults=defaults, injected=injected)
    except BindError as exc:
        return to_json({"error": str(exc), "param": exc.param, "exit_code": 2}), True
    wants_notice = notices(op)
    try:
        async with contextlib.aclosing(runner.stream(op.name, kwargs, wants_notice=wants_notice)) as frames:
            async for frame in frames:
                if frame.kind == "R":
                    for line in frame.data.decode("utf-8").split("\n")[:-1]:
                        if len(lines) == max_records:
                            lines.append(to_json({"partial": True, "reason": f"stopped after {max_records} records"}))
                            return "\n".join(lines), False
                        lines.append(line)
                elif frame.kind == "E":
                    body: JSONObject = json.loads(frame.data)["body"]
                    if lines:
                        body["partial"] = True
                    return "\n".join([*lines, to_json(body)]), True
    except CcrawlError as exc:  # busy, over a budget, or the child died
        body = {"error": str(exc), "exit_code": exc.exit_code}
        if lines:
            body["partial"] = True
        return "\n".join([*lines, to_json(body)]), True
    return "\n".join(lines), False


def description(op: ops.Operation, policy: Policy, budget: Budget) -> str:
    """The tool's description: what it does, and what it cannot do."""
    fixed = server_only(op, policy)
    limits = (f"It runs in a process of its own, stopped after {budget.seconds:g} s or {budget.memory_mb:,} MiB; "
              "it cannot choose endpoints, credentials, address allowances or resource limits")
    if any(p.cap is not None and p.cap.is_path for p in op.params):
        limits += (", and reads or writes files only inside the server's root folder" if policy.root is not None
                   else ", and takes no file path")
    if any(p.cap is Cap.SQL for p in op.params):
        limits += "; its SQL runs read-only, with no file or network access"
    text = f"{op.summary} (operation {op.name}). {limits}."
    if fixed:
        text += f" Set by the server, not the caller: {', '.join(fixed)}."
    return text


def make_server(
    registry: Mapping[str, ops.Operation],
    *,
    allow_writes: bool = False,
    root: str | None = None,
    defaults: Mapping[str, Mapping[str, object]] | None = None,
    injected: Mapping[str, object] | None = None,
    max_records: int = 1000,
    runner: Runner | None = None,
) -> Server[object]:
    """An MCP low-level server whose tools are the offered operations, each run in a child of ``runner``."""
    import os

    import mcp.types as types

    from ccrawl import __version__

    lowlevel = load_sdk()
    policy = Policy(allow_writes=allow_writes, root=Path(os.path.realpath(root)) if root is not None else None)
    defaults = defaults or {}
    runner = runner or Runner()
    offered = {tool_name(name): op
               for name, op in exposed(registry, allow_writes=allow_writes, policy=policy, defaults=defaults).items()}
    front = {k: v for k, v in (injected or {}).items() if k != "notice"}

    async def list_tools(
        ctx: ServerRequestContext[object], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=description(op, policy, runner.budget),
                       input_schema=input_schema(op, policy))
            for name, op in offered.items()
        ])

    async def call_tool(
        ctx: ServerRequestContext[object], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        op = offered.get(params.name)
        if op is None:
            text, failed = json.dumps({"error": f"no tool {str(params.name)[:100]!r}", "exit_code": 2}), True
        else:
            text, failed = await call(op, params.arguments or {}, runner=runner, policy=policy,
                                      defaults=defaults.get(op.name), injected=front, max_records=max_records)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    server: Server[object] = lowlevel.Server("ccrawl", version=__version__, on_list_tools=list_tools,
                                             on_call_tool=call_tool)
    _RUNNERS[server] = runner  # run_stdio stops its children when the client goes
    return server


def run_stdio(server: Server[object]) -> None:
    """Serve one MCP client on stdin/stdout until it closes the stream."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        runner = _RUNNERS.pop(server, None)
        if runner is not None:
            runner.stop_all()
