"""Counters of one Fetcher, and how counters of several merge: outcomes, bytes, phases, DNS, robots.txt.

A live :class:`FetchStats` is mutated by its Fetcher; :meth:`Fetcher.snapshot` copies it with the
resolver's :class:`DnsStats` and the robots cache's :class:`RobotsStats` attached, and a snapshot is
what crosses a process boundary. ``a + b`` merges two snapshots; every field's rule is written once,
in the ``__add__`` of its class: counts and seconds add up, ``peak_*`` take the larger, the
per-class histograms add key by key (in the order the keys were first seen), and ``elapsed_s`` takes
the longer (the processes run side by side). This module imports no network library, so the
recrawl's parent can unpickle a snapshot without paying for aiohttp.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TypedDict

from ccrawl.fetch.result import ERROR_CLASSES, FetchResult, Phases


def add_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """Two histograms added key by key; ``a``'s keys first, then ``b``'s new ones."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def add_phases(a: Phases, b: Phases) -> Phases:
    return Phases(dns=a.dns + b.dns, connect=a.connect + b.connect, ttfb=a.ttfb + b.ttfb, body=a.body + b.body,
                  robots=a.robots + b.robots, host_clock=a.host_clock + b.host_clock, slot=a.slot + b.slot)


@dataclass(slots=True)
class DnsStats:
    """The caching resolver's counters (live in :class:`~ccrawl.fetch.dns.CachingResolver`)."""

    lookups: int = 0
    """Lookups sent to the real resolver."""
    cache_hits: int = 0
    overridden: int = 0
    failures: int = 0
    blocked: int = 0
    """Names that resolved only to refused addresses (see :mod:`ccrawl.fetch.addresses`)."""
    in_flight: int = 0
    peak_in_flight: int = 0
    seconds: float = 0.0
    """Time spent inside real lookups (summed over concurrent ones)."""
    cache_entries: int = 0
    """Names in the cache when the snapshot was taken."""

    def __add__(self, other: DnsStats) -> DnsStats:
        return DnsStats(
            lookups=self.lookups + other.lookups,
            cache_hits=self.cache_hits + other.cache_hits,
            overridden=self.overridden + other.overridden,
            failures=self.failures + other.failures,
            blocked=self.blocked + other.blocked,
            in_flight=self.in_flight + other.in_flight,
            peak_in_flight=max(self.peak_in_flight, other.peak_in_flight),
            seconds=self.seconds + other.seconds,
            cache_entries=self.cache_entries + other.cache_entries,
        )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "lookups": self.lookups,
            "cache_hits": self.cache_hits,
            "overridden": self.overridden,
            "failures": self.failures,
            "blocked": self.blocked,
            "peak_in_flight": self.peak_in_flight,
            "seconds": self.seconds,
            "cache_entries": self.cache_entries,
        }


@dataclass(slots=True)
class RobotsStats:
    """The robots.txt cache's counters (live in :class:`~ccrawl.fetch.robots.RobotsCache`)."""

    fetched: int = 0
    cache_hits: int = 0
    allowed_all: int = 0
    """Hosts whose robots.txt was 4xx (allow all)."""
    unreachable: int = 0
    """Hosts wholly disallowed because robots.txt was 5xx or did not answer."""
    disallowed_urls: int = 0
    seconds: float = 0.0
    cache_entries: int = 0
    """Origins in the cache when the snapshot was taken."""

    def __add__(self, other: RobotsStats) -> RobotsStats:
        return RobotsStats(
            fetched=self.fetched + other.fetched,
            cache_hits=self.cache_hits + other.cache_hits,
            allowed_all=self.allowed_all + other.allowed_all,
            unreachable=self.unreachable + other.unreachable,
            disallowed_urls=self.disallowed_urls + other.disallowed_urls,
            seconds=self.seconds + other.seconds,
            cache_entries=self.cache_entries + other.cache_entries,
        )

    def as_dict(self) -> dict[str, float | int | bool]:
        """The JSON form of a robots cache that is on (``{"enabled": False}`` stands for one that is off)."""
        return {
            "fetched": self.fetched,
            "cache_hits": self.cache_hits,
            "allowed_all": self.allowed_all,
            "unreachable": self.unreachable,
            "disallowed_urls": self.disallowed_urls,
            "seconds": self.seconds,
            "enabled": True,
            "cache_entries": self.cache_entries,
        }


