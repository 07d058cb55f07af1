"""An operation's records, produced on a thread of their own and consumed from asyncio.

Operations are plain generators, some of which run an event loop of their own inside, so each
request's operation runs on its own thread. Records cross to the server's loop through an
asyncio queue; a semaphore bounds how far the producer runs ahead (a slow client holds at most
``ahead`` records in memory). Cancelling (the client went away) makes the producer close the
generator at its next record, so the operation's ``finally`` blocks run and its work stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_DONE = object()


@dataclass(frozen=True, slots=True)
class Failure:
    """The exception an operation raised, carried to the consumer."""

    error: BaseException


class RecordStream:
    """Run ``produce()`` on a thread; ``await next()`` gives records, then raises StopAsyncIteration."""

    def __init__(self, produce: Callable[[], Iterable[Mapping[str, Any]]], *, ahead: int = 64) -> None:
        self._produce = produce
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._room = threading.Semaphore(ahead)
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ccrawl-op", daemon=True)
        self.produced = 0

    def start(self) -> RecordStream:
        self._thread.start()
        return self

    def _put(self, item: object) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop closed under us: nobody is listening any more
            self._cancelled.set()

    def _run(self) -> None:
        records = None
        try:
            records = iter(self._produce())
            for record in records:
                while not self._room.acquire(timeout=0.5):
                    if self._cancelled.is_set():
                        return
                if self._cancelled.is_set():
                    return
                self.produced += 1
                self._put(record)
        except BaseException as exc:  # carried to the consumer, which decides what the client sees
            if not self._cancelled.is_set():
                self._put(Failure(exc))
            return
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
        self._put(_DONE)

    async def next(self) -> Mapping[str, Any]:
        item = await self._queue.get()
        if item is _DONE:
            raise StopAsyncIteration
        if isinstance(item, Failure):
            raise item.error
        self._room.release()
        assert isinstance(item, Mapping)
        return item

    def cancel(self) -> None:
        self._cancelled.set()
        self._room.release()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the producer thread; True once it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
