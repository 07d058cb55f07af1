"""Request pacing for Common Crawl: a per-process gap and a gap shared by every process on the host.

``--rate`` spaces the requests of one process. ``--global-rate`` spaces the requests of every
ccrawl process on the host that shares a data dir: the processes coordinate through
``<data_dir>/ratelimit.lock``, a 16-byte file holding the wall-clock time (ns) at which the next
slot comes free. Taking a slot locks the file, reads that time, writes it pushed forward by one
interval, unlocks, and only then sleeps until the slot it was handed. The lock is held for the
16-byte read-modify-write alone, so processes queue on timestamps, not on the lock.

When the file cannot be created or locked (a read-only or exotic filesystem) the limiter prints
one warning and paces this process alone with the same interval, rather than failing the run.

:class:`AdaptiveConcurrency` is the other half of politeness: how many requests a client keeps
in flight, cut when the server pushes back.
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: The lock file layout: next free slot (ns since the epoch), then the interval (ns) of the
#: process that wrote it, kept only so a human reading the file can tell what is going on.
_SLOT = struct.Struct("<qq")

#: A slot further ahead than this is taken to be a clock that jumped backwards, not a queue.
_MAX_AHEAD_NS = 3600 * 1_000_000_000


#: Lock files this process has already warned about: the fallback warning is printed once per run,
#: however many clients a command opens.
_WARNED: set[str] = set()


def _warn_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class ProcessRateLimiter:
    """At least ``interval`` seconds between the starts of this process's requests."""

    def __init__(self, interval: float) -> None:
        self.interval = max(0.0, interval)
        self._next = 0.0

    def reserve(self) -> float:
        """Take the next slot and return how long to wait (seconds) before using it."""
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self.interval
        return slot - now

    async def acquire(self) -> None:
        if self.interval <= 0:
            return
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


class GlobalRateLimiter:
    """At least ``interval`` seconds between requests summed over every process using ``path``."""

    def __init__(self, path: Path, interval: float, *, warn: Callable[[str], None] = _warn_stderr) -> None:
        self.path = Path(path)
        self.interval = max(0.0, interval)
        self._warn = warn
        self._fallback: ProcessRateLimiter | None = None
        self._fd: int | None = None
        self.fallback_reason: str | None = None
        #: The wall-clock time (seconds) of the last host-wide slot this process was granted.
        self.last_slot = 0.0

    @property
    def shared(self) -> bool:
        """True while the lock file works and the budget really is host-wide."""
        return self._fallback is None

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        return self._fd

    def _fall_back(self, exc: OSError) -> None:
        self.fallback_reason = f"{type(exc).__name__}: {exc}"
        self._fallback = ProcessRateLimiter(self.interval)
        if str(self.path) in _WARNED:
            self.close()
            return
        _WARNED.add(str(self.path))
        self._warn(
            f"ccrawl: warning: cannot lock {self.path} ({exc.strerror or exc}); "
            f"--global-rate {self.interval:g}s now paces this process alone"
        )
        self.close()

    def reserve(self) -> float:
        """Take the next host-wide slot and return how long to wait (seconds) before using it."""
        if self._fallback is not None:
            return self._fallback.reserve()
        import fcntl

        try:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            self._fall_back(exc)
            assert self._fallback is not None
            return self._fallback.reserve()
        try:
            now = time.time_ns()
            raw = os.pread(fd, _SLOT.size, 0)
            next_free = _SLOT.unpack(raw)[0] if len(raw) == _SLOT.size else 0
            if next_free - now > _MAX_AHEAD_NS:
                next_free = now
            slot = max(now, next_free)
            step = int(self.interval * 1e9)
            os.pwrite(fd, _SLOT.pack(slot + step, step), 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        self.last_slot = slot / 1e9
        return (slot - now) / 1e9

    async def acquire(self) -> None:
        if self.interval <= 0:
            return
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class RateLimiter:
    """The pacing a client applies before every request: per-process ``rate``, then ``global_rate``."""

    def __init__(
        self,
        *,
        rate: float = 0.0,
        global_rate: float = 0.2,
        lock_path: Path | None = None,
        warn: Callable[[str], None] = _warn_stderr,
    ) -> None:
        self.process = ProcessRateLimiter(rate)
        self.host: GlobalRateLimiter | None = None
        if global_rate > 0:
            if lock_path is None:
                # No data dir to share: the budget can only be kept inside this process.
                self.process = ProcessRateLimiter(max(rate, global_rate))
            else:
                self.host = GlobalRateLimiter(lock_path, global_rate, warn=warn)
        self.rate = rate
        self.global_rate = global_rate

    async def acquire(self) -> None:
        await self.process.acquire()
        if self.host is not None:
            await self.host.acquire()

    def describe(self) -> str:
        """The rate actually in force, as ``-v`` prints it."""
        parts = [f"--rate {self.rate:g}s per process"]
        if self.global_rate <= 0:
            parts.append("--global-rate off")
        elif self.host is None:
            parts.append(f"--global-rate {self.global_rate:g}s kept per process (no data dir to share)")
        elif self.host.shared:
            parts.append(f"--global-rate {self.global_rate:g}s shared through {self.host.path}")
        else:
            parts.append(f"--global-rate {self.global_rate:g}s kept per process ({self.host.fallback_reason})")
        return "net: rate in force: " + ", ".join(parts)

    def close(self) -> None:
        if self.host is not None:
            self.host.close()


class AdaptiveConcurrency:
    """How many requests may be in flight: halved on every 429/5xx, grown back by one per window.

    The server saying "Slow Down" is a request to send less at once, not only to wait longer;
    additive increase / multiplicative decrease (as TCP does) finds the concurrency it accepts.
    """

    def __init__(self, limit: int) -> None:
        self.ceiling = max(1, limit)
        self.limit = float(self.ceiling)
        self.active = 0
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def __aenter__(self) -> None:
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.active < int(self.limit))
            self.active += 1

    async def __aexit__(self, *exc: object) -> None:
        cond = self._condition()
        async with cond:
            self.active -= 1
            cond.notify_all()

    def slow_down(self) -> None:
        self.limit = max(1.0, self.limit / 2)

    def went_well(self) -> None:
        self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)


class _NoGate:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


NO_GATE = _NoGate()
