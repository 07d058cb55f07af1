"""``crawl run``'s progress: a live line on a terminal, one JSON object per tick elsewhere.

Each crawl (one process's, or each partition of a multi-process run) keeps its counters in
memory (:func:`counts`: no query of the state file); the process that runs partition 0 sums the
partitions' counters (the others send theirs with their answers to the parent's probes) and
prints a tick every ``tick_seconds``. The fields are documented in docs/crawl.md ("Progress").
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Literal, TextIO, TypedDict

from ccrawl.crawl.messages import Counts
from ccrawl.progress import (
    QUIET_S,
    LiveLine,
    Moved,
    Window,
    errors_text,
    eta_seconds,
    human_bytes,
    human_seconds,
    is_terminal,
    percent,
)

if TYPE_CHECKING:
    from ccrawl.crawl.run import Crawl


def counts(crawl: Crawl) -> Counts:
    """One crawl's counters now (cheap: attributes, no query)."""
    f, s = crawl.frontier, crawl.summary
    taken = f.fetched - crawl.fetched_start + f.in_flight
    return {"fetched": s.fetched, "total_fetched": f.fetched, "archived": s.archived, "failed": s.failed,
            "robots_skipped": s.robots_skipped, "errors": dict(s.errors), "bytes": crawl.body_bytes,
            "queued": max(0, crawl.queued_start + f.admitted - taken), "hosts": f.active_hosts,
            "in_flight": f.in_flight}


SummedKey = Literal["fetched", "total_fetched", "archived", "failed", "robots_skipped", "bytes", "queued", "hosts",
                    "in_flight"]
_SUMMED: tuple[SummedKey, ...] = ("fetched", "total_fetched", "archived", "failed", "robots_skipped", "bytes",
                                  "queued", "hosts", "in_flight")


def add(total: Counts, one: Counts) -> Counts:
    for k in _SUMMED:
        if k in one:
            total[k] = total.get(k, 0) + one[k]
    if "errors" in one:
        errors = total.setdefault("errors", {})
        for e, n in one["errors"].items():
            errors[e] = errors.get(e, 0) + n
    return total


class TickFields(TypedDict):
    """One tick's fields (documented in docs/crawl.md, "Progress")."""

    elapsed_s: float
    done: int
    total: int | None
    percent: float | None
    rate: float
    eta_s: float | None
    fetched: int
    archived: int
    failed: int
    robots_skipped: int
    queued: int
    hosts: int
    in_flight: int
    bytes: int
    errors: dict[str, int]
    quiet_s: float
    waiting: list[str]
    final: bool


class Ticker:
    """Turns summed counters into ticks: JSON objects (``json``), a live line or plain lines (``text``)."""

    def __init__(self, mode: str, max_pages: int, stream: TextIO | None = None,
                 waiting_after: float = QUIET_S) -> None:
        self.mode = mode
        self.max_pages = max_pages
        self.stream = stream or sys.stderr
        self.waiting_after = waiting_after
        now = time.monotonic()
        self.started = now
        self._rate = Window(now)
        self._done_rate: Window | None = None
        self._moved = Moved(now)
        self._live: LiveLine | None = None

    def fields(self, c: Counts, final: bool = False) -> TickFields:
        now = time.monotonic()
        fetched = int(c.get("fetched", 0))
        done = int(c.get("total_fetched", 0))  # --max-pages counts every run on the state, so done does too
        total = self.max_pages
        if self._done_rate is None:
            self._done_rate = Window(self.started, done - fetched)
        rate = self._rate.add(now, fetched)
        done_rate = self._done_rate.add(now, done)
        self._moved.see(now, fetched=fetched, queued=int(c.get("queued", 0)))
        quiet = self._moved.quiet(now)
        waiting = []
        if not final and quiet >= self.waiting_after:
            queued, hosts, flight = int(c.get("queued", 0)), int(c.get("hosts", 0)), int(c.get("in_flight", 0))
            if queued or flight:
                waiting.append(f"fetch: {queued} URLs queued on {hosts} hosts, {flight} in flight, "
                               f"0 done in {self._moved.since('fetched', now):.0f} s")
            else:
                waiting.append("fetch: the frontier is empty (nothing queued, nothing in flight)")
        return {
            "elapsed_s": round(now - self.started, 1),
            "done": done,
            "total": total or None,
            "percent": percent(done, total) if total else None,
            "rate": round(rate, 1),
            "eta_s": eta_seconds(done, total, done_rate) if total else None,
            "fetched": fetched,
            "archived": int(c.get("archived", 0)),
            "failed": int(c.get("failed", 0)),
            "robots_skipped": int(c.get("robots_skipped", 0)),
            "queued": int(c.get("queued", 0)),
            "hosts": int(c.get("hosts", 0)),
            "in_flight": int(c.get("in_flight", 0)),
            "bytes": int(c.get("bytes", 0)),
            "errors": {k: v for k, v in sorted((c.get("errors") or {}).items()) if v},
            "quiet_s": round(quiet, 1),
            "waiting": waiting,
            "final": final,
        }

    def tick(self, c: Counts, final: bool = False) -> None:
        if self.mode not in ("json", "text"):
            return
        f = self.fields(c, final)
        if self.mode == "json":
            print(json.dumps({"event": "tick", **f}), file=self.stream, flush=True)
            return
        rest = (f"{f['rate']:.0f}/s, ETA {human_seconds(f['eta_s'])}, {f['queued']} queued on {f['hosts']} hosts, "
                f"{human_bytes(f['bytes'])}, {errors_text(f['errors'])}")
        note = "crawl: waiting: " + "; ".join(f["waiting"]) if f["waiting"] else ""
        total = f["total"] or 0
        if self._live is None and is_terminal(self.stream) and not final:
            self._live = LiveLine(self.stream, "crawl", total, "pages")
        if self._live is not None:
            self._live.show(f["done"], total, rest, note)
            if final:
                self.close()
            return
        of = f"/{total} ({f['percent']:.1f}%)" if total else " fetched"
        print(f"crawl: {f['elapsed_s']:.0f}s {f['done']}{of}, {rest}", file=self.stream, flush=True)
        if note:
            print(note, file=self.stream, flush=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = None
