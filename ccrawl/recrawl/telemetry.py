"""What a running recrawl tells the outside: progress on stderr, a JSONL journal, Prometheus metrics.

``--progress text`` draws a live line on a terminal (tqdm, :class:`ccrawl.progress.LiveLine`) and
prints one line per tick elsewhere, ``json`` one JSON object per tick, ``none`` nothing. The
fields of a tick are documented in docs/recrawl.md ("Progress"); the gauges carry the same.
``--journal FILE`` appends one JSON object per event (``start``, ``shard_sealed``,
``checkpoint``, ``tick``, ``end``), each with ``ts`` (unix seconds) and ``event``.
``--metrics-addr host:port`` serves the counters through prometheus_client on its own
registry, so two runs in one process never collide, and on the same port a read-only status page
(:mod:`ccrawl.recrawl.statuspage`: ``/`` the page, ``/status.json`` its data, ``/metrics``).
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, TextIO, TypedDict, Unpack

from ccrawl.errors import UsageError
from ccrawl.progress import LiveLine, errors_text, human_bytes, human_seconds, is_terminal

if TYPE_CHECKING:
    from prometheus_client import Gauge

    from ccrawl.fetch.stats import FailureNote
    from ccrawl.recrawl.statuspage import StatusServer

#: The numeric tick fields served as ``ccrawl_recrawl_<name>`` gauges (``errors`` is a labelled one).
GAUGES = (
    ("done", "Work-list rows done (before this run, walked past, or written this run); see total_of"),
    ("total", "Rows the run is to do: the work list's, or --max-pages"),
    ("percent", "done / total, in percent"),
    ("rate", "Fetches per second over the last minute"),
    ("eta_s", "Seconds left at the last minute's pace (-1 while unknown)"),
    ("rows", "Rows durably written this run"),
    ("written", "Rows handed to the writers this run, the open files' included"),
    ("fetched", "Fetch attempts finished this run"),
    ("failed", "Fetch attempts that failed"),
    ("body_bytes", "Body bytes fetched"),
    ("held", "URLs held by the fetch processes"),
    ("queue_bytes", "Bytes held in the stage queues"),
    ("quiet_s", "Seconds since any counter last moved"),
    ("waiting", "Stages reported waiting (the ticks' waiting list, 0 while the run moves)"),
    ("files", "Output files sealed"),
    ("part", "Checkpoint part"),
    ("row", "Checkpoint row offset"),
)


class Progress(TypedDict):
    """The progress fields of a tick (docs/recrawl.md, "Progress")."""

    done: int
    total: int
    total_of: str
    percent: float | None
    rate: float
    eta_s: float | None
    fetched: int
    ok: int
    failed: int
    not_modified: int
    written: int
    durable: int
    extracted: int
    bytes: int
    errors: dict[str, int]
    held: int
    quiet_s: float
    waiting: list[str]


class TickFields(Progress, total=False):
    """A tick: the progress fields, where the run is, and what the telemetry adds (docs/recrawl.md)."""

    part: int
    row: int
    queue_bytes: int
    files: int
    final: bool
    slow_hosts: list[tuple[str, float]]
    last_errors: list[FailureNote]
    pages_per_s: float
    elapsed_s: float


class Telemetry:
    """Progress, journal and metrics of one run."""

    def __init__(self, *, progress: str = "none", journal: str | None = None, metrics_addr: str | None = None,
                 stream: TextIO | None = None) -> None:
        self.progress = progress
        self.stream = stream or sys.stderr
        try:
            self._journal: TextIO | None = open(journal, "a", encoding="utf-8") if journal else None  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"--journal {journal} cannot be opened ({exc.strerror or exc})") from None
        self._started = time.monotonic()
        self._last: tuple[float, int] = (self._started, 0)
        self._metrics: dict[str, Gauge] = {}
        self._server: StatusServer | None = None
        self._live: LiveLine | None = None
        from ccrawl.recrawl.statuspage import History

        self.history = History()
        if metrics_addr:
            self._start_metrics(metrics_addr)

    def _start_metrics(self, addr: str) -> None:
        from prometheus_client import CollectorRegistry, Gauge, generate_latest

        from ccrawl.recrawl.statuspage import StatusServer

        host, _, port = addr.rpartition(":")
        if not port.isdigit():
            raise UsageError(f"--metrics-addr must be host:port or :port (got {addr!r})")
        registry = CollectorRegistry()
        for name, doc in GAUGES:
            self._metrics[name] = Gauge(f"ccrawl_recrawl_{name}", doc, registry=registry)
        self._metrics["errors"] = Gauge("ccrawl_recrawl_errors", "Failed fetches by error class", ["class"],
                                        registry=registry)
        try:
            self._server = StatusServer(host or "127.0.0.1", int(port), self.history.snapshot,
                                        metrics=lambda: generate_latest(registry))
        except (OSError, ValueError, OverflowError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"--metrics-addr {addr}: cannot listen there ({reason}); pick a free port") from None

    def event(self, name: str, **fields: object) -> None:
        if self._journal is not None:
            self._journal.write(json.dumps({"ts": round(time.time(), 3), "event": name, **fields}) + "\n")
            self._journal.flush()

    def tick(self, **fields: Unpack[TickFields]) -> None:
        now = time.monotonic()
        then, before = self._last
        rate = (fields["durable"] - before) / max(now - then, 1e-9)
        self._last = (now, fields["durable"])
        fields["pages_per_s"] = round(rate, 1)
        fields["elapsed_s"] = round(now - self._started, 1)
        self._gauges(fields)
        self.history.add(fields)
        self.event("tick", **fields)
        if self.progress == "json":
            print(json.dumps({"event": "tick", **fields}), file=self.stream, flush=True)
        elif self.progress == "text":
            self._text(fields)

    def _gauges(self, fields: TickFields) -> None:
        if not self._metrics:
            return
        values: dict[str, object] = {**fields, "rows": fields["durable"], "body_bytes": fields["bytes"],
                  "waiting": len(fields.get("waiting") or ()),
                  "eta_s": -1 if fields.get("eta_s") is None else fields["eta_s"],
                  "percent": fields.get("percent") or 0}
        for name, _ in GAUGES:
            value = values.get(name)
            if isinstance(value, int | float):
                self._metrics[name].set(value)
        for cls, n in (fields.get("errors") or {}).items():
            self._metrics["errors"].labels(cls).set(n)

    def _text(self, f: TickFields) -> None:
        """The progress line: live on a terminal, one line per tick elsewhere."""
        files = f"{f['files']} file{'s' * (f['files'] != 1)}"
        rest = (f"{f['rate']:.0f}/s, ETA {human_seconds(f['eta_s'])}, {human_bytes(f['bytes'])}, "
                f"{errors_text(f['errors'])}, {f['written']} written ({f['durable']} durable, {files})")
        note = "recrawl: waiting: " + "; ".join(f["waiting"]) if f.get("waiting") else ""
        if self._live is None and is_terminal(self.stream) and not f.get("final"):
            self._live = LiveLine(self.stream, "recrawl", f["total"], "url")
        if self._live is not None:
            self._live.show(f["done"], f["total"], rest, note)
            if f.get("final"):
                self._live.close()
                self._live = None
            return
        pct = f"{f['percent']:.1f}%" if f.get("percent") is not None else "?%"
        print(f"recrawl: {f['elapsed_s']:.0f}s {f['done']}/{f['total']} ({pct}), {rest}", file=self.stream,
              flush=True)
        if note:
            print(note, file=self.stream, flush=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = None
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._server is not None:
            self._server.shutdown()
            self._server = None
