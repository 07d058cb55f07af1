"""mcp treats every caller as hostile (an agent steered by the pages it reads): the same classes and
budgets as serve, driven by the MCP SDK's own stdio client against the real `ccrawl mcp`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.serve.hostile import CANARY_TOKEN, REPO, canary_server

SECRET = "SECRET-MCP-LINE-5d1e"


async def _session(args: list[str], env: dict[str, str], fn: Any) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ccrawl", "mcp", *args], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await fn(session)


@pytest.fixture()
def place(tmp_path: Path) -> dict[str, Any]:
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    import duckdb

    con = duckdb.connect(str(data / "ccrawl.duckdb"))
    con.execute("CREATE TABLE t AS SELECT 42 AS answer")
    con.close()
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config",
           "HF_TOKEN": CANARY_TOKEN, "CCRAWL_DATA_DIR": str(data)}
    return {"data": data, "outside": outside, "env": env}


def test_tools_take_no_configuration_and_say_what_they_cannot_do(place: dict[str, Any]) -> None:
    async def fn(session: ClientSession) -> Any:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = anyio.run(_session, [], place["env"], fn)
    for name, tool in tools.items():
        props = set(tool.input_schema["properties"])
        assert not props & {"endpoint", "hub", "resolve", "max_body", "ledger", "paths", "db", "trusted",
                            "verify_tls", "workers", "jobs", "cache_dir", "root", "table", "added_out"}, name
        assert "cannot choose endpoints, credentials" in (tool.description or ""), name
    assert "SQL runs read-only" in (tools["db_sql"].description or "")
    assert "takes no file path" in (tools["index_search"].description or "")
    assert "warc_parse" not in tools and "extract_file" not in tools  # files are their input: none here


def test_a_call_setting_configuration_or_reaching_files_is_refused(place: dict[str, Any]) -> None:
    outside = place["outside"]

    with canary_server() as canary:
        async def fn(session: ClientSession) -> Any:
            calls = [
                ("domains_diff", {"endpoint": canary.url}),
                ("content_extract", {"urls": ["http://pinned.test/"], "resolve": {"pinned.test": "127.0.0.1"}}),
                ("content_extract", {"urls": [canary.url + "/x"], "max_body": 3_000_000_000}),
                ("extract_file", {"paths": [str(outside / "secret.txt")]}),
                ("cc_fetch", {"locations": [], "ledger": "/dev/zero"}),
                ("db_sql", {"sql": f"COPY (SELECT 'x') TO '{outside}/pwn.csv'"}),
                ("db_sql", {"sql": f"SELECT * FROM read_text('{outside}/secret.txt')"}),
                ("db_sql", {"sql": "SELECT 1", "trusted": True}),
            ]
            return [await session.call_tool(name, args) for name, args in calls]

        results = anyio.run(_session, [], place["env"], fn)
        assert canary.requests == []
    for res in results:
        text = res.content[0].text
        assert res.is_error, text
        body = json.loads(text.splitlines()[-1])
        assert body["exit_code"] == 2 and "\n" not in body["error"]
        assert SECRET not in text and CANARY_TOKEN not in text
    assert not (outside / "pwn.csv").exists()


def test_calls_answer_within_the_budgets(place: dict[str, Any]) -> None:
    async def fn(session: ClientSession) -> Any:
        ok = await session.call_tool("db_sql", {"sql": "SELECT answer FROM t"})
        started = time.monotonic()
        slow = await session.call_tool("db_sql", {"sql": "SELECT count(*) FROM range(100000000000000)"})
        took = time.monotonic() - started
        host = await session.call_tool("url_domain", {"urls": ["http://" + "a." * 30_000 + "com/"]})
        return ok, slow, took, host

    ok, slow, took, host = anyio.run(_session, ["--max-seconds", "2"], place["env"], fn)
    assert not ok.is_error and json.loads(ok.content[0].text) == {"answer": 42}
    assert slow.is_error and "limit of 2 s" in slow.content[0].text and took < 8
    assert not host.is_error, host.content[0].text
    record = json.loads(host.content[0].text)
    assert record["host"].endswith("a.com") and "registered_domain" not in record  # None is left out


def test_with_a_root_a_tool_reads_inside_it_and_nothing_outside(place: dict[str, Any], tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "page.html").write_text("<html><head><title>Mine</title></head><body><p>inside</p></body></html>")
    (root / "link.html").symlink_to(place["outside"] / "secret.txt")

    async def fn(session: ClientSession) -> Any:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        inside = await session.call_tool("extract_file", {"paths": ["page.html"]})
        calls = [{"paths": [str(place["outside"] / "secret.txt")]}, {"paths": ["link.html"]},
                 {"paths": ["../outside/secret.txt"]}]
        return tools, inside, [await session.call_tool("extract_file", c) for c in calls]

    tools, inside, refused = anyio.run(_session, ["--root", str(root)], place["env"], fn)
    assert "only inside the server's root folder" in (tools["extract_file"].description or "")
    assert not inside.is_error and json.loads(inside.content[0].text)["title"] == "Mine"
    for res in refused:
        assert res.is_error and "outside the server's root" in res.content[0].text
        assert SECRET not in res.content[0].text


def test_every_server_configuration_refused_over_http_is_refused_over_mcp(place: dict[str, Any]) -> None:
    from tests.serve.test_hostile_clients import SERVER_CONFIGURATION

    outside = place["outside"]
    with canary_server() as canary:
        async def fn(session: ClientSession) -> Any:
            tools = {t.name for t in (await session.list_tools()).tools}
            out = []
            for name, body, param in SERVER_CONFIGURATION:
                filled = json.loads(json.dumps(body).replace("{canary}", canary.url).replace("{outside}", str(outside)))
                tool = name.replace(".", "_")
                if tool not in tools:  # not offered at all here (its files are its input, and no --root)
                    out.append((tool, None, param))
                    continue
                out.append((tool, await session.call_tool(tool, filled), param))
            return out

        results = anyio.run(_session, [], place["env"], fn)
        assert canary.requests == []
    offered = 0
    for tool, res, param in results:
        if res is None:  # only an operation whose required input is a path goes unoffered without --root
            from ccrawl import ops

            op = next(o for n, o in ops.load_all().items() if n.replace(".", "_") == tool)
            assert any(p.required and p.cap is not None and p.cap.is_path for p in op.params), tool
            continue
        offered += 1
        text = res.content[0].text
        assert res.is_error and json.loads(text)["param"] == param, (tool, text)
        assert SECRET not in text and CANARY_TOKEN not in text
    assert offered >= 18


def _marked(mark: str) -> list[int]:
    """Processes whose environment holds ``mark`` (the mcp server and everything it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if mark.encode() in fh.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_caller_that_goes_away_leaves_no_operation_running(place: dict[str, Any]) -> None:
    from ccrawl.testing.procs import still_running_after

    mark = f"CCRAWL_TEST_MARK=mcp-{os.getpid()}-{time.monotonic_ns()}"
    env = {**place["env"], mark.split("=")[0]: mark.split("=")[1]}
    seen: list[int] = []

    async def fn(session: ClientSession) -> Any:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.call_tool, "db_sql", {"sql": "SELECT count(*) FROM range(100000000000000)"})
            await anyio.sleep(2.0)
            seen.extend(_marked(mark))
            tg.cancel_scope.cancel()  # the caller stops waiting, then closes the session

    anyio.run(_session, [], env, fn)
    assert len(seen) >= 3, "the server, its fork server and the query's process should have been running"
    assert still_running_after(_marked(mark), 10.0) == []
