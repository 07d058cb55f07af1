"""A fake HuggingFace Hub on loopback: the real huggingface_hub client talks to it, repos live on disk.

In a test::

    with FakeHub(tmp_path / "hub") as hub:          # serves on 127.0.0.1, a free port
        repo = HfRepo("me/data", endpoint=hub.url, token="t", xet=False)
        hub.faults.add(commit_errors=[429])          # the next commit answers 429
        ...
        hub.local_repo("me/data").snapshot_dir()     # what was published, as a directory

From a shell (for a fleet of processes): ``python -m ccrawl.testing.fakehub --port 0 --root DIR`` prints
its URL on the first line of stdout, and faults are set by POSTing JSON to ``<url>/__fakehub/faults``.
The client must upload through LFS, not xet: set ``HF_HUB_DISABLE_XET=1`` (or ``HfRepo(xet=False)``).
See :mod:`ccrawl.testing.fakehub.app` for the endpoints and :mod:`.faults` for the faults.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import TracebackType

from aiohttp import web

from ccrawl.hub.localhub import LocalRepo
from ccrawl.testing.fakehub.app import make_app
from ccrawl.testing.fakehub.faults import Faults
from ccrawl.testing.started import wait_started

__all__ = ["FakeHub", "Faults", "make_app"]


class FakeHub:
    """The fake Hub served from a background thread with its own event loop."""

    def __init__(
        self,
        root: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tokens: frozenset[str] = frozenset(),
        page_size: int = 1000,
        seed: int = 0,
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port = port
        self.faults = Faults(seed)
        self._app = make_app(self.root, faults=self.faults, tokens=tokens, page_size=page_size)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def local_repo(self, repo_id: str, repo_type: str = "dataset") -> LocalRepo:
        """The on-disk repo behind ``repo_id`` (to inspect what a client published)."""
        return LocalRepo(self.root, repo_id, repo_type=repo_type)

    def start(self) -> FakeHub:
        self._thread = threading.Thread(target=self._serve, name="fakehub", daemon=True)
        self._thread.start()
        wait_started(self._ready, self._thread, "fake Hub")
        if self._error is not None:
            raise self._error
        if not self.port:
            raise RuntimeError("fake Hub started without a listening port")
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._runner = web.AppRunner(self._app, access_log=None, shutdown_timeout=1.0)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, self.port)
            loop.run_until_complete(site.start())
            sockets = getattr(site._server, "sockets", None)
            if sockets:
                self.port = int(sockets[0].getsockname()[1])
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
