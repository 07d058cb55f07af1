"""Injectable misbehaviour for the fake Common Crawl: errors, truncation, dropped connections, latency.

Tests arm faults on a running server and read back what it was asked::

    server.faults.add("status", path=r"/collinfo\\.json", times=2, status=503)
    server.faults.add("truncate", path=r"\\.warc\\.gz$")          # half the body, then close
    server.faults.add("drop", times=3)                          # close without answering
    server.faults.latency = 0.05                                # every request waits 50 ms
    server.faults.max_inflight = 8                              # past 8 at once: 503 Slow Down

A fault matches requests whose path matches ``path`` (a regex, searched) and fires ``times`` times
(``-1``: forever). The log records every request (method, path, Range header, status) so tests can
count what a client really sent.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field


@dataclass(slots=True)
class Fault:
    """One armed fault: ``kind`` is ``status``, ``truncate`` or ``drop``."""

    kind: str
    path: re.Pattern[str]
    times: int
    status: int = 503
    retry_after: float | None = None


@dataclass(slots=True)
class LoggedRequest:
    method: str
    path: str
    query: str
    range: str | None
    status: int = 0


@dataclass
class Faults:
    """The faults a server is armed with and the log of what it served."""

    latency: float = 0.0
    max_inflight: int | None = None
    faults: list[Fault] = field(default_factory=list)
    log: list[LoggedRequest] = field(default_factory=list)
    inflight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(
        self, kind: str, *, path: str = ".*", times: int = 1, status: int = 503, retry_after: float | None = None
    ) -> Fault:
        if kind not in ("status", "truncate", "drop"):
            raise ValueError(f"unknown fault kind {kind!r}: status, truncate or drop")
        fault = Fault(kind, re.compile(path), times, status, retry_after)
        with self._lock:
            self.faults.append(fault)
        return fault

    def take(self, path: str) -> Fault | None:
        """The first armed fault matching ``path``, spending one of its ``times``."""
        with self._lock:
            for fault in self.faults:
                if fault.times != 0 and fault.path.search(path):
                    if fault.times > 0:
                        fault.times -= 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()
            self.log.clear()
            self.latency = 0.0
            self.max_inflight = None

    def requests(self, path: str = ".*") -> list[LoggedRequest]:
        """Logged requests whose path matches the regex ``path``."""
        pattern = re.compile(path)
        with self._lock:
            return [r for r in self.log if pattern.search(r.path)]
