"""Faults the fake Hub can be told to inject, and the counters that show what it served.

Every fault is a queue consumed by the next matching requests, so a test says exactly what goes
wrong and when: ``commit_errors=[429, 503]`` fails the next two commits, ``conflicts=1`` answers the
next commit with 412 as if another writer had got in first, ``stalls={"commit": [5.0]}`` holds the
next commit for five seconds before answering, ``truncate=1`` cuts the next file download in half
(headers promise the whole length). A *storm* answers every commit with ``status`` at probability
``p`` until ``seconds`` have passed, from a seeded generator so a run can be replayed.

The server applies them; tests set them in-process (``hub.faults.add(...)``) or, for a fake Hub in
another process, by POSTing the same fields as JSON to ``/__fakehub/faults``.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, deque

from ccrawl.jsontypes import JSONObject

#: Endpoint names used in ``stalls`` and in the counters.
ENDPOINTS = (
    "create", "info", "validate", "preupload", "lfs-batch", "lfs-put", "commit", "tree", "paths-info", "resolve",
)


class Faults:
    """Injectable faults, safe to change from any thread while the server runs."""

    def __init__(self, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self._commit_errors: deque[int] = deque()
        self._conflicts = 0
        self._stalls: dict[str, deque[float]] = {}
        self._truncate = 0
        self._storm: tuple[int, float, float] | None = None  # status, probability, deadline
        self._rng = random.Random(seed)
        self.requests: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()

    def add(
        self,
        *,
        commit_errors: list[int] | None = None,
        conflicts: int = 0,
        stalls: dict[str, list[float]] | None = None,
        truncate: int = 0,
        storm: dict[str, float] | None = None,
    ) -> None:
        """Queue more faults (the arguments add to what is already queued)."""
        with self._lock:
            self._commit_errors.extend(commit_errors or [])
            self._conflicts += conflicts
            for name, delays in (stalls or {}).items():
                if name not in ENDPOINTS:
                    raise ValueError(f"unknown endpoint {name!r}; known: {', '.join(ENDPOINTS)}")
                self._stalls.setdefault(name, deque()).extend(delays)
            self._truncate += truncate
            if storm:
                self._storm = (
                    int(storm.get("status", 429)),
                    float(storm.get("p", 0.5)),
                    time.monotonic() + float(storm.get("seconds", 10.0)),
                )

    def clear(self) -> None:
        """Drop every queued fault (counters are kept)."""
        with self._lock:
            self._commit_errors.clear()
            self._conflicts = 0
            self._stalls.clear()
            self._truncate = 0
            self._storm = None

    def count(self, endpoint: str) -> None:
        with self._lock:
            self.requests[endpoint] += 1

    def stall_for(self, endpoint: str) -> float:
        """Seconds to hold this request before answering (0 for none)."""
        with self._lock:
            queue = self._stalls.get(endpoint)
            if queue:
                self.injected[f"stall:{endpoint}"] += 1
                return queue.popleft()
        return 0.0

    def commit_fault(self) -> int | None:
        """The status to answer this commit with instead of applying it (412 for a conflict), or None."""
        with self._lock:
            if self._commit_errors:
                status = self._commit_errors.popleft()
                self.injected[f"commit:{status}"] += 1
                return status
            if self._conflicts:
                self._conflicts -= 1
                self.injected["commit:412"] += 1
                return 412
            if self._storm is not None:
                status, p, deadline = self._storm
                if time.monotonic() > deadline:
                    self._storm = None
                elif self._rng.random() < p:
                    self.injected[f"storm:{status}"] += 1
                    return status
        return None

    def take_truncate(self) -> bool:
        """True when this download should be cut short."""
        with self._lock:
            if self._truncate:
                self._truncate -= 1
                self.injected["truncate"] += 1
                return True
        return False

    def snapshot(self) -> JSONObject:
        """Counters and what is still queued, as JSON-able data."""
        with self._lock:
            return {
                "requests": dict(self.requests),
                "injected": dict(self.injected),
                "queued": {
                    "commit_errors": list(self._commit_errors),
                    "conflicts": self._conflicts,
                    "stalls": {k: list(v) for k, v in self._stalls.items() if v},
                    "truncate": self._truncate,
                    "storm": self._storm is not None,
                },
            }
