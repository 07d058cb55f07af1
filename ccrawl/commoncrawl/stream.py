"""A Common Crawl file read as it arrives, for a reader that goes through it once, front to back.

``markdown export`` in one process used to download a shard to ``<out>/.download/`` and then read
it back: the shard's bytes were copied into the page cache and out again (0.03-0.05 CPU-s for the
bench's 29 MB shard, about 3% of the export; a real 1 GB shard writes and reads 1 GB of disk), and
conversion waited for the last byte before it began. :class:`RemoteFile` streams instead: a thread
downloads the file with the same client and pacing as ``ccrawl download`` into a bounded queue of
chunks, and ``read`` hands them out in order, so converting overlaps the transfer and nothing
touches the disk.

A connection that drops part way is reopened with a Range request from the bytes already handed
out, up to the client's retry count (:class:`ccrawl.commoncrawl.download.ResumableBody`, which
``download_one`` uses to resume a ``.part``); past that, ``read`` raises the failure, and the unit
fails like a download that did not finish. A reader that stops early (``--limit``, an error)
closes the stream, which ends the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import queue
import threading
import time
from collections.abc import Mapping
from typing import Any

#: Chunks waiting between the download thread and the reader (about 1 MiB each): bounds memory.
DEPTH = 8

_END = object()


class RemoteFile(io.RawIOBase):
    """``path`` (relative to the data endpoint) as a read-once binary stream, downloaded by a thread."""

    def __init__(self, path: str, client_options: Mapping[str, Any], *, depth: int = DEPTH) -> None:
        super().__init__()
        self.path = path
        self.client_options = dict(client_options)
        #: bytes received so far, and wall seconds from the first request to the last byte
        self.received = 0
        self.seconds = 0.0
        self._chunks: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._buf = b""
        self._pos = 0
        self._ended = False
        self._thread = threading.Thread(target=self._run, name="remote-file", daemon=True)
        self._thread.start()

    # -- the reader's side -----------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (what is left of the current chunk when that is less); b"" at the end."""
        if self._pos >= len(self._buf):
            if self._ended:
                return b""
            item = self._chunks.get()
            if item is _END:
                self._ended = True
                return b""
            if isinstance(item, BaseException):
                self._ended = True
                raise item
            self._buf, self._pos = item, 0
        if self._pos == 0 and (size is None or size < 0 or size >= len(self._buf)):
            out = self._buf  # the whole chunk, not copied
        else:
            end = len(self._buf) if size is None or size < 0 else self._pos + size
            out = self._buf[self._pos:end]
        self._pos += len(out)
        return out

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        """Stop the download (when it is still running) and wait for its thread."""
        if not self.closed:
            self._stop.set()  # a thread waiting for room in the queue sees it within 0.1 s
            # One waiting on the network ends when its data (or the client's timeout) comes; it is a
            # daemon and queues nothing more, so the reader need not wait for it.
            self._thread.join(timeout=2.0)
        super().close()

    # -- the download thread ---------------------------------------------------------------------

    def _put(self, item: Any) -> bool:
        """Queue ``item`` unless the reader has closed the stream; False when it has."""
        while not self._stop.is_set():
            try:
                self._chunks.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            asyncio.run(self._fetch())
        except BaseException as exc:  # handed to the reader, which raises it where it reads
            self._put(exc)
            return
        finally:
            self.seconds = time.perf_counter() - started
        self._put(_END)

    async def _fetch(self) -> None:
        from ccrawl.commoncrawl.download import ResumableBody
        from ccrawl.net.client import CCClient

        async with CCClient(**self.client_options) as cc:
            body = ResumableBody(cc, cc.data_url(self.path), then="run the same command again to retry the shard")
            async with contextlib.aclosing(body.chunks()) as chunks:
                async for chunk in chunks:
                    if not self._put(chunk):
                        return
                    self.received = body.received
