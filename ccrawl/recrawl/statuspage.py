"""A read-only status page for a running recrawl (or a fleet of them), on the metrics port.

``--metrics-addr host:port`` serves, from one small threaded HTTP server:

    GET /              the page: progress, rate and error plots over time, stage queues, slowest
                       hosts, the last errors (self-contained: no script or font from elsewhere)
    GET /status.json   what the page draws: the latest tick, the history, the last errors
    GET /metrics       the Prometheus gauges (the same registry as before)

It is read-only (anything but GET and HEAD is 405) and answers only for its own host names (a
page elsewhere cannot rebind a name to it and read it: 421), as ``ccrawl serve`` does. The history
keeps one point per tick for the last :data:`KEEP` ticks and thins older ones, so a run of weeks
holds a few thousand points.
"""

from __future__ import annotations

import html
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEEP = 1800  #: recent ticks kept one for one (an hour at 2 s ticks)
OLD = 1200  #: older points, thinned to every tenth
#: tick fields plotted over time, when a tick carries them
SERIES = ("done", "fetched", "durable", "rows", "failed", "pages_per_s", "rate", "bytes", "queue_bytes")


class History:
    """The ticks of one run: the latest, a thinning history of numbers, the last errors."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: dict[str, object] = {}
        self.recent: deque[dict[str, float]] = deque()
        self.old: deque[dict[str, float]] = deque(maxlen=OLD)
        self.errors: deque[dict[str, object]] = deque(maxlen=50)
        self.started = time.time()
        self._thin = 0

    def add(self, fields: Mapping[str, object]) -> None:
        point = {"t": round(time.time(), 3)}
        for key in SERIES:
            value = fields.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                point[key] = value
        with self.lock:
            self.latest = dict(fields)
            self.recent.append(point)
            while len(self.recent) > KEEP:
                dropped = self.recent.popleft()
                self._thin += 1
                if self._thin % 10 == 0:
                    self.old.append(dropped)
            errors = fields.get("last_errors")
            for err in errors if isinstance(errors, list | tuple) else ():
                if isinstance(err, Mapping) and err not in self.errors:
                    self.errors.append(dict(err))

    def error(self, **fields: object) -> None:
        with self.lock:
            self.errors.append({"t": round(time.time(), 3), **fields})

    def snapshot(self) -> dict[str, object]:
        with self.lock:
            return {"started": self.started, "now": round(time.time(), 3), "latest": dict(self.latest),
                    "history": [*self.old, *self.recent], "errors": list(self.errors)}


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.partition(":")[0] if host.count(":") == 1 else host


class StatusServer:
    """The page, ``/status.json`` and ``/metrics`` on ``host:port``, on a daemon thread."""

    def __init__(self, host: str, port: int, snapshot: Callable[[], dict[str, object]], *,
                 metrics: Callable[[], bytes] | None = None, title: str = "ccrawl recrawl") -> None:
        names = {"localhost", "127.0.0.1", "::1", _host_name(host or "127.0.0.1")}
        any_host = host in ("", "0.0.0.0", "::")
        page = _page().replace("__TITLE__", html.escape(title)).encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            def _refuse(self, status: int, message: str) -> None:
                body = json.dumps({"error": message}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _answer(self, head_only: bool) -> None:
                asked = self.headers.get("Host")
                if asked is not None and not any_host and _host_name(asked) not in names:
                    return self._refuse(421, "this server does not answer for that host")
                path = self.path.split("?", 1)[0]
                if path == "/":
                    body, kind = page, "text/html; charset=utf-8"
                elif path == "/status.json":
                    body, kind = json.dumps(snapshot(), default=str).encode("utf-8"), "application/json"
                elif path == "/metrics" and metrics is not None:
                    body, kind = metrics(), "text/plain; version=0.0.4; charset=utf-8"
                else:
                    return self._refuse(404, "not here: / is the page, /status.json its data, /metrics the gauges")
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; "
                                 "style-src 'unsafe-inline'; connect-src 'self'")
                self.end_headers()
                if not head_only:
                    self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer(False)

            def do_HEAD(self) -> None:
                self._answer(True)

            def _not_allowed(self) -> None:
                self._refuse(405, "read-only: GET and HEAD only")

            do_POST = do_PUT = do_DELETE = do_PATCH = _not_allowed

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host or "127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        shown = host if host and host not in ("0.0.0.0", "::") else "127.0.0.1"
        self.url = f"http://[{shown}]:{self.port}/" if ":" in shown else f"http://{shown}:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="ccrawl-status", daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _page() -> str:
    """The page's HTML (``ccrawl/data/status/page.html``: one file, no script or style from elsewhere)."""
    from importlib.resources import files

    return files("ccrawl").joinpath("data/status/page.html").read_text(encoding="utf-8")
