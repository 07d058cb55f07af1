"""``user:password@`` in a hub endpoint never reaches a retry line or an error (issue #13, item 11)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from ccrawl.datasets.publish_recrawl import PublishOptions, publish
from ccrawl.errors import CcrawlError
from ccrawl.hub.hfhub import HfRepo
from ccrawl.redact import redact_userinfo
from tests.datasets.capture_shards import TOKEN, capture_rows, write_shard


@pytest.mark.parametrize(("text", "want"), [
    ("http://user:s3cret@hub.local:8080/api", "http://***@hub.local:8080/api"),
    ("GET https://tok@host/x failed; retry http://a:b@c/", "GET https://***@host/x failed; retry http://***@c/"),
    ("no creds http://host/a@b", "no creds http://host/a@b"),
    ("s3://key:secret@bucket/x", "s3://***@bucket/x"),
])
def test_redact_userinfo(text: str, want: str) -> None:
    assert redact_userinfo(text) == want


class _Busy(http.server.BaseHTTPRequestHandler):
    """A hub that is always busy: 503 to everything, whatever the credentials."""

    def _busy(self) -> None:
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _busy

    def log_message(self, *args: object) -> None:
        pass


def test_publish_retry_lines_do_not_show_the_password(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    write_shard(cap, "part-00000", capture_rows(0, 10))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://user:s3cret@127.0.0.1:{server.server_address[1]}"
        repo = HfRepo("fleet/recrawl", endpoint=endpoint, token=TOKEN, xet=False)
        lines: list[str] = []
        opts = PublishOptions(cap, repo_id="fleet/recrawl", server="s1", shard=0, shards=1, backoff=0.05,
                              backoff_max=0.1, max_stall=2.0)
        with pytest.raises(CcrawlError) as err:
            publish(opts, repo, log=lines.append)
        lines.append(str(err.value))
    finally:
        server.shutdown()
    retry_lines = [line for line in lines if "retrying" in line]
    assert retry_lines, lines
    assert not [line for line in lines if "s3cret" in line], lines
    assert all("***@127.0.0.1" in line for line in retry_lines), retry_lines


class _Status(http.server.BaseHTTPRequestHandler):
    """A hub that answers every request with the status in the server's ``status`` attribute."""

    def _answer(self) -> None:
        body = b'{"error": "no"}'
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("status", [418, 500])
def test_verbose_traceback_does_not_show_the_password(status: int, tmp_path: Path) -> None:
    """``-v`` prints the traceback; httpx's error in it carries the URL, user-info and all (issue #36, item 8)."""
    import os
    import subprocess
    import sys

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    server.status = status  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {**os.environ, "HF_ENDPOINT": f"http://u:SECRET@127.0.0.1:{server.server_address[1]}",
               "HF_TOKEN": TOKEN, "HF_HUB_DISABLE_XET": "1", "CCRAWL_BACKOFF": "0.01", "CCRAWL_BACKOFF_MAX": "0.02",
               "CCRAWL_CONFIG_DIR": str(tmp_path / "config"), "CCRAWL_DATA_DIR": str(tmp_path / "data")}
        env.pop("CCRAWL_HUB", None)
        proc = subprocess.run([sys.executable, "-m", "ccrawl", "-v", "domains", "recount", "--graph",
                               "cc-main-2024-feb-apr-may", "--no-push"], env=env, capture_output=True, text=True,
                              timeout=120)
    finally:
        server.shutdown()
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr  # -v really printed one
    assert "SECRET" not in proc.stderr and "SECRET" not in proc.stdout, proc.stderr[-3000:]
    assert "***@127.0.0.1" in proc.stderr
