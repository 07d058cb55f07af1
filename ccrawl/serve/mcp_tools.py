"""``ccrawl mcp``: the registered operations as MCP tools over stdio (the ``mcp`` SDK, an extra).

Each operation the registry offers (writes hidden, as in ``serve``) is one tool whose input
schema is read off its typed parameters (:mod:`ccrawl.serve.binding`). A call runs the operation
and answers with its records as JSON Lines text, at most ``max_records`` of them; a cut answer
says so in its last line (``{"partial": true, ...}``) so a model never takes it for the whole.
Errors come back as tool errors carrying the one-line message and the exit code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ccrawl import ops
from ccrawl.errors import CcrawlError, UsageError
from ccrawl.serve.binding import BindError, bind, input_schema
from ccrawl.serve.ops_http import exposed


def tool_name(op_name: str) -> str:
    """MCP tool names allow letters, digits, ``_`` and ``-``: ``cc.fetch`` becomes ``cc_fetch``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", op_name)


def load_sdk() -> Any:
    try:
        import mcp.server.lowlevel as lowlevel
    except ImportError:
        raise UsageError("`ccrawl mcp` needs the MCP SDK: pip install 'ccrawl[mcp]'") from None
    return lowlevel


def call(op: ops.Operation, arguments: Mapping[str, Any], *, defaults: Mapping[str, Any] | None,
         injected: Mapping[str, Any] | None, max_records: int) -> tuple[str, bool]:
    """Run ``op`` and render its records as JSON Lines; (text, is_error)."""
    from ccrawl.output import to_json

    lines: list[str] = []
    try:
        kwargs = bind(op, arguments, defaults=defaults, injected=injected)
        records = iter(op(**kwargs))
        try:
            for record in records:
                if len(lines) == max_records:
                    lines.append(to_json({"partial": True, "reason": f"stopped after {max_records} records"}))
                    break
                lines.append(to_json(record))
        finally:
            close = getattr(records, "close", None)
            if close:
                close()
    except BindError as exc:
        return to_json({"error": str(exc), "param": exc.param, "exit_code": 2}), True
    except CcrawlError as exc:
        body = {"error": str(exc), "exit_code": exc.exit_code}
        if lines:
            body["partial"] = True
            return "\n".join([*lines, to_json(body)]), True
        return to_json(body), True
    return "\n".join(lines), False


def make_server(
    registry: Mapping[str, ops.Operation],
    *,
    allow_writes: bool = False,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    injected: Mapping[str, Any] | None = None,
    max_records: int = 1000,
) -> Any:
    """An MCP low-level server whose tools are the offered operations."""
    import anyio
    import mcp.types as types

    from ccrawl import __version__

    lowlevel = load_sdk()
    offered = {tool_name(name): op for name, op in exposed(registry, allow_writes=allow_writes).items()}
    defaults = defaults or {}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=f"{op.summary} (operation {op.name})", input_schema=input_schema(op))
            for name, op in offered.items()
        ])

    async def call_tool(ctx: Any, params: Any) -> Any:
        op = offered.get(params.name)
        if op is None:
            text, failed = f"no tool {params.name!r}", True
        else:
            text, failed = await anyio.to_thread.run_sync(
                lambda: call(op, params.arguments or {}, defaults=defaults.get(op.name), injected=injected,
                             max_records=max_records))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    return lowlevel.Server("ccrawl", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


def run_stdio(server: Any) -> None:
    """Serve one MCP client on stdin/stdout until it closes the stream."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
