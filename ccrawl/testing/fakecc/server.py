"""Runs the fake Common Crawl on loopback in a background thread, for tests, benchmarks and the demo.

::

    with FakeCCServer(tmp_path / "cc", SiteSpec(records=500, files=20)) as cc:
        cc.faults.latency = 0.05
        options = cc.client_options(data_dir=tmp_path / "data")   # keywords for CCClient
        ...

The server has its own thread and event loop, so the code under test may use ``asyncio.run``
(or any loop of its own) in the calling thread.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import TracebackType

from aiohttp import web

from ccrawl.testing.fakecc.app import make_app
from ccrawl.testing.fakecc.faults import Faults
from ccrawl.testing.fakecc.site import FakeSite, SiteSpec, build_site, load_site
from ccrawl.testing.started import wait_started


class FakeCCServer:
    """A started fake Common Crawl: ``url`` is its base, ``faults`` arms misbehaviour, ``site`` its data."""

    def __init__(
        self, root: Path | str, spec: SiteSpec | None = None, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        root = Path(root)
        self.site: FakeSite = load_site(root) if (root / "captures.jsonl").exists() and spec is None else build_site(
            root, spec
        )
        self.faults = Faults()
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def client_options(self, **extra: object) -> dict[str, object]:
        """Keyword arguments that point a :class:`~ccrawl.net.client.CCClient` at this server."""
        options: dict[str, object] = {
            "collinfo_endpoint": f"{self.url}/collinfo.json",
            "data_endpoint": self.url,
            "cdx_endpoint": self.url,
            "s3_endpoint": self.url,
            "global_rate": 0,
            "backoff": 0.01,
            "backoff_max": 0.05,
        }
        options.update(extra)
        return options

    def start(self) -> FakeCCServer:
        self._thread = threading.Thread(target=self._serve, name="fakecc", daemon=True)
        self._thread.start()
        wait_started(self._ready, self._thread, "fake Common Crawl")
        if self._error is not None:
            raise RuntimeError(f"fake Common Crawl failed to start: {self._error}") from self._error
        if not self.port:
            raise RuntimeError("fake Common Crawl started without a listening port")
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start_app())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._stop_app())
        loop.close()

    async def _start_app(self) -> None:
        app = make_app(self.site, self.faults)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=512)
        await site.start()
        server = getattr(site, "_server", None)
        if server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]

    async def _stop_app(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop = None

    def __enter__(self) -> FakeCCServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
