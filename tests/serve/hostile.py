"""What the hostile-client tests share: a canary server that records every request it gets, and a
real ``ccrawl serve`` process started the way an operator starts it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the operator's Hub token in the server's environment; no answer may ever carry it
CANARY_TOKEN = "hf_canaryTOKEN0123456789abcdefXYZ"
#: what the canary server answers: no answer of the server's may carry it either
CANARY_BODY = "CANARY-PAGE-CONTENT-7f3a"


@dataclass
class Canary:
    """A loopback HTTP server that must never be reached: it records every request."""

    url: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def canary_server() -> Iterator[Canary]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append(f"{self.command} {self.path} auth={self.headers.get('Authorization')}")
            body = f"<html><body><p>{CANARY_BODY}</p></body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_HEAD = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Canary(f"http://127.0.0.1:{server.server_address[1]}", seen)
    finally:
        server.shutdown()
        server.server_close()


def serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config",
            "HF_TOKEN": CANARY_TOKEN, "CCRAWL_DATA_DIR": str(data_dir), **extra}


def wait_listening(proc: subprocess.Popen[str], seconds: float = 60) -> tuple[str, str]:
    """Read ``ccrawl serve``'s stderr until it says where it listens: (base URL, what it printed)."""
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("serve: listening on"):
            return line.split("listening on", 1)[1].strip(), "".join(lines)
    proc.kill()
    raise AssertionError("serve did not start: " + "".join(lines))


@contextmanager
def running_serve(args: list[str], env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``ccrawl serve ARGS`` until it says where it listens; yields (base URL, process)."""
    proc = subprocess.Popen([sys.executable, "-m", "ccrawl", "serve", *args], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base, _ = wait_listening(proc)
    drain = threading.Thread(target=lambda: [None for _ in proc.stderr or ()], daemon=True)
    drain.start()
    try:
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def make_places(top: Path, secret: str) -> dict[str, Path]:
    """``root`` (what clients may name), ``data`` (the server's data dir, with a DuckDB file holding
    table ``t``) and ``outside`` (a file holding ``secret``, which no answer may carry)."""
    import duckdb

    places = {name: top / name for name in ("root", "data", "outside")}
    for d in places.values():
        d.mkdir()
    (places["outside"] / "shadow").write_text(secret + "\n")
    (places["root"] / "page.html").write_text("<html><head><title>Inside</title></head><body><p>inside the root"
                                              "</p></body></html>")
    con = duckdb.connect(str(places["data"] / "ccrawl.duckdb"))
    con.execute("CREATE TABLE t AS SELECT range AS n, 'row ' || range AS label FROM range(3)")
    con.close()
    return places


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm", "rb") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
