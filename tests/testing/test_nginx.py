"""The nginx stand-in: a real nginx on loopback answering any host name from one root."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from ccrawl.testing.nginx import NginxServer


def test_nginx_serves_pages_to_any_host_name_and_stops(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "1.html").write_bytes(b"<html><title>one</title></html>")
    with NginxServer(tmp_path) as web:
        for host in ("a.test", "b.example.test"):
            req = urllib.request.Request(f"http://127.0.0.1:{web.port}/p/1.html", headers={"Host": host})
            with urllib.request.urlopen(req, timeout=5) as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"].startswith("text/html")
                assert resp.read() == b"<html><title>one</title></html>"
        port = web.port
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/p/1.html", timeout=2)
    except OSError:
        pass
    else:
        raise AssertionError("nginx still answers after the context manager closed")
