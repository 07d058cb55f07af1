"""The stall clock of a long-running publisher: bounded hub calls, backoff on a busy hub, exit 75 past a budget.

A publisher runs for months under a supervisor. Two things must never keep it alive and useless: a hub
that keeps answering 429/503, and a request that never returns. :class:`StallClock` bounds both by one
budget, ``max_stall`` seconds without :meth:`~StallClock.progressed` being called (a commit landing, or a
pass with nothing to do): every hub call runs in a daemon thread joined with the time left, and every
backoff sleep must fit in it. Past the budget it raises ``TemporaryFailure`` (exit 75), so systemd
restarts the publisher, which resumes from the hub.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from ccrawl.errors import TemporaryFailure
from ccrawl.hub.repo import HubBusy
from ccrawl.redact import redact_userinfo

T = TypeVar("T")


class StallClock:
    """One budget for hub calls and retries; see the module docstring."""

    def __init__(
        self,
        max_stall: float,
        *,
        backoff: float = 1.0,
        backoff_max: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] = lambda _msg: None,
        what: str = "recrawl publish",
    ) -> None:
        self.max_stall = max_stall
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.sleep = sleep
        self.log = log
        self.what = what
        self.retries = 0
        self._last_progress = time.monotonic()

    def progressed(self) -> None:
        """Restart the budget: something useful happened (or there was nothing to do)."""
        self._last_progress = time.monotonic()

    def left(self) -> float:
        """Seconds of budget left (negative once spent)."""
        return self._last_progress + self.max_stall - time.monotonic()

    def stalled(self, why: str) -> TemporaryFailure:
        return TemporaryFailure(redact_userinfo(
            f"{self.what}: no commit landed for {self.max_stall:g}s with shards waiting ({why}); "
            "exiting 75 so the supervisor restarts it"
        ))

    def bounded(self, what: str, fn: Callable[[], T]) -> T:
        """Run one hub call, giving up when the budget runs out (a hung request included)."""
        left = self.left()
        if left <= 0:
            raise self.stalled(what)
        value: list[T] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                value.append(fn())
            except BaseException as exc:
                error.append(exc)

        # A daemon thread, not an executor: a request that never returns must not hold the exit.
        worker = threading.Thread(target=target, name=f"hub-{what}", daemon=True)
        worker.start()
        worker.join(left)
        if worker.is_alive():
            raise self.stalled(f"{what} did not return")
        if error:
            raise error[0]
        return value[0]

    def retrying(self, what: str, fn: Callable[[], T]) -> T:
        """A hub call retried on HubBusy with exponential backoff (jittered; Retry-After wins)."""
        delay = self.backoff
        while True:
            try:
                return self.bounded(what, fn)
            except HubBusy as exc:
                self.retries += 1
                wait = exc.retry_after if exc.retry_after is not None else delay * (0.5 + random.random())
                if wait >= self.left():
                    raise self.stalled(f"{what}: {exc}") from exc
                self.log(redact_userinfo(f"{self.what}: {exc}; retrying in {wait:.1f}s"))
                self.sleep(wait)
                delay = min(self.backoff_max, delay * 2)
