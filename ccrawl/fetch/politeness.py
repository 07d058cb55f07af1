"""Per-host politeness clock: request starts to one host are spaced by at least its delay.

One waiter per host moves at a time (an asyncio.Lock per host, FIFO), so the spacing is between
the moments requests really start, not between reservations that a later wait could bunch up.
Entries for hosts whose clock has run out are swept, so the table holds only hosts that are
being fetched now, not every host the run has seen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class HostClock:
    """``await clock.wait_turn(host, delay)`` returns once ``delay`` has passed since the host's last turn."""

    def __init__(self, *, sweep_every: int = 4096) -> None:
        self._next: dict[str, float] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._sweep_every = sweep_every
        self._turns = 0

    async def wait_turn(
        self, host: str, delay: float, acquire_slot: Callable[[], Awaitable[object]] | None = None
    ) -> float:
        """Return once ``host``'s next slot has come and ``acquire_slot`` (if given) is done.

        Returns the seconds spent waiting for the host (its lock and its clock), so a caller
        can tell that apart from the time ``acquire_slot`` took.

        ``acquire_slot`` is awaited with the host's lock held and before the slot is stamped,
        so a wait after the clock (for a concurrency slot) cannot let the next request to the
        host start closer than ``delay`` to this one.
        """
        if delay <= 0:
            if acquire_slot is not None:
                await acquire_slot()
            return 0.0
        start = time.monotonic()
        lock = self._acquire_lock(host)
        try:
            async with lock:
                wait = self._next.get(host, 0.0) - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                waited = time.monotonic() - start
                if acquire_slot is not None:
                    await acquire_slot()
                self._next[host] = time.monotonic() + delay
        finally:
            self._release_lock(host)
        self._turns += 1
        if self._turns % self._sweep_every == 0:
            self.sweep()
        return waited

    def _acquire_lock(self, host: str) -> asyncio.Lock:
        entry = self._locks.get(host)
        if entry is None:
            lock = asyncio.Lock()
            self._locks[host] = (lock, 1)
            return lock
        self._locks[host] = (entry[0], entry[1] + 1)
        return entry[0]

    def _release_lock(self, host: str) -> None:
        lock, users = self._locks[host]
        if users <= 1:
            del self._locks[host]
        else:
            self._locks[host] = (lock, users - 1)

    def sweep(self) -> None:
        """Forget hosts whose next slot is already in the past (nothing to enforce any more)."""
        now = time.monotonic()
        for host in [h for h, t in self._next.items() if t <= now]:
            del self._next[host]

    def __len__(self) -> int:
        return len(self._next)
