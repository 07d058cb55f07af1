"""One status page for a whole fleet: every shard's latest tick, summed, and one row a shard.

Each shard run of ``recrawl fleet`` writes its journal to ``<work>/shard-<i>of<N>/journal.jsonl``
(one JSON object a line; its ``tick`` events carry the run's counters). ``recrawl fleet
--status-addr host:port`` reads the new lines of every journal every two seconds and serves the
same page as a single run (:mod:`ccrawl.recrawl.statuspage`) over the sums, with a table of the
shards: where each one is, and which have not ticked for a while.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccrawl.recrawl.statuspage import History, StatusServer

#: counters summed over the shards (the others are per shard only)
SUMMED = ("fetched", "failed", "durable", "rows", "bytes", "files", "done", "total", "queue_bytes")
QUIET = 60.0  #: a shard with no tick for this long is marked quiet


class JournalTail:
    """What one journal says now: the newest ``tick``, updated by the counters of later ``checkpoint``
    and ``end`` events (a short run may end before its first tick); only new lines are read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        self.tick: dict[str, Any] = {}
        self.seen = 0.0
        self.ended = False

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(8 << 20)
        except OSError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("event")
            if kind == "tick":
                self.tick, self.seen = event, time.time()
            elif kind in ("checkpoint", "end"):
                self.tick.update({k: v for k, v in event.items() if k in SUMMED and isinstance(v, int | float)})
                self.seen = time.time()
                self.ended = self.ended or kind == "end"


class FleetPage:
    """Aggregates the shards' journals into a :class:`History`, serves it when given an address, and
    says a progress line through ``say`` every ``say_every`` seconds (and when a shard ends)."""

    def __init__(self, directories: list[Path], addr: str | None, *, every: float = 2.0,
                 say: Callable[[str], None] | None = None, say_every: float = 30.0) -> None:
        from ccrawl.errors import UsageError
        from ccrawl.progress import Window

        self.tails = [JournalTail(d / "journal.jsonl") for d in directories]
        self.history = History()
        self.server: StatusServer | None = None
        self.say, self.say_every = say, say_every
        self._said = time.monotonic()
        self._ended = 0
        self._rate = Window(time.monotonic())
        if addr is not None:
            host, _, port = addr.rpartition(":")
            if not port.isdigit():
                raise UsageError(f"--status-addr must be host:port or :port (got {addr!r})")
            try:
                self.server = StatusServer(host or "127.0.0.1", int(port), self.history.snapshot,
                                           title=f"ccrawl recrawl fleet ({len(directories)} shards)")
            except (OSError, OverflowError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise UsageError(f"--status-addr {addr}: cannot listen there ({reason}); pick a free port") from None
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="ccrawl-fleet-page", daemon=True)
        self.thread.start()

    def aggregate(self) -> dict[str, Any]:
        """The fields of one fleet tick: the sums, and a row a shard."""
        now = time.time()
        totals: dict[str, Any] = dict.fromkeys(SUMMED, 0)
        shards = {}
        errors: dict[str, int] = {}
        for i, tail in enumerate(self.tails):
            tail.poll()
            tick = tail.tick
            for key in SUMMED:
                if isinstance(tick.get(key), int | float):
                    totals[key] += tick[key]
            for cls, n in (tick.get("errors") or {}).items():
                if isinstance(n, int | float):
                    errors[cls] = errors.get(cls, 0) + int(n)
            state = ("ended" if tail.ended else "not started" if not tick
                     else f"quiet {now - tail.seen:.0f} s" if now - tail.seen > QUIET else "running")
            shards[f"shard {i}"] = {"state": state, "fetched": tick.get("fetched", 0), "failed": tick.get("failed", 0),
                                    "written": tick.get("durable", tick.get("rows", 0))}
        if not totals["total"]:
            del totals["total"]
        totals["stages"] = shards
        totals["errors"] = errors
        totals["percent"] = 100 * totals["done"] / totals["total"] if totals.get("total") else None
        totals["state"] = "ended" if all(t.ended for t in self.tails) else "running"
        return totals

    def line(self, fields: dict[str, Any]) -> str:
        """``recrawl fleet: 1,234 fetched, 3 failed, 24.7% of the work list, ETA 1m07s; shards 2 running, 1 ended``."""
        from collections import Counter

        from ccrawl.progress import eta_seconds, human_seconds

        rate = self._rate.add(time.monotonic(), float(fields["done"]))
        groups = Counter("quiet" if row["state"].startswith("quiet") else row["state"]
                         for row in fields["stages"].values())
        counts = ", ".join(f"{n} {state}" for state, n in sorted(groups.items()))
        pct = fields.get("percent")
        where = f", {pct:.1f}% of the work list" if pct is not None else ""
        eta = ""
        if fields.get("total"):
            eta = f", ETA {human_seconds(eta_seconds(fields['done'], fields['total'], rate))}"
        return f"recrawl fleet: {fields['fetched']:,} fetched, {fields['failed']:,} failed{where}{eta}; shards {counts}"

    def _loop(self) -> None:
        while not self.stop.wait(self.every):
            fields = self.aggregate()
            self.history.add(fields)
            ended = sum(1 for row in fields["stages"].values() if row["state"] == "ended")
            now = time.monotonic()
            if self.say is not None and (now - self._said >= self.say_every or ended != self._ended):
                self._said, self._ended = now, ended
                self.say(self.line(fields))

    def close(self) -> None:
        """Stop reading; say the last line (every shard's final counts) and stop serving."""
        self.stop.set()
        self.thread.join(5)
        fields = self.aggregate()
        self.history.add(fields)
        if self.say is not None:
            self.say(self.line(fields))
        if self.server is not None:
            self.server.shutdown()
