"""Counters of one Fetcher for the run summary: outcomes, bytes, in-flight peak and phase totals."""

from __future__ import annotations

import time
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

    def enter(self) -> None:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def leave(self) -> None:
        self.in_flight -= 1

    def record(self, result: FetchResult) -> None:
        self.finished += 1
        if result.error:
            self.failed += 1
            self.errors[result.error] = self.errors.get(result.error, 0) + 1
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
