"""`ccrawl api` end to end: the host store loaded from the fake web graph, a real index, real HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from ccrawl.store.textindex import Document, build
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.webgraph import HOSTS
from ccrawl.testing.nginx import free_port

REPO = Path(__file__).resolve().parents[2]


def _env(cc: FakeCCServer, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_COLLINFO_ENDPOINT": f"{cc.url}/collinfo.json",
            "CCRAWL_DATA_ENDPOINT": cc.url, "CCRAWL_CDX_ENDPOINT": cc.url, "CCRAWL_GLOBAL_RATE": "0",
            "CCRAWL_BACKOFF": "10ms", "CCRAWL_DATA_DIR": str(tmp_path / "data"),
            "CCRAWL_CONFIG_DIR": str(tmp_path / "no-config")}


def _start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "ccrawl", "api", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("api: listening on"):
            return proc, "".join(lines)
    proc.kill()
    raise AssertionError("api did not start: " + "".join(lines) + proc.stderr.read())


def _get(port: int, paths: list[str], headers: dict[str, str] | None = None) -> list[tuple[int, Any]]:
    async def main() -> list[tuple[int, Any]]:
        async with aiohttp.ClientSession() as s:
            out = []
            for path in paths:
                r = await s.get(f"http://127.0.0.1:{port}{path}", headers=headers)
                out.append((r.status, await r.json()))
            return out

    return asyncio.run(main())


def test_api_loads_the_host_store_from_the_web_graph_and_serves_search(graph_cc: FakeCCServer, tmp_path: Path) -> None:
    build(tmp_path / "idx", [Document("http://go.test/", "golang web server", "Go")])
    port = free_port()
    proc, err = _start(["--addr", f"127.0.0.1:{port}", "--index-dir", str(tmp_path / "idx"), "--max-hosts", "5"],
                       _env(graph_cc, tmp_path))
    try:
        assert "5 hosts from" in err and "warning" not in err
        [(s1, one), (s2, top), (s3, beyond), (s4, found), (s5, health)] = _get(port, [
            f"/v2/host/{HOSTS[0]}", "/v2/hosts?n=3", f"/v2/host/{HOSTS[6]}", "/v2/search?q=golang", "/v2/health"])
        assert s1 == 200 and one["host"] == HOSTS[0] and one["harmonic_centrality_rank"] == 1
        assert s2 == 200 and [h["host"] for h in top["hosts"]] == list(HOSTS[:3])
        assert s3 == 404 and "not among the 5 hosts" in beyond["error"]  # past --max-hosts: not loaded
        assert s4 == 200 and found["results"][0]["url"] == "http://go.test/"
        assert s5 == 200 and health["stores"]["hosts"]["count"] == 5 and health["stores"]["search"]["loaded"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0


def test_api_off_loopback_needs_a_token_and_a_failed_host_load_is_fatal(graph_cc: FakeCCServer,
                                                                         tmp_path: Path) -> None:
    port = free_port()
    done = subprocess.run([sys.executable, "-m", "ccrawl", "api", "--addr", f"0.0.0.0:{port}", "--max-hosts", "2"],
                          env=_env(graph_cc, tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--token" in done.stderr and done.stderr.strip().count("\n") == 0
    token = "an-api-token-of-enough-length"
    proc, err = _start(["--addr", f"0.0.0.0:{port}", "--max-hosts", "2", "--token", token], _env(graph_cc, tmp_path))
    try:
        assert "beyond this machine" in err
        [(status, body)] = _get(port, ["/v2/search?q=x"])
        assert status == 401  # every route but /v2/health wants the token
        [(status, body)] = _get(port, ["/v2/search?q=x"], headers={"Authorization": f"Bearer {token}"})
        assert status == 503 and "--index-dir" in body["error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    env = _env(graph_cc, tmp_path)
    env["CCRAWL_COLLINFO_ENDPOINT"] = f"{graph_cc.url}/nowhere/collinfo.json"
    done = subprocess.run([sys.executable, "-m", "ccrawl", "api", "--addr", f"127.0.0.1:{free_port()}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr and done.stderr.strip().count("\n") <= 1
