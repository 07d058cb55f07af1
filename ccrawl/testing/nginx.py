"""A real nginx on a loopback port serving a directory of pages to any Host name.

The benchmarks' throughput limit and the tests' fast static web: nginx answers every host name
the engine's resolver override points at 127.0.0.1, from one document root. It runs as a child
process in the foreground (``daemon off``) with its own prefix, so nothing touches the system
nginx and the process ends with the context manager.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from ccrawl.errors import CcrawlError

_CONF = """\
{user}worker_processes {workers};
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 4096; multi_accept on; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 65;
    types {{ text/html html htm; text/plain txt; application/json json; application/pdf pdf; }}
    default_type application/octet-stream;
    client_body_temp_path {prefix}/tmp;
    proxy_temp_path {prefix}/tmp;
    fastcgi_temp_path {prefix}/tmp;
    uwsgi_temp_path {prefix}/tmp;
    scgi_temp_path {prefix}/tmp;
    etag on;
    server {{
        listen {host}:{port} default_server reuseport backlog=4096;
        server_name _;
        root {root};
        location / {{ try_files $uri $uri/index.html =404; }}
    }}
}}
"""


def nginx_binary() -> str | None:
    """The nginx executable, or None when it is not installed."""
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class NginxServer:
    """``with NginxServer(root) as web: web.url("a.test", "/p/1.html")``."""

    def __init__(self, root: str | Path, *, port: int = 0, host: str = "127.0.0.1", workers: int = 1) -> None:
        binary = nginx_binary()
        if binary is None:
            raise CcrawlError("nginx is not installed; `bash scripts/install-system-deps` installs it")
        self.binary = binary
        self.root = Path(root).resolve()
        self.host = host
        self.port = port or free_port(host)
        self.workers = workers
        self._prefix = Path(tempfile.mkdtemp(prefix="ccrawl-nginx-"))
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self, host_name: str, path: str = "/") -> str:
        return f"http://{host_name}:{self.port}{path}"

    def start(self) -> NginxServer:
        (self._prefix / "tmp").mkdir(exist_ok=True)
        conf = self._prefix / "nginx.conf"
        conf.write_text(
            _CONF.format(
                # as root, nginx would drop its workers to `nobody`, who cannot read a private root
                user="user root;\n" if os.geteuid() == 0 else "",
                workers=self.workers, prefix=self._prefix, host=self.host, port=self.port, root=self.root,
            )
        )
        self._proc = subprocess.Popen(
            [self.binary, "-p", str(self._prefix), "-c", str(conf), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise CcrawlError(f"nginx exited at start: {err.strip().splitlines()[-1] if err.strip() else '?'}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise CcrawlError(f"nginx did not listen on {self.host}:{self.port} within 10 s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGQUIT)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        shutil.rmtree(self._prefix, ignore_errors=True)

    def __enter__(self) -> NginxServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