#: One failure as the status page lists it (``class`` is a keyword, hence the functional form).
FailureNote = TypedDict("FailureNote", {"t": float, "url": str, "class": str, "message": str})


@dataclass(slots=True, frozen=True)
class RecentFetches:
    """The slowest hosts (mean seconds a fetch on the wire) and the failures of the last interval."""

    slow_hosts: list[tuple[str, float]] = field(default_factory=list)
    last_errors: list[FailureNote] = field(default_factory=list)


@dataclass(slots=True)
class RecentTracker:
    """What a status page shows of the last interval, kept until :meth:`take`."""

    errors: deque[FailureNote] = field(default_factory=lambda: deque(maxlen=8))
    #: host -> [fetches, seconds on the wire] (bounded by a second's fetches)
    host_seconds: dict[str, tuple[int, float]] = field(default_factory=dict)

    def record(self, result: FetchResult) -> None:
        if result.host and len(self.host_seconds) < 10_000:
            n, spent = self.host_seconds.get(result.host, (0, 0.0))
            self.host_seconds[result.host] = (n + 1, spent + result.phases.dns + result.phases.connect
                                              + result.phases.ttfb + result.phases.body)
        if result.error:
            self.errors.append({"t": round(time.time(), 3), "url": result.url[:300], "class": result.error,
                                "message": f"{result.url[:200]}: {result.error}"
                                           + (f" ({result.error_detail[:160]})" if result.error_detail else "")})

    def take(self, top: int = 5) -> RecentFetches:
        """The slowest hosts and the failures since the last call, then forget both."""
        slow = sorted(((h, t / n) for h, (n, t) in self.host_seconds.items() if n), key=lambda x: -x[1])[:top]
        out = RecentFetches([(h, round(t, 3)) for h, t in slow], list(self.errors))
        self.host_seconds.clear()
        self.errors.clear()
        return out


@dataclass(slots=True)
class FetchStats:
    """Counts of fetches (one Fetcher's, or several merged with ``+``)."""

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
    elapsed_s: float = 0.0
    """Seconds since the Fetcher opened, when the snapshot was taken."""
    dns: DnsStats | None = None
    """The resolver's counters (None: the Fetcher is not open)."""
    robots: RobotsStats | None = None
    """The robots.txt cache's counters (None: robots.txt is not checked)."""
    host_clock_entries: int = 0

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

    def copy(self) -> FetchStats:
        """A snapshot that later fetches do not change (safe to pickle on another thread)."""
        return replace(self, errors=dict(self.errors), status_classes=dict(self.status_classes),
                       phases=replace(self.phases), dns=replace(self.dns) if self.dns else None,
                       robots=replace(self.robots) if self.robots else None)

    def __add__(self, other: FetchStats) -> FetchStats:
        return FetchStats(
            started_fetches=self.started_fetches + other.started_fetches,
            finished=self.finished + other.finished,
            ok=self.ok + other.ok,
            failed=self.failed + other.failed,
            errors=add_counts(self.errors, other.errors),
            status_classes=add_counts(self.status_classes, other.status_classes),
            not_modified=self.not_modified + other.not_modified,
            truncated=self.truncated + other.truncated,
            body_bytes=self.body_bytes + other.body_bytes,
            redirects=self.redirects + other.redirects,
            in_flight=self.in_flight + other.in_flight,
            peak_in_flight=max(self.peak_in_flight, other.peak_in_flight),
            phases=add_phases(self.phases, other.phases),
            elapsed_s=max(self.elapsed_s, other.elapsed_s),
            dns=self.dns + other.dns if self.dns and other.dns else self.dns or other.dns,
            robots=self.robots + other.robots if self.robots and other.robots else self.robots or other.robots,
            host_clock_entries=self.host_clock_entries + other.host_clock_entries,
        )

    def dns_dict(self) -> dict[str, float | int]:
        return self.dns.as_dict() if self.dns is not None else {"cache_entries": 0}

    def robots_dict(self) -> dict[str, float | int | bool]:
        return self.robots.as_dict() if self.robots is not None else {"enabled": False}

    def as_dict(self) -> dict[str, object]:
        """Plain data, JSON-ready (the shape :meth:`Fetcher.stats` has always returned)."""
        return {
            "elapsed_s": self.elapsed_s,
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
            "dns": self.dns_dict(),
            "robots": self.robots_dict(),
            "host_clock_entries": self.host_clock_entries,
        }
