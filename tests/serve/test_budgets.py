"""serve's budgets per request: wall-clock time, memory, operations at once, and cancellation of
operations that emit nothing, each over real HTTP on loopback, with /health answering throughout."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import aiohttp
import pytest
from aiohttp import web

from ccrawl import ops
from ccrawl.ops.caps import Bounds, Cap
from ccrawl.serve import ops_http
from ccrawl.serve.worker import Budget, Runner
from ccrawl.testing.nginx import free_port

Seconds = Annotated[float, Cap.VALUE, Bounds(0, 120)]


@pytest.fixture()
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Test operations in the registry (a forked child sees them); each writes its pid under tmp_path."""
    before = set(ops.REGISTRY)
    pids = tmp_path / "pids"
    pids.mkdir()

    def mark(kind: str) -> None:
        (pids / f"{kind}-{os.getpid()}").write_text("")

    @ops.operation("test.sleeper", summary="emits nothing for a while")
    def sleeper(seconds: Seconds = 30) -> Iterator[dict[str, object]]:
        mark("sleeper")
        time.sleep(seconds)
        yield {"slept": seconds}

    @ops.operation("test.spin", summary="keeps a core busy and emits nothing")
    def spin() -> Iterator[dict[str, object]]:
        mark("spin")
        while True:
            pass
        yield {}

    @ops.operation("test.hog", summary="takes memory")
    def hog(mb: Annotated[int, Cap.VALUE, Bounds(1, 4096)] = 400) -> Iterator[dict[str, object]]:
        mark("hog")
        block = bytearray(mb << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(10)
        yield {"mb": mb}

    @ops.operation("test.quick", summary="one record")
    def quick() -> Iterator[dict[str, object]]:
        yield {"ok": True}

    yield pids
    for name in set(ops.REGISTRY) - before:
        del ops.REGISTRY[name]


async def _serve(budget: Budget) -> tuple[web.AppRunner, str]:
    app = ops_http.make_app(dict(ops.REGISTRY), runner=Runner(budget, start_method="fork"))
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


def _pids(pids: Path, kind: str) -> list[int]:
    return [int(p.name.split("-")[1]) for p in pids.iterdir() if p.name.startswith(kind)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def _health_waits(s: aiohttp.ClientSession, base: str, n: int = 5) -> float:
    worst = 0.0
    for _ in range(n):
        started = time.monotonic()
        r = await s.get(f"{base}/health")
        assert r.status == 200
        worst = max(worst, time.monotonic() - started)
        await asyncio.sleep(0.1)
    return worst


def test_an_operation_past_the_wall_clock_limit_is_stopped_with_504(scratch: Path) -> None:
    async def main() -> tuple[int, dict[str, Any], float]:
        runner, base = await _serve(Budget(seconds=1.0))
        try:
            async with aiohttp.ClientSession() as s:
                started = time.monotonic()
                r = await s.get(f"{base}/ops/test.sleeper")
                return r.status, await r.json(), time.monotonic() - started
        finally:
            await runner.cleanup()

    status, body, took = asyncio.run(main())
    assert status == 504 and "limit of 1 s" in body["error"] and body["exit_code"] == 75
    assert took < 4
    assert not any(_alive(pid) for pid in _pids(scratch, "sleeper"))


def test_an_operation_over_the_memory_ceiling_is_stopped_and_the_server_keeps_answering(scratch: Path) -> None:
    async def main() -> tuple[int, dict[str, Any], float]:
        runner, base = await _serve(Budget(memory_mb=128))
        try:
            async with aiohttp.ClientSession() as s:
                task = asyncio.ensure_future(s.get(f"{base}/ops/test.hog", params={"mb": "400"}))
                worst = await _health_waits(s, base)
                r = await task
                return r.status, await r.json(), worst
        finally:
            await runner.cleanup()

    status, body, worst = asyncio.run(main())
    assert status == 507 and "memory ceiling of 128 MiB" in body["error"]
    assert worst < 1.0
    assert not any(_alive(pid) for pid in _pids(scratch, "hog"))


def test_past_the_operations_at_once_a_request_waits_then_is_refused_with_503(scratch: Path) -> None:
    async def main() -> tuple[int, str | None, int, int]:
        runner, base = await _serve(Budget(concurrent=1, queue_length=1, queue_seconds=0.5))
        try:
            async with aiohttp.ClientSession() as s:
                first = asyncio.ensure_future(s.get(f"{base}/ops/test.sleeper", params={"seconds": "3"}))
                await asyncio.sleep(0.5)
                waited = asyncio.ensure_future(s.get(f"{base}/ops/test.quick"))  # waits 0.5 s, then 503
                await asyncio.sleep(0.1)
                over = await s.get(f"{base}/ops/test.quick")  # the queue is full: refused at once
                health = await s.get(f"{base}/health")
                w = await waited
                f = await first
                return over.status, over.headers.get("Retry-After"), w.status, f.status + health.status * 0
        finally:
            await runner.cleanup()

    over, retry, waited, first = asyncio.run(main())
    assert over == 503 and retry == "1"
    assert waited == 503
    assert first == 200


def test_a_client_that_goes_away_stops_an_operation_that_emits_nothing(scratch: Path) -> None:
    async def main() -> None:
        runner, base = await _serve(Budget())
        try:
            async with aiohttp.ClientSession() as s:
                task = asyncio.ensure_future(s.get(f"{base}/ops/test.spin"))
                for _ in range(100):
                    if _pids(scratch, "spin"):
                        break
                    await asyncio.sleep(0.05)
                assert _pids(scratch, "spin"), "the operation never started"
                task.cancel()  # the client goes away
                with pytest.raises(asyncio.CancelledError):
                    await task
            gone_by = time.monotonic() + 2.0
            while time.monotonic() < gone_by and any(_alive(p) for p in _pids(scratch, "spin")):
                await asyncio.sleep(0.05)
        finally:
            await runner.cleanup()

    started = time.monotonic()
    asyncio.run(main())
    pid = _pids(scratch, "spin")[0]
    assert not _alive(pid), "the busy operation outlived its client"
    assert time.monotonic() - started < 10


def test_every_child_is_gone_when_the_server_stops(scratch: Path) -> None:
    async def main() -> None:
        runner, base = await _serve(Budget())
        async with aiohttp.ClientSession() as s:
            tasks = [asyncio.ensure_future(s.get(f"{base}/ops/test.sleeper")) for _ in range(2)]
            for _ in range(100):
                if len(_pids(scratch, "sleeper")) == 2:
                    break
                await asyncio.sleep(0.05)
            await runner.cleanup()
            for t in tasks:
                t.cancel()

    asyncio.run(main())
    time.sleep(0.3)
    assert len(_pids(scratch, "sleeper")) == 2
    assert not any(_alive(p) for p in _pids(scratch, "sleeper"))


def test_an_error_frame_keeps_the_operations_status_and_a_dead_child_is_said(scratch: Path) -> None:
    @ops.operation("test.dies", summary="dies without a word")
    def dies() -> Iterator[dict[str, object]]:
        yield {"n": 1}
        time.sleep(0.3)  # the record goes out while the operation works
        os._exit(9)

    async def main() -> list[dict[str, Any]]:
        runner, base = await _serve(Budget())
        try:
            async with aiohttp.ClientSession() as s:
                r = await s.get(f"{base}/ops/test.dies")
                return [json.loads(line) for line in (await r.text()).splitlines()]
        finally:
            await runner.cleanup()

    lines = asyncio.run(main())
    assert lines[0] == {"n": 1}
    assert lines[-1]["partial"] is True and "ended abnormally" in lines[-1]["error"]
