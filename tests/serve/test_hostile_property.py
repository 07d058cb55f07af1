"""A property: whatever operation and values a client sends, serve writes no file outside its root,
reaches no canary, echoes no secret, and keeps its memory under its ceiling.

Operations and parameters are drawn from the server's own listing (``GET /ops``), so an operation
added later is swept too; values are drawn from its input schema and from a pool of what
attackers send (paths out of the root, SQL that writes or reads files, loopback and canary URLs,
records naming the canary, huge numbers), plus parameters no client may set. The server's
configured endpoints point at an "operator" server on loopback that answers 404 to everything:
the canary is a different server that nothing may reach.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccrawl import ops
from ccrawl.ops.caps import Cap
from tests.serve.hostile import (
    CANARY_BODY,
    CANARY_TOKEN,
    canary_server,
    make_places,
    rss_bytes,
    running_serve,
    serve_env,
)

SECRET = "SECRET-PROPERTY-LINE-a41f"
CEILING = 768 << 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from ccrawl.testing.nginx import free_port

    top = tmp_path_factory.mktemp("property")
    places = make_places(top, SECRET)
    root, data, outside = places["root"], places["data"], places["outside"]
    with canary_server() as canary, canary_server() as operator:
        operator_url = operator.url
        env = serve_env(data, CCRAWL_RETRIES="0", CCRAWL_COLLINFO_ENDPOINT=f"{operator_url}/collinfo.json",
                        CCRAWL_DATA_ENDPOINT=operator_url, CCRAWL_CDX_ENDPOINT=operator_url,
                        CCRAWL_S3_ENDPOINT=operator_url, HF_ENDPOINT=operator_url, CCRAWL_LIBRARY=str(data / "lib"),
                        CCRAWL_CACHE_DIR=str(data / "cache"))
        args = ["--addr", f"127.0.0.1:{free_port()}", "--root", str(root), "--max-seconds", "8",
                "--max-memory-mb", "512", "--max-running", "2"]
        with running_serve(args, env) as (base, proc):
            async def listing() -> dict[str, Any]:
                async with aiohttp.ClientSession() as s:
                    return dict(await (await s.get(f"{base}/ops")).json())

            ops = {o["name"]: o for o in asyncio.run(listing())["operations"]}
            yield {"base": base, "proc": proc, "canary": canary, "root": root, "outside": outside, "ops": ops,
                   "top": top}


def _pool(server: dict[str, Any]) -> list[str]:
    canary, outside = server["canary"].url, server["outside"]
    port = canary.rsplit(":", 1)[1]
    return [
        canary, f"{canary}/page?x=1", f"http://localhost:{port}/", f"http://[::1]:{port}/",
        "/etc/passwd", str(outside / "shadow"), "../outside/shadow", "page.html", str(outside / "pwn.txt"),
        f"COPY (SELECT 'x') TO '{outside}/pwn.csv'", f"SELECT * FROM read_text('{outside}/shadow')",
        f"ATTACH '{outside}/pwn.duckdb' AS p", "SELECT * FROM t", "INSTALL httpfs", "SET threads = 64",
        "file:///etc/passwd", "-", "*", "", "a." * 120 + "com", "x" * 300, "\u0000", "%00", "../../../../etc",
        f"{outside}/", "; rm -rf /", "http://a.test/", "com,example)/", "2021", "CC-MAIN-2024-10",
    ]


def _escapes(server: dict[str, Any]) -> list[str]:
    """Paths a client uses to get out of the root."""
    outside = server["outside"]
    return [str(outside / "shadow"), "../outside/shadow", "/etc/passwd", str(outside / "pwn.txt"),
            str(outside), "../outside/pwn.duckdb"]


def _configuration(server: dict[str, Any], p: Any) -> st.SearchStrategy[Any]:
    """A hostile value for a parameter no client may set, of the shape and class the operation declares."""
    canary = server["canary"].url
    if p.cap is Cap.ENDPOINT:
        return st.sampled_from([canary, f"{canary}/ranks.txt.gz", f"{canary}/api"])
    if p.name == "resolve":
        return st.sampled_from([{"*": "127.0.0.1"}, {"a.test": "127.0.0.1"}])
    if p.annotation.startswith(("int", "float")):
        return st.sampled_from([3 * 10**9, 10**6, 0])
    if p.annotation.startswith("bool"):
        return st.booleans()
    return st.sampled_from([canary, *_escapes(server)])


@st.composite
def requests(draw: st.DrawFn, server: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    pool = _pool(server)
    hostile = st.sampled_from(pool)
    text = st.one_of(hostile, st.text(max_size=40))
    # operations with parameters a client may not set come up twice as often: they are the targets
    weighted = [n for n in sorted(server["ops"]) for _ in range(1 + 2 * _has_configuration(n))]
    name = draw(st.sampled_from(weighted))
    schema = server["ops"][name]["input_schema"]
    body: dict[str, Any] = {}
    for prop, spec in schema["properties"].items():
        if prop not in schema["required"] and not draw(st.booleans()):
            continue
        kind = spec.get("type") or spec.get("anyOf", [{}])[0].get("type")
        if kind == "string" and draw(st.integers(0, 3)) == 0:  # a URL the server must not fetch for a client
            body[prop] = draw(st.sampled_from(pool[:4]))
            continue
        if "root folder" in json.dumps(spec):  # a path: mostly the ways out of the root
            one = st.one_of(st.sampled_from(_escapes(server)), hostile)
            body[prop] = draw(st.lists(one, min_size=1, max_size=3) if kind == "array" else one)
            continue
        if kind == "integer":
            lo, hi = spec.get("minimum", -(10**12)), spec.get("maximum", 10**12)
            body[prop] = draw(st.one_of(st.integers(int(lo), int(hi)), st.sampled_from([-1, 3 * 10**9, 10**18])))
        elif kind == "number":
            body[prop] = draw(st.floats(allow_nan=False, allow_infinity=False, width=32))
        elif kind == "boolean":
            body[prop] = draw(st.booleans())
        elif (kind == "array" and spec.get("items", {}).get("type") == "object") or \
                spec.get("anyOf", [{}])[0].get("items", {}).get("type") == "object":
            body[prop] = draw(st.lists(st.fixed_dictionaries({
                "url": hostile, "warc_filename": hostile,
                "warc_record_offset": st.sampled_from([0, -5, 10**12]),
                "warc_record_length": st.sampled_from([100, 3 * 10**9, 0])}), max_size=3))
        elif kind == "array":
            body[prop] = draw(st.lists(text, min_size=1, max_size=4))
        elif kind == "object":
            body[prop] = draw(st.dictionaries(text, hostile, max_size=3))
        else:
            body[prop] = draw(text)
    # every parameter the registry says is not a plain value (the server's listing may hide some): one of
    # them, or several, with a value of its class
    configured = [p for p in ops.get(name).params if p.cap not in (Cap.VALUE, Cap.SQL, Cap.INJECTED)]
    if configured and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(configured), min_size=1, max_size=3, unique_by=lambda p: p.name))
        for p in chosen:
            body[p.name] = draw(_configuration(server, p))
    return name, body


def _has_configuration(name: str) -> bool:
    return any(p.cap not in (Cap.VALUE, Cap.SQL, Cap.INJECTED) for p in ops.get(name).params)


def _post(base: str, name: str, body: dict[str, Any]) -> tuple[int, str]:
    async def go() -> tuple[int, str]:
        timeout = aiohttp.ClientTimeout(total=60)
        async with aiohttp.ClientSession(timeout=timeout) as s:
            r = await s.post(f"{base}/ops/{name}", json=body)
            text = await r.content.read(4 << 20)  # a client may stop reading: the server must cope
            return r.status, text.decode("utf-8", "replace")

    return asyncio.run(go())


def _files_outside(server: dict[str, Any]) -> set[str]:
    found = set()
    for base, _, files in os.walk(server["top"]):
        if str(server["root"]) in base or "/data" in base[len(str(server["top"])):]:
            continue
        found |= {os.path.join(base, f) for f in files}
    return found


@settings(max_examples=int(os.environ.get("CCRAWL_HOSTILE_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_request_escapes_the_root_reaches_the_canary_or_echoes_a_secret(server: dict[str, Any],
                                                                         data: st.DataObject) -> None:
    before = _files_outside(server)
    server["canary"].requests.clear()  # each example answers for its own requests
    name, body = data.draw(requests(server))
    status, text = _post(server["base"], name, body)
    assert status in (200, 400, 401, 404, 413, 502, 503, 504, 507, 500), (name, body, status, text[:300])
    if status == 500:
        assert "Traceback" not in text, text[:500]
    lines = text.splitlines()  # any reader's idea of a line: a record never holds a raw line break
    if len(text) >= 4 << 20:
        lines = lines[:-1]  # the read stopped mid-line
    for line in lines[:1000]:
        if line.strip():
            json.loads(line)
    assert server["canary"].requests == [], (name, body, server["canary"].requests)
    assert CANARY_TOKEN not in text and SECRET not in text and CANARY_BODY not in text, (name, body)
    assert _files_outside(server) == before, (name, body)
    assert not Path("/tmp/pwn.csv").exists()
    assert rss_bytes(server["proc"].pid) < CEILING
