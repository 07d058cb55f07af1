"""Host-ready scheduling inside a fetch process: per-host queues and a heap of hosts by ready time.

A fetch process holds every work item it has been given in the queue of the item's host. A host
is *ready* when its next allowed start has come: the last start to it plus its delay (the longer
of ``--delay`` and, under ``--robots``, its Crawl-delay), or later when it answered 429/503 with
``Retry-After``. The hosts that hold items sit in a heap keyed by that time (ties in the order
they became due, so ready hosts are served round robin). A slot (one of ``--workers``) takes an
item only from a ready host, so no slot ever waits on a host's clock while another host could
use it, and one host with 100k URLs gets one start per delay, like every other host.

Under ``--robots`` a host's delay is not known before its robots.txt is read: its first item is
taken as soon as a slot is free, and the host stays out of the heap (its other items wait) until
:meth:`HostScheduler.learned` gives its delay. The scheduler itself is synchronous and takes the
time as an argument, so it is tested with a fake clock; :func:`retry_after` reads the header.
"""

from __future__ import annotations

import email.utils
import heapq
import itertools
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")


def host_of(url: str) -> str:
    """The lowercased host a request to ``url`` goes to ('' when there is none: a failure row)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def retry_after(headers: Iterable[tuple[str, str]], now_wall: float | None = None) -> float:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date); 0 when absent or bad."""
    for name, value in headers:
        if name.lower() != "retry-after":
            continue
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return 0.0
        if when is None:
            return 0.0
        now = time.time() if now_wall is None else now_wall
        return max(0.0, when.timestamp() - now)
    return 0.0


@dataclass(slots=True)
class HostQueue(Generic[T]):
    """One host: its waiting items, its delay (None until learned) and its next allowed start."""

    name: str
    delay: float | None
    items: deque[T] = field(default_factory=deque)
    next_at: float = 0.0
    in_heap: bool = False
    resolving: bool = False
    starts: int = 0


class HostScheduler(Generic[T]):
    """Items by host; :meth:`take` hands out only items whose host is ready."""

    def __init__(self, delay: float, *, learn_delay: bool = False, max_backoff: float = 60.0) -> None:
        self.delay = delay
        self.learn_delay = learn_delay
        self.max_backoff = max_backoff
        self._hosts: dict[str, HostQueue[T]] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._tie = itertools.count()
        self.waiting = 0
        """Items held and not yet taken."""
        self.backoffs = 0

    def __len__(self) -> int:
        return self.waiting

    @property
    def hosts(self) -> int:
        """Hosts holding items or being resolved."""
        return len(self._hosts)

    def add(self, host: str, item: T, now: float) -> None:
        h = self._hosts.get(host)
        if h is None:
            known = not self.learn_delay or not host
            h = HostQueue(host, self.delay if known else None)
            self._hosts[host] = h
        h.items.append(item)
        self.waiting += 1
        if not h.in_heap and not h.resolving:
            self._push(h, max(h.next_at, now) if h.starts else now)

    def _push(self, h: HostQueue[T], at: float) -> None:
        h.in_heap = True
        heapq.heappush(self._heap, (at, next(self._tie), h.name))

    def next_ready(self) -> float | None:
        """When the earliest host with items is ready (may be in the past); None when none is queued."""
        return self._heap[0][0] if self._heap else None

    def take(self, now: float) -> tuple[str, T, bool] | None:
        """(host, item, delay unknown) of a ready host, its start stamped now; None when none is ready.

        When the third value is True the host waits out of the heap until :meth:`learned`.
        """
        while True:
            if not self._heap or self._heap[0][0] > now:
                return None
            _, _, name = heapq.heappop(self._heap)
            h = self._hosts[name]
            if h.next_at > now:
                # the host's clock moved since it was pushed (a start re-stamped, a back-off)
                heapq.heappush(self._heap, (h.next_at, next(self._tie), name))
                continue
            break
        h.in_heap = False
        item = h.items.popleft()
        self.waiting -= 1
        h.starts += 1
        if h.delay is None:
            h.resolving = True
            h.next_at = now
            return name, item, True
        h.next_at = max(h.next_at, now + h.delay)
        self._settle(h)
        return name, item, False

    def learned(self, host: str, delay: float, now: float) -> None:
        """``host``'s delay is known now (its robots.txt was read); its first start was ``next_at``."""
        h = self._hosts.get(host)
        if h is None:
            return
        h.delay = delay
        h.resolving = False
        # the first request starts now (the robots.txt fetch came before it)
        h.next_at = max(h.next_at, now + delay)
        self._settle(h)

    def started(self, host: str, now: float) -> None:
        """The request to ``host`` really starts now: its next start is no earlier than ``now + delay``.

        :meth:`take` stamped the start when the slot took the item; a task that started late (a busy
        event loop) would otherwise let the next request follow it closer than the delay.
        """
        h = self._hosts.get(host)
        if h is not None and h.delay:
            h.next_at = max(h.next_at, now + h.delay)

    def back_off(self, host: str, seconds: float, now: float) -> None:
        """A 429/503 with ``Retry-After``: no start to ``host`` before ``now + seconds`` (capped)."""
        h = self._hosts.get(host)
        seconds = min(seconds, self.max_backoff)
        if h is None or seconds <= 0:
            return
        self.backoffs += 1
        h.next_at = max(h.next_at, now + seconds)  # a heap entry pushed earlier is re-pushed by take()

    def _settle(self, h: HostQueue[T]) -> None:
        if h.items:
            if not h.in_heap and not h.resolving:
                self._push(h, h.next_at)
        elif not h.resolving and h.delay is not None and h.delay <= 0 and h.next_at <= 0:
            del self._hosts[h.name]  # no clock to keep (idle hosts with one are swept once it ran out)

    def drop_waiting(self) -> int:
        """Forget every item not taken yet (a stop); returns how many there were."""
        dropped = self.waiting
        for h in self._hosts.values():
            h.items.clear()
            h.in_heap = False
        self._heap.clear()
        self.waiting = 0
        return dropped

    def sweep(self, now: float) -> None:
        """Forget idle hosts whose clock has run out (nothing left to enforce)."""
        for name in [n for n, h in self._hosts.items() if not h.items and not h.resolving and h.next_at <= now]:
            del self._hosts[name]
