"""Counters of one Fetcher for the run summary: outcomes, bytes, in-flight peak and phase totals."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ccrawl.fetch.result import ERROR_CLASSES, FetchResult, Phases


@dataclass(slots=True)
class FetchStats:
    started: float = 0.0
    started_fetches: int = 0
    finished: int = 0
    ok: int = 0
    failed: int = 0
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_CLASSES, 0))
    status_classes: dict[str, int] = field(default_factory=dict)
    """``"2xx"`` -> count, over responses that had a status."""
    not_modified: int = 0
    truncated: int = 0
    body_bytes: int = 0
    redirects: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    phases: Phases = field(default_factory=Phases)
    #: the last failures since :meth:`take_recent` (a run's status page lists them)
    recent_errors: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=8))
    #: host -> [fetches, seconds on the wire] since :meth:`take_recent` (bounded by a second's fetches)
    host_seconds: dict[str, list[float]] = field(default_factory=dict)

    def enter(self) -> None:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def leave(self) -> None:
        self.in_flight -= 1

    def record(self, result: FetchResult) -> None:
        self.finished += 1
        wire = result.phases.dns + result.phases.connect + result.phases.ttfb + result.phases.body
        if result.host and len(self.host_seconds) < 10_000:
            spent = self.host_seconds.setdefault(result.host, [0, 0.0])
            spent[0] += 1
            spent[1] += wire
        if result.error:
            self.failed += 1
            self.errors[result.error] = self.errors.get(result.error, 0) + 1
            self.recent_errors.append({"t": round(time.time(), 3), "url": result.url[:300], "class": result.error,
                                       "message": f"{result.url[:200]}: {result.error}"
                                                  + (f" ({result.error_detail[:160]})" if result.error_detail else "")})
        else:
            self.ok += 1
            key = f"{result.status // 100}xx"
            self.status_classes[key] = self.status_classes.get(key, 0) + 1
        self.not_modified += result.unchanged
        self.truncated += result.body_truncated
        self.body_bytes += len(result.body)
        p, q = self.phases, result.phases
        p.dns += q.dns
        p.connect += q.connect
        p.ttfb += q.ttfb
        p.body += q.body
        p.robots += q.robots
        p.host_clock += q.host_clock
        p.slot += q.slot

    def take_recent(self, top: int = 5) -> dict[str, Any]:
        """The slowest hosts (mean seconds a fetch on the wire) and the failures since the last call, then
        forget both: what a status page shows of the last interval."""
        slow = sorted(((h, t / n) for h, (n, t) in self.host_seconds.items() if n), key=lambda x: -x[1])[:top]
        out = {"slow_hosts": [[h, round(t, 3)] for h, t in slow], "last_errors": list(self.recent_errors)}
        self.host_seconds.clear()
        self.recent_errors.clear()
        return out

    def as_dict(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started if self.started else 0.0
        return {
            "elapsed_s": elapsed,
            "started": self.started_fetches,
            "finished": self.finished,
            "ok": self.ok,
            "failed": self.failed,
            "errors": dict(self.errors),
            "status_classes": dict(self.status_classes),
            "not_modified": self.not_modified,
            "truncated": self.truncated,
            "body_bytes": self.body_bytes,
            "redirects": self.redirects,
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "phases_s": self.phases.as_dict(),
        }
