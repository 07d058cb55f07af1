"""What a running recrawl tells the outside: progress on stderr, a JSONL journal, Prometheus metrics.

``--progress text`` prints one line per tick, ``json`` one JSON object per tick, ``none``
nothing. ``--journal FILE`` appends one JSON object per event (``start``, ``shard_sealed``,
``checkpoint``, ``tick``, ``end``), each with ``ts`` (unix seconds) and ``event``.
``--metrics-addr host:port`` serves the counters through prometheus_client on its own
registry, so two runs in one process never collide, and on the same port a read-only status page
(:mod:`ccrawl.recrawl.statuspage`: ``/`` the page, ``/status.json`` its data, ``/metrics``).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from ccrawl.errors import UsageError


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
        self._metrics: dict[str, Any] = {}
        self._server: Any = None
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
        for name, doc in (
            ("rows", "Rows durably written this run"),
            ("fetched", "Fetch attempts finished this run"),
            ("failed", "Fetch attempts that failed"),
            ("body_bytes", "Body bytes fetched"),
            ("queue_bytes", "Bytes held in the stage queues"),
            ("files", "Output files sealed"),
            ("part", "Checkpoint part"),
            ("row", "Checkpoint row offset"),
        ):
            self._metrics[name] = Gauge(f"ccrawl_recrawl_{name}", doc, registry=registry)
        try:
            self._server = StatusServer(host or "127.0.0.1", int(port), self.history.snapshot,
                                        metrics=lambda: generate_latest(registry))
        except (OSError, ValueError, OverflowError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"--metrics-addr {addr}: cannot listen there ({reason}); pick a free port") from None

    def event(self, name: str, **fields: Any) -> None:
        if self._journal is not None:
            self._journal.write(json.dumps({"ts": round(time.time(), 3), "event": name, **fields}) + "\n")
            self._journal.flush()

    def tick(self, **fields: Any) -> None:
        now = time.monotonic()
        then, before = self._last
        rate = (fields["durable"] - before) / max(now - then, 1e-9)
        self._last = (now, fields["durable"])
        fields["pages_per_s"] = round(rate, 1)
        fields["elapsed_s"] = round(now - self._started, 1)
        for key in ("fetched", "failed", "files", "part", "row", "queue_bytes"):
            if key in self._metrics:
                self._metrics[key].set(fields[key])
        if "rows" in self._metrics:
            self._metrics["rows"].set(fields["durable"])
            self._metrics["body_bytes"].set(fields["bytes"])
        self.history.add(fields)
        self.event("tick", **fields)
        if self.progress == "json":
            print(json.dumps({"event": "tick", **fields}), file=self.stream, flush=True)
        elif self.progress == "text":
            print(
                f"recrawl: {fields['elapsed_s']:.0f}s {fields['durable']} written, {fields['fetched']} fetched "
                f"({fields['failed']} failed), {rate:.0f} pages/s, queue {fields['queue_bytes'] / 1048576:.1f} MB, "
                f"{fields['files']} files, at part {fields['part']} row {fields['row']}",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._server is not None:
            self._server.shutdown()
            self._server = None
