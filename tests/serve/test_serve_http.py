"""serve: every registered operation as NDJSON over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import aiohttp
import pytest
from aiohttp import web

from ccrawl import ops
from ccrawl.errors import UsageError
from ccrawl.ops.caps import Bounds, Cap, Value
from ccrawl.serve import ops_http
from ccrawl.serve.worker import Budget, Runner
from ccrawl.testing.nginx import free_port
from tests.serve.hostile import wait_listening

REPO = Path(__file__).resolve().parents[2]


async def _client_for(app: web.Application) -> tuple[web.AppRunner, str]:
    """Serve ``app`` on a loopback port; returns the runner and the base URL."""
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def make_app(registry: dict[str, ops.Operation], **kw: Any) -> web.Application:
    """The app with operations run in forked children, which see the operations a test registers."""
    kw.setdefault("runner", Runner(start_method="fork"))
    return ops_http.make_app(registry, **kw)


@pytest.fixture()
def scratch_ops() -> Iterator[dict[str, ops.Operation]]:
    """A copy of the registry with test operations added; the real one is restored after."""
    registry = dict(ops.load_all())
    before = set(ops.REGISTRY)
    yield registry
    for name in set(ops.REGISTRY) - before:
        del ops.REGISTRY[name]


def test_an_operation_added_to_the_registry_gets_an_endpoint_with_no_other_code(scratch_ops: dict) -> None:
    @ops.operation("test.countdown", summary="count down", columns=("n",))
    def countdown(
        start: Annotated[int, Cap.VALUE, Bounds(0, 100)], word: Value[str] = "go"
    ) -> Iterator[dict[str, object]]:
        for n in range(start, 0, -1):
            yield {"n": n, "word": word}

    registry = dict(ops.REGISTRY)

    async def main() -> None:
        runner, base = await _client_for(make_app(registry))
        try:
            async with aiohttp.ClientSession() as s:
                listing = await (await s.get(f"{base}/ops")).json()
                names = {o["name"] for o in listing["operations"]}
                assert "test.countdown" in names and "url.surt" in names
                entry = next(o for o in listing["operations"] if o["name"] == "test.countdown")
                assert entry["input_schema"]["required"] == ["start"]
                assert entry["input_schema"]["properties"]["start"] == {"type": "integer", "minimum": 0, "maximum": 100}
                r = await s.get(f"{base}/ops/test.countdown", params={"start": "3", "word": "up"})
                assert r.status == 200 and r.headers["Content-Type"].startswith("application/x-ndjson")
                lines = [json.loads(x) for x in (await r.text()).splitlines()]
                assert lines == [{"n": 3, "word": "up"}, {"n": 2, "word": "up"}, {"n": 1, "word": "up"}]
                r = await s.post(f"{base}/ops/test.countdown", json={"start": 1})
                assert [json.loads(x) for x in (await r.text()).splitlines()] == [{"n": 1, "word": "go"}]
        finally:
            await runner.cleanup()

    _run(main())


def test_bad_parameters_answer_400_with_the_parameter_and_the_reason() -> None:
    registry = ops.load_all()

    async def main() -> None:
        runner, base = await _client_for(make_app(registry, max_body=1 << 20))
        try:
            async with aiohttp.ClientSession() as s:
                r = await s.get(f"{base}/ops/url.shard", params={"urls": "http://a.test/", "shards": "many"})
                body = await r.json()
                assert r.status == 400 and body["param"] == "shards" and "integer" in body["error"]
                r = await s.get(f"{base}/ops/url.surt", params={"nope": "1"})
                body = await r.json()
                assert r.status == 400 and body["param"] == "nope" and "not a parameter" in body["error"]
                r = await s.get(f"{base}/ops/url.surt")
                assert r.status == 400 and (await r.json())["param"] == "urls"
                r = await s.post(f"{base}/ops/url.surt", data=b"{not json")
                assert r.status == 400 and "not JSON" in (await r.json())["error"]
                r = await s.post(f"{base}/ops/url.surt", json=["a"])
                assert r.status == 400
                r = await s.post(f"{base}/ops/url.surt", json={"urls": ["http://a.test/" + "x" * 1000] * 3000})
                assert r.status == 413 and "several requests" in (await r.json())["error"]
                r = await s.get(f"{base}/ops/no.such")
                assert r.status == 404
                r = await s.get(f"{base}/ops/url.surt", params={"urls": "-"})
                assert r.status == 400 and "standard input" in (await r.json())["error"]
        finally:
            await runner.cleanup()

    _run(main())


def test_records_stream_with_the_same_values_as_the_operation() -> None:
    registry = ops.load_all()
    # NEL and LINE SEPARATOR end a line for str.splitlines (and older JavaScript): escaped on the wire
    urls = ["https://www.Example.co.uk:443/a/./b/?utm_source=x&id=7", "http://news.bbc.co.uk/sport",
            "http://a.test/\x85x\u2028y"]

    async def main() -> list[dict[str, Any]]:
        runner, base = await _client_for(make_app(registry))
        try:
            async with aiohttp.ClientSession() as s:
                r = await s.post(f"{base}/ops/url.shard", json={"urls": urls, "shards": 3})
                assert r.status == 200
                return [json.loads(x) for x in (await r.text()).splitlines()]
        finally:
            await runner.cleanup()

    got = _run(main())
    want = [json.loads(json.dumps(dict(r))) for r in ops.get("url.shard")(urls=urls, shards=3)]
    assert got == want and len(got) == 3


def test_write_operations_are_hidden_unless_allowed(scratch_ops: dict, tmp_path: Path) -> None:
    @ops.operation("test.writer", summary="writes", writes=True)
    def writer() -> Iterator[dict[str, object]]:
        yield {"wrote": True}

    registry = dict(ops.REGISTRY)

    async def main(allow: bool) -> tuple[int, set[str]]:
        runner, base = await _client_for(make_app(registry, allow_writes=allow,
                                                  defaults={"cache.clear": {"cache_dir": str(tmp_path)}}))
        try:
            async with aiohttp.ClientSession() as s:
                names = {o["name"] for o in (await (await s.get(f"{base}/ops")).json())["operations"]}
                return (await s.get(f"{base}/ops/test.writer")).status, names
        finally:
            await runner.cleanup()

    status, names = _run(main(False))
    assert status == 404 and "test.writer" not in names and "cache.clear" not in names
    status, names = _run(main(True))
    assert status == 200 and {"test.writer", "cache.clear"} <= names


def test_an_error_before_the_first_record_is_a_status_and_after_it_a_partial_last_line(scratch_ops: dict) -> None:
    @ops.operation("test.fails", summary="fails")
    def fails(after: Annotated[int, Cap.VALUE, Bounds(0, 10)]) -> Iterator[dict[str, object]]:
        for n in range(after):
            yield {"n": n}
        raise UsageError("the third record is bad")

    registry = dict(ops.REGISTRY)

    async def main() -> None:
        runner, base = await _client_for(make_app(registry))
        try:
            async with aiohttp.ClientSession() as s:
                r = await s.get(f"{base}/ops/test.fails", params={"after": "0"})
                assert r.status == 400 and (await r.json())["exit_code"] == 2
                r = await s.get(f"{base}/ops/test.fails", params={"after": "2"})
                lines = [json.loads(x) for x in (await r.text()).splitlines()]
                assert r.status == 200 and lines[:2] == [{"n": 0}, {"n": 1}]
                assert lines[2] == {"error": "the third record is bad", "exit_code": 2, "partial": True}
        finally:
            await runner.cleanup()

    _run(main())


def test_a_client_that_disconnects_cancels_its_operation(scratch_ops: dict, tmp_path: Path) -> None:
    produced = tmp_path / "produced"
    closed = tmp_path / "closed"

    @ops.operation("test.endless", summary="endless")
    def endless() -> Iterator[dict[str, object]]:
        try:
            n = 0
            while True:
                with produced.open("a") as fh:
                    fh.write(f"{n}\n")
                yield {"n": n}
                n += 1
                time.sleep(0.01)
        finally:
            closed.write_text("closed")

    registry = dict(ops.REGISTRY)

    async def main() -> None:
        runner, base = await _client_for(make_app(registry))
        try:
            async with aiohttp.ClientSession() as s:
                r = await s.get(f"{base}/ops/test.endless")
                first = await r.content.readline()
                assert json.loads(first) == {"n": 0}
                r.close()
            await asyncio.sleep(0.05)
            for _ in range(100):
                if closed.exists():
                    break
                await asyncio.sleep(0.05)
        finally:
            await runner.cleanup()

    _run(main())
    assert closed.exists(), "the operation's generator was not closed after the client went away"
    count = len(produced.read_text().splitlines())
    time.sleep(0.3)
    assert len(produced.read_text().splitlines()) == count, "the operation kept producing after it was cancelled"


def test_first_record_of_a_slow_operation_arrives_at_once_and_100_clients_are_served(scratch_ops: dict) -> None:
    @ops.operation("test.slow", summary="slow stream")
    def slow(count: Annotated[int, Cap.VALUE, Bounds(0, 10)] = 5) -> Iterator[dict[str, object]]:
        for n in range(count):
            yield {"n": n}
            time.sleep(0.2)

    registry = dict(ops.REGISTRY)

    async def main() -> tuple[float, list[int]]:
        # 100 clients, 25 operations at once: the others wait for a slot (none is refused). The wait allowed
        # is long: on a loaded machine the fourth wave of forks waited past the default 10 s and was refused,
        # which is the budget working (tests/serve/test_budgets.py), not what this test is about
        app = make_app(registry, runner=Runner(Budget(concurrent=25, queue_length=100, queue_seconds=300.0),
                                               start_method="fork"))
        runner, base = await _client_for(app)
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as s:
                started = time.monotonic()
                r = await s.get(f"{base}/ops/test.slow")
                await r.content.readline()
                first = time.monotonic() - started
                rest = await r.text()
                assert len(rest.splitlines()) == 4

                async def one() -> int:
                    resp = await s.get(f"{base}/ops/test.slow", params={"count": "3"})
                    return len((await resp.text()).splitlines())

                counts = await asyncio.gather(*(one() for _ in range(100)))
                return first, list(counts)
        finally:
            await runner.cleanup()

    first, counts = _run(main())
    # a latency budget, not a speed claim: the first record must not wait for the stream to end (1 s)
    assert first < 0.5, f"first record took {first:.3f} s"
    assert counts == [3] * 100, f"responses of other than 3 records: {[c for c in counts if c != 3]}"


def _spawn(args: list[str], env_extra: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config",
           **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "ccrawl", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def _wait_listening(proc: subprocess.Popen[str]) -> str:
    return wait_listening(proc, 30)[1]


def test_serve_command_binds_loopback_by_default_and_off_loopback_needs_a_token(tmp_path: Path) -> None:
    port = free_port()
    proc = _spawn(["serve", "--addr", f"127.0.0.1:{port}", "--data-dir", str(tmp_path)])
    try:
        err = _wait_listening(proc)
        assert "warning" not in err and "write operations hidden" in err

        async def get() -> list[dict[str, Any]]:
            async with aiohttp.ClientSession() as s:
                r = await s.get(f"http://127.0.0.1:{port}/ops/url.surt", params={"urls": "http://a.test/x"})
                return [json.loads(x) for x in (await r.text()).splitlines()]

        assert _run(get()) == [{"url": "http://a.test/x", "surt": "test,a)/x"}]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    port = free_port()
    proc = _spawn(["serve", "--addr", f":{port}", "--data-dir", str(tmp_path)])
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "--token" in err and err.strip().count("\n") == 0
    port = free_port()
    proc = _spawn(["serve", "--addr", f":{port}", "--data-dir", str(tmp_path)],
                  env_extra={"CCRAWL_SERVE_TOKEN": "t" * 24})
    try:
        err = _wait_listening(proc)
        assert "beyond this machine" in err and "bearer token" in err
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_serve_refuses_a_bad_address_and_a_busy_port_in_one_line() -> None:
    proc = _spawn(["serve", "--addr", "nonsense"])
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and err.strip().count("\n") == 0 and "--addr" in err
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = _spawn(["serve", "--addr", f"127.0.0.1:{busy.getsockname()[1]}"])
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and "cannot listen" in err and "Traceback" not in err


def test_an_operation_whose_store_does_not_exist_yet_answers_503_with_how_to_make_it(tmp_path: Path) -> None:
    registry = ops.load_all()
    defaults = {"index.search": {"dir": str(tmp_path / "index")}, "db.sql": {"db": str(tmp_path / "none.duckdb")}}

    async def main() -> list[tuple[int, dict[str, Any]]]:
        runner, base = await _client_for(make_app(registry, defaults=defaults))
        try:
            async with aiohttp.ClientSession() as s:
                out = []
                for name, body in (("index.search", {"query": "x"}), ("db.sql", {"sql": "SELECT 1"})):
                    r = await s.post(f"{base}/ops/{name}", json=body)
                    out.append((r.status, await r.json()))
                return out
        finally:
            await runner.cleanup()

    (s1, index), (s2, db) = _run(main())
    assert s1 == 503 and "ccrawl index build" in index["error"]
    assert s2 == 503 and "ccrawl db load" in db["error"]
