"""serve treats every client as hostile: tried as an attacker would, over real HTTP on loopback.

The server is the real ``ccrawl serve`` (fork server, budgets, guard) started as an operator
would, with the operator's Hub token in its environment and a canary server on loopback that no
request may reach. Each refusal is checked for its status and for the side effect that must not
have happened (a file written, a secret echoed, the canary reached).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.serve.hostile import (
    CANARY_BODY,
    CANARY_TOKEN,
    Canary,
    canary_server,
    make_places,
    running_serve,
    serve_env,
)

SECRET = "root:SECRET-SHADOW-LINE-91c2"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One serve process: --root ROOT, data under DATA, a secret file OUTSIDE the root."""
    places = make_places(tmp_path_factory.mktemp("hostile"), SECRET)
    root, data, outside = places["root"], places["data"], places["outside"]
    (root / "escape").symlink_to(outside / "shadow")
    with canary_server() as canary, canary_server() as operator, running_serve(
        ["--addr", f"127.0.0.1:{_port()}", "--root", str(root), "--max-seconds", "30", "--max-memory-mb", "768",
         "--max-running", "3"],
        serve_env(data, CCRAWL_DATA_ENDPOINT=operator.url, CCRAWL_RETRIES="0"),
    ) as (base, proc):
        yield {"base": base, "root": root, "outside": outside, "data": data, "canary": canary, "proc": proc,
               "operator": operator}


def _port() -> int:
    from ccrawl.testing.nginx import free_port

    return free_port()


def _call(base: str, name: str, body: dict[str, Any], headers: dict[str, str] | None = None,
          method: str = "POST") -> tuple[int, str]:
    async def go() -> tuple[int, str]:
        async with aiohttp.ClientSession() as s:
            if method == "POST":
                r = await s.post(f"{base}/ops/{name}", json=body, headers=headers)
            else:
                r = await s.get(f"{base}/ops/{name}", params=body, headers=headers)
            return r.status, await r.text()

    return asyncio.run(go())


def _assert_clean(world: dict[str, Any], text: str) -> None:
    canary: Canary = world["canary"]
    assert canary.requests == [], f"the canary was reached: {canary.requests}"
    assert CANARY_TOKEN not in text and SECRET not in text and CANARY_BODY not in text


#: (operation, parameters) a client may not set: each answers 400 naming the parameter
SERVER_CONFIGURATION = [
    ("domains.diff", {"endpoint": "{canary}/api"}, "endpoint"),
    ("domains.diff", {"hub": "{canary}"}, "hub"),
    ("domains.diff", {"repo": "operator/private-data"}, "repo"),
    ("domains.diff", {"added_out": "{outside}/added.txt"}, "added_out"),
    ("news.search", {"host": "a.test", "year": 2021, "month": 3, "endpoint": "{canary}"}, "endpoint"),
    ("rank.host", {"host": "a.test", "table": "{canary}/ranks.txt.gz"}, "table"),
    ("rank.all", {"table": "{canary}/ranks.txt.gz"}, "table"),
    ("content.extract", {"urls": ["http://pinned.test/"], "resolve": {"pinned.test": "127.0.0.1"}}, "resolve"),
    ("content.extract", {"urls": ["http://a.test/"], "max_body": 3_000_000_000}, "max_body"),
    ("content.lang", {"urls": ["http://a.test/"], "verify_tls": False}, "verify_tls"),
    ("content.outlinks", {"urls": ["{canary}/page"], "allow_private_addresses": True}, "allow_private_addresses"),
    ("content.quality", {"urls": ["http://a.test/"], "concurrency": 100000}, "concurrency"),
    ("cc.fetch", {"locations": [], "ledger": "/dev/zero"}, "ledger"),
    ("cc.fetch", {"locations": [], "ledger": "{outside}/ledger.jsonl"}, "ledger"),
    ("extract.file", {"paths": ["/etc/passwd"]}, "paths"),
    ("extract.file", {"paths": ["{outside}/shadow"]}, "paths"),
    ("extract.file", {"paths": ["../outside/shadow"]}, "paths"),
    ("extract.file", {"paths": ["escape"]}, "paths"),
    ("warc.parse", {"files": ["{outside}/shadow"]}, "files"),
    ("dedup", {"paths": ["{outside}"]}, "paths"),
    ("cache.show", {"cache_dir": "/etc"}, "cache_dir"),
    ("library.list", {"root": "{outside}"}, "root"),
    ("columnar.count", {"hosts_file": "{outside}/shadow"}, "hosts_file"),
    ("columnar.count", {"local": "/"}, "local"),
    ("db.sql", {"sql": "SELECT 1", "db": "{outside}/x.duckdb"}, "db"),
    ("cc.search", {"url": "a.test", "workers": 10000}, "workers"),
]


