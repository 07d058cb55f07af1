"""Offline and unreachable fail fast and say so: a name that does not resolve is an answer, not a blip.

Names under ``.invalid`` never resolve (RFC 6761), so the lookups below get an NXDOMAIN-type answer
from whatever resolver the machine has, or from c-ares' own refusal: no request leaves loopback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.errors import Unreachable
from ccrawl.net.client import name_not_known, run, seconds

REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _RawServer:
    """A loopback TCP server that does one thing to every connection, for faults HTTP servers cannot make.

    ``cut``: reads the request, sends the headers and part of the body, then closes (bytes arrived: a
    transient failure, retried). ``reset``: closes at once with SO_LINGER 0, so the peer sees RST before
    any byte (not transient: fails fast).
    """

    def __init__(self, mode: str) -> None:
        import threading

        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import struct

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                if self.mode == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    continue
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n[{\"id\"")
                except OSError:
                    pass

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/collinfo.json"

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def cutting() -> Iterator[_RawServer]:
    server = _RawServer("cut")
    yield server
    server.close()


@pytest.fixture
def resetting() -> Iterator[_RawServer]:
    server = _RawServer("reset")
    yield server
    server.close()


def _cli(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_GLOBAL_RATE": "0", **env}
    full.pop("HTTPS_PROXY", None)
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], capture_output=True, text=True, env=full,
                          timeout=120)


def test_a_name_that_does_not_resolve_fails_at_once_with_exit_8() -> None:
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint="http://cc-mirror.invalid/collinfo.json",
            global_rate=0, retries=6, backoff=2.0, warn=said.append)
    assert info.value.exit_code == 8
    assert "the name cc-mirror.invalid does not resolve" in str(info.value)
    assert said == []  # no retry, so no retry line
    assert time.monotonic() - started < 10  # six retries at 2 s backoff would be > 60 s


def test_the_command_line_fails_fast_on_an_unknown_name_with_one_line() -> None:
    started = time.monotonic()
    proc = _cli(["crawls", "list", "--no-cache"], CCRAWL_COLLINFO_ENDPOINT="http://cc-mirror.invalid/collinfo.json",
                CCRAWL_RETRIES="6", CCRAWL_BACKOFF="2s")
    assert proc.returncode == 8, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccrawl: ") and "does not resolve" in lines[0], proc.stderr
    assert "retrying" not in proc.stderr
    assert time.monotonic() - started < 20


def test_a_refused_connection_fails_at_once_with_exit_8() -> None:
    """Nothing listens there: an answer (ECONNREFUSED), not a blip, so no retry (issue #36, item 9)."""
    url = f"http://127.0.0.1:{_closed_port()}/collinfo.json"
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint=url, global_rate=0, retries=6, backoff=2.0,
            warn=said.append)
    assert info.value.exit_code == 8
    assert url in str(info.value) and "refused the connection" in str(info.value), str(info.value)
    assert said == []
    assert time.monotonic() - started < 2


def test_the_command_line_fails_fast_on_a_refused_port_with_one_line() -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}/collinfo.json"
    started = time.monotonic()
    proc = _cli(["crawls", "list", "--no-cache"], CCRAWL_COLLINFO_ENDPOINT=endpoint)  # default retries and backoff
    elapsed = time.monotonic() - started
    assert proc.returncode == 8, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccrawl: ") and endpoint in lines[0], proc.stderr
    assert elapsed < 3, elapsed


def test_a_reset_before_any_byte_fails_fast(resetting: _RawServer) -> None:
    """A host that answers RST at once: tried once more at once (a kept-alive connection the server had
    closed looks the same), then exit 8 -- no backoff."""
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint=resetting.url, global_rate=0, retries=6,
            backoff=2.0, warn=said.append)
    assert info.value.exit_code == 8 and "reset the connection" in str(info.value), str(info.value)
    assert said == [] and resetting.connections == 2
    assert time.monotonic() - started < 2


def test_a_connection_cut_after_bytes_arrived_is_still_retried(cutting: _RawServer) -> None:
    said: list[str] = []
    with pytest.raises(Unreachable, match="3 attempts"):
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint=cutting.url, global_rate=0, retries=2,
            backoff=0.01, warn=said.append)
    assert cutting.connections == 3


def test_transient_failures_retry_with_a_visible_line_when_the_wait_passes_a_second(cutting: _RawServer) -> None:
    url = cutting.url  # cut mid-body: transient, retried
    said: list[str] = []
    with pytest.raises(Unreachable, match="3 attempts"):
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint=url, global_rate=0, retries=2,
            backoff=2.0, backoff_max=2.0, warn=said.append)
    assert len(said) == 2, said
    assert "retrying (1/2) in " in said[0] and "retrying (2/2) in " in said[1]
    assert said[0].startswith("ccrawl: 127.0.0.1:") and said[0].endswith(" s")
    waits = [int(line.rsplit(" in ", 1)[1].removesuffix(" s")) for line in said]
    assert all(1 <= w <= 2 for w in waits)


def test_short_waits_are_not_announced(cutting: _RawServer) -> None:
    url = cutting.url
    said: list[str] = []
    with pytest.raises(Unreachable):
        run(lambda cc: cc.get(cc.collinfo_endpoint), collinfo_endpoint=url, global_rate=0, retries=2, backoff=0.01,
            warn=said.append)
    assert said == []


def test_retries_is_a_flag_and_its_value_reaches_the_client(cutting: _RawServer) -> None:
    endpoint = cutting.url
    none = _cli(["crawls", "list", "--no-cache", "--retries", "0"], CCRAWL_COLLINFO_ENDPOINT=endpoint)
    assert none.returncode == 8 and "(1 attempt)" in none.stderr and "retrying" not in none.stderr, none.stderr
    one = _cli(["--retries", "1", "crawls", "list", "--no-cache"], CCRAWL_COLLINFO_ENDPOINT=endpoint,
               CCRAWL_BACKOFF="2s")
    assert one.returncode == 8 and "(2 attempts)" in one.stderr, one.stderr
    assert "retrying (1/1) in " in one.stderr
    assert "--retries" in _cli(["crawls", "list", "--help"]).stdout


def test_which_dns_failures_count_as_an_answer() -> None:
    import aiodns

    assert name_not_known(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    assert not name_not_known(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"))
    # aiohttp's c-ares resolver hides the code behind an OSError(None, msg) raised from aiodns' error
    for code, expected in ((4, True), (1, True), (12, False)):  # ENOTFOUND, ENODATA, ETIMEOUT
        try:
            try:
                raise aiodns.error.DNSError(code, "x")
            except aiodns.error.DNSError as exc:
                raise OSError(None, "Domain name not found") from exc
        except OSError as wrapped:
            assert name_not_known(wrapped) is expected, code
    assert not name_not_known(ConnectionRefusedError(111, "refused"))


def test_one_duration_parser_for_the_client_and_the_config() -> None:
    from ccrawl.config import parse_duration

    for text in ("2d", "1w", "1m30s", "500ms", "2", "1h30m"):
        assert seconds(text) == parse_duration(text)
    assert seconds("2d") == 172800.0
