"""mcp: the registered operations as tools, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client  # the dev extra installs the SDK

REPO = Path(__file__).resolve().parents[2]
#: registers one extra operation in the server process, then runs `ccrawl mcp` there
_WITH_EXTRA_OP = """
import sys
from typing import Annotated
from ccrawl import ops
from ccrawl.ops.caps import Bounds, Cap, Value
from ccrawl.serve import worker
worker.START_METHOD = "fork"  # the children are forks of this process, which registered test.echo
@ops.operation("test.echo", summary="echo back", columns=("value",))
def echo(value: Value[str], times: Annotated[int, Cap.VALUE, Bounds(0, 100)] = 1):
    for _ in range(times):
        yield {"value": value}
from ccrawl.cli.main import main
sys.exit(main(["mcp", *sys.argv[1:]]))
"""


async def _session(args: list[str], fn: Any) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["-c", _WITH_EXTRA_OP, *args],
                                   env={**os.environ, "PYTHONPATH": str(REPO),
                                        "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config"})
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await fn(session)


def test_tools_are_the_read_operations_plus_one_added_with_no_other_code() -> None:
    async def fn(session: ClientSession) -> Any:
        tools = (await session.list_tools()).tools
        return {t.name: t for t in tools}

    tools = anyio.run(_session, [], fn)
    assert {"url_surt", "url_shard", "test_echo", "index_search"} <= set(tools)
    assert "cache_clear" not in tools and "index_build" not in tools  # writes hidden
    assert tools["test_echo"].input_schema["required"] == ["value"]
    assert tools["url_shard"].input_schema["properties"]["shards"]["type"] == "integer"

    writes = anyio.run(_session, ["--allow-writes"], fn)
    assert {"cache_clear", "index_build"} <= set(writes)


def test_a_tool_call_returns_the_operation_records_and_errors_carry_the_reason() -> None:
    async def fn(session: ClientSession) -> Any:
        ok = await session.call_tool("test_echo", {"value": "hi", "times": 2})
        surt = await session.call_tool("url_surt", {"urls": ["http://b.a.test/x?y=1"]})
        bad = await session.call_tool("url_shard", {"urls": ["http://a.test/"], "shards": "three"})
        return ok, surt, bad

    ok, surt, bad = anyio.run(_session, [], fn)
    assert not ok.is_error
    assert [json.loads(x) for x in ok.content[0].text.splitlines()] == [{"value": "hi"}, {"value": "hi"}]
    assert json.loads(surt.content[0].text) == {"url": "http://b.a.test/x?y=1", "surt": "test,a,b)/x?y=1"}
    assert bad.is_error and json.loads(bad.content[0].text)["param"] == "shards"


def test_a_long_answer_is_cut_and_says_it_is_partial() -> None:
    async def fn(session: ClientSession) -> Any:
        return await session.call_tool("test_echo", {"value": "x", "times": 10})

    res = anyio.run(_session, ["--max-records", "3"], fn)
    lines = [json.loads(x) for x in res.content[0].text.splitlines()]
    assert lines[:3] == [{"value": "x"}] * 3 and lines[3]["partial"] is True and len(lines) == 4


def test_global_flags_are_the_tools_defaults(tmp_path: Path) -> None:
    from ccrawl.store.textindex import Document, build

    build(tmp_path / "index", [Document("http://go.test/", "golang web server", "Go")])

    async def fn(session: ClientSession) -> Any:
        # no `dir`: the index under --data-dir is the default, as `ccrawl index search` would use
        return await session.call_tool("index_search", {"query": "golang"})

    res = anyio.run(_session, ["--data-dir", str(tmp_path)], fn)
    assert not res.is_error, res.content[0].text
    assert json.loads(res.content[0].text)["url"] == "http://go.test/"


def test_without_the_sdk_mcp_says_how_to_install_it_in_one_line() -> None:
    import subprocess

    blocked = "import sys; sys.modules['mcp'] = None; from ccrawl.cli.main import main; sys.exit(main(['mcp']))"
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config"}
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "pip install 'ccrawl[mcp]'" in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