@pytest.mark.parametrize(("name", "body", "param"), SERVER_CONFIGURATION,
                         ids=[f"{n}-{p}-{i}" for i, (n, _, p) in enumerate(SERVER_CONFIGURATION)])
def test_a_client_cannot_set_what_is_the_servers_configuration(world: dict[str, Any], name: str,
                                                               body: dict[str, Any], param: str) -> None:
    filled = json.loads(json.dumps(body).replace("{canary}", world["canary"].url)
                        .replace("{outside}", str(world["outside"])))
    status, text = _call(world["base"], name, filled)
    assert status == 400, text
    answer = json.loads(text)
    assert answer["param"] == param and answer["exit_code"] == 2
    assert "\n" not in answer["error"]
    _assert_clean(world, text)
    assert not (world["outside"] / "added.txt").exists() and not (world["outside"] / "ledger.jsonl").exists()


def test_paths_inside_the_root_are_read_and_nothing_outside_is(world: dict[str, Any]) -> None:
    status, text = _call(world["base"], "extract.file", {"paths": ["page.html"]})
    assert status == 200, text
    record = json.loads(text.splitlines()[0])
    assert record["title"] == "Inside" and "inside the root" in record["text"]
    status, text = _call(world["base"], "extract.file", {"paths": [str(world["root"] / "page.html")]})
    assert status == 200 and json.loads(text.splitlines()[0])["title"] == "Inside"
    status, text = _call(world["base"], "extract.file", {"paths": ["escape"]})  # a symlink out of the root
    assert status == 400 and "outside the server's root" in text
    _assert_clean(world, text)


def test_a_loopback_address_is_not_fetched_for_a_client(world: dict[str, Any]) -> None:
    """content.* refuse private addresses unless the operator allowed them: the canary stays untouched."""
    status, text = _call(world["base"], "content.extract", {"urls": [world["canary"].url + "/page"]})
    assert status == 200, text
    record = json.loads(text.splitlines()[0])
    assert "private" in record["error"] or "loopback" in record["error"], record
    _assert_clean(world, text)


def test_write_operations_stay_hidden_and_a_write_path_is_refused_without_allow_writes(world: dict[str, Any]) -> None:
    for name in ("cache.clear", "cc.download", "index.build", "Cache.Clear", "cache.clear/", "cache%2Eclear"):
        status, _ = _call(world["base"], name, {})
        assert status == 404, name
    status, text = _call(world["base"], "cc.fetch", {"locations": [], "ledger": "inside.jsonl"})
    assert status == 400 and "--allow-writes" in text
    assert not (world["root"] / "inside.jsonl").exists()


@pytest.mark.parametrize("headers", [
    {"Host": "evil.example:8080"},
    {"Host": "127.0.0.1.nip.io"},
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
], ids=["rebound-host", "rebound-host-2", "foreign-origin", "null-origin", "cross-site"])
def test_a_request_from_a_web_page_is_refused(world: dict[str, Any], headers: dict[str, str]) -> None:
    status, text = _call(world["base"], "url.surt", {"urls": ["http://a.test/"]}, headers=headers)
    assert status in (403, 421), text
    status, text = _call(world["base"], "url.surt", {"urls": "http://a.test/"}, headers=headers, method="GET")
    assert status in (403, 421), text


def test_the_servers_own_origin_and_plain_clients_are_answered(world: dict[str, Any]) -> None:
    base = world["base"]
    host = base.split("://", 1)[1]
    for headers in ({}, {"Origin": base}, {"Sec-Fetch-Site": "same-origin"}, {"Host": host.replace("127.0.0.1",
                                                                                                    "localhost")}):
        status, text = _call(base, "url.surt", {"urls": ["http://a.test/x"]}, headers=headers)
        assert status == 200 and json.loads(text)["surt"] == "test,a)/x", (headers, text)


def test_a_host_of_30k_labels_neither_stalls_the_server_nor_takes_long(world: dict[str, Any]) -> None:
    host = "a." * 30_000 + "com"  # 60 KB, under a value's length limit

    async def go() -> tuple[list[float], int]:
        async with aiohttp.ClientSession() as s:
            task = asyncio.ensure_future(s.post(f"{world['base']}/ops/url.domain", json={"urls": [f"http://{host}/"]}))
            waits = []
            for _ in range(5):
                started = time.monotonic()
                r = await s.get(f"{world['base']}/health")
                assert r.status == 200
                waits.append(time.monotonic() - started)
                await asyncio.sleep(0.1)
            r = await task
            await r.read()
            return waits, r.status

    waits, status = asyncio.run(go())
    assert max(waits) < 1.0, f"/health waited {max(waits):.2f} s while url.domain ran"
    assert status == 200


def test_a_token_is_wanted_for_everything_but_health(tmp_path: Path) -> None:
    token = "tok-" + "x" * 28
    with running_serve(["--addr", f"127.0.0.1:{_port()}", "--token", token], serve_env(tmp_path)) as (base, _):
        status, text = _call(base, "url.surt", {"urls": ["http://a.test/"]})
        assert status == 401 and token not in text
        status, _ = _call(base, "url.surt", {"urls": ["http://a.test/"]}, headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, text = _call(base, "url.surt", {"urls": ["http://a.test/"]},
                             headers={"Authorization": f"Bearer {token}"})
        assert status == 200 and "test,a)/" in text

        async def health() -> int:
            async with aiohttp.ClientSession() as s:
                return (await s.get(f"{base}/health")).status

        assert asyncio.run(health()) == 200


def test_the_servers_memory_stays_bounded_under_hostile_requests(world: dict[str, Any]) -> None:
    from tests.serve.hostile import rss_bytes

    before = rss_bytes(world["proc"].pid)
    for _ in range(3):
        _call(world["base"], "url.surt", {"urls": ["http://a.test/" + "x" * 60_000] * 200})
        _call(world["base"], "url.surt", {"urls": ["x" * 70_000]})  # over a value's length: refused
    after = rss_bytes(world["proc"].pid)
    assert after < before + (64 << 20), f"serve grew from {before >> 20} to {after >> 20} MiB"
    assert after < 512 << 20
    assert os.path.exists(f"/proc/{world['proc'].pid}")


#: SQL a client sends to db.sql: each refused in one line, with nothing written and nothing read
HOSTILE_SQL = [
    ("COPY (SELECT 'x') TO '{outside}/pwn.csv'", "pwn.csv"),
    ("EXPORT DATABASE '{outside}/exported'", "exported"),
    ("ATTACH '{outside}/new.duckdb' AS other", "new.duckdb"),
    ("SELECT * FROM read_text('{outside}/shadow')", None),
    ("SELECT * FROM read_csv('{outside}/shadow')", None),
    ("SELECT * FROM read_blob('/etc/passwd')", None),
    ("SELECT * FROM glob('{outside}/*')", None),
    ("INSTALL httpfs", None),
    ("LOAD '{outside}/evil.duckdb_extension'", None),
    ("SET enable_external_access = true", None),
    ("SET memory_limit = '100GB'", None),
    ("CREATE TABLE t2 AS SELECT 1", None),
    ("SELECT * FROM '{outside}/shadow'", None),
]


@pytest.mark.parametrize(("sql", "creates"), HOSTILE_SQL, ids=[q.split()[0] + str(i) for i, (q, _) in
                                                                 enumerate(HOSTILE_SQL)])
def test_client_sql_cannot_touch_files_settings_or_extensions(world: dict[str, Any], sql: str,
                                                              creates: str | None) -> None:
    status, text = _call(world["base"], "db.sql", {"sql": sql.replace("{outside}", str(world["outside"]))})
    assert status == 400, text
    answer = json.loads(text)
    assert answer["exit_code"] == 2 and "\n" not in answer["error"]
    _assert_clean(world, text)
    assert "root:" not in text  # /etc/passwd's first line
    if creates:
        assert not (world["outside"] / creates).exists()
    status, text = _call(world["base"], "db.sql", {"sql": "SELECT count(*) AS n FROM t"})
    assert status == 200 and json.loads(text) == {"n": 3}  # the database is as it was


def test_client_sql_answers_queries_over_the_database(world: dict[str, Any]) -> None:
    status, text = _call(world["base"], "db.sql", {"sql": "SELECT n, label FROM t ORDER BY n"})
    assert status == 200, text
    assert [json.loads(line) for line in text.splitlines()] == [
        {"n": 0, "label": "row 0"}, {"n": 1, "label": "row 1"}, {"n": 2, "label": "row 2"}]
    status, text = _call(world["base"], "db.sql", {"sql": "SELECT 1", "trusted": True})
    assert status == 400 and json.loads(text)["param"] == "trusted"


def _op_children(serve_pid: int) -> list[int]:
    """The operation processes: the children of serve's fork server."""
    from ccrawl.testing.procs import descendants, running

    out = []
    for pid in descendants(serve_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if b"forkserver" in cmd and ppid != serve_pid and running(pid):
            out.append(pid)
    return out


def test_a_billion_row_result_streams_and_stops_when_the_client_goes(world: dict[str, Any]) -> None:
    from ccrawl.testing.procs import still_running_after

    proc = world["proc"]

    async def go() -> tuple[list[dict[str, Any]], float, list[int]]:
        async with aiohttp.ClientSession() as s:
            started = time.monotonic()
            r = await s.post(f"{world['base']}/ops/db.sql", json={"sql": "SELECT range AS n FROM range(1000000000)"})
            assert r.status == 200
            rows = [json.loads(await r.content.readline()) for _ in range(1000)]
            first = time.monotonic() - started
            children = _op_children(proc.pid)
            r.close()
            return rows, first, children

    rows, first, children = asyncio.run(go())
    assert rows[0] == {"n": 0} and rows[-1] == {"n": 999}
    assert first < 10, f"the first 1,000 rows took {first:.1f} s: the result was not streamed"
    assert children, "no operation process was seen while the query ran"
    assert still_running_after(children, 3.0) == [], "the query's process outlived its client"


def test_a_location_of_3_gb_is_refused_before_any_request(world: dict[str, Any]) -> None:
    """The operator's own data endpoint is asked for nothing: the length is refused first."""
    operator: Canary = world["operator"]
    operator.requests.clear()
    huge = {"warc_filename": "crawl-data/x.warc.gz", "warc_record_offset": 0, "warc_record_length": 3 * 10**9}
    for batch in (False, True):
        status, text = _call(world["base"], "cc.fetch", {"locations": [huge], "batch": batch})
        assert status == 400 and "over the 64 MiB cap" in text, text
    assert operator.requests == []
    _assert_clean(world, text)
