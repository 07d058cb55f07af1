"""Progress of a long run (``recrawl run``, ``crawl run``): rates over the last minute, the ETA,
the quiet detector's clock, and the live line on a terminal.

The runs build their tick (a dict of fields, the same in the JSON ticks, the journal and the
Prometheus gauges) and hand it to :class:`LiveLine` on a terminal, or print it as one JSON object
elsewhere. The live line is drawn by ``tqdm`` (already installed with ``huggingface_hub``):
``recrawl: 42%|████      | 1260/3000 …``, redrawn in place, with notes (a stage waiting on
another) printed above it.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, TextIO

#: Rates are taken over this many seconds (the first minute: since the start).
WINDOW_S = 60.0
#: Default: a run whose counters have not moved for this long says which stage waits on what.
QUIET_S = 10.0


class Window:
    """A counter's rate per second over the last :data:`WINDOW_S` seconds."""

    def __init__(self, start: float, value: float = 0.0, span: float = WINDOW_S) -> None:
        self.span = span
        self._samples: deque[tuple[float, float]] = deque([(start, value)])

    def add(self, now: float, value: float) -> float:
        """Record ``value`` at ``now``; the rate from the oldest sample of the window to it."""
        samples = self._samples
        samples.append((now, value))
        # keep one sample at or past the window's start, so the rate spans the whole window
        while len(samples) > 2 and now - samples[1][0] >= self.span:
            samples.popleft()
        then, before = samples[0]
        return (value - before) / (now - then) if now > then else 0.0


class Moved:
    """When any of a set of counters last changed (the quiet detector's clock)."""

    def __init__(self, now: float) -> None:
        self.last: dict[str, float] = {}
        self.at: dict[str, float] = {}
        self.start = now

    def see(self, now: float, **values: float) -> None:
        for name, value in values.items():
            if self.last.get(name) != value:
                self.last[name] = value
                self.at[name] = now

    def since(self, name: str, now: float) -> float:
        """Seconds since ``name`` last changed (since the start when it never did)."""
        return now - self.at.get(name, self.start)

    def quiet(self, now: float) -> float:
        """Seconds since any counter last changed."""
        return now - max(self.at.values(), default=self.start)


def percent(done: int, total: int) -> float | None:
    return round(100.0 * min(done, total) / total, 1) if total > 0 else None


def eta_seconds(done: int, total: int, rate: float) -> float | None:
    """Seconds left at ``rate`` (per second) for ``total - done``; None while the rate is unknown or nil."""
    if total <= 0:
        return None
    if done >= total:
        return 0.0
    if rate <= 0:
        return None
    return round((total - done) / rate, 1)


def human_seconds(s: float | None) -> str:
    if s is None:
        return "?"
    s = round(s)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover - the loop returns


def errors_text(errors: dict[str, int]) -> str:
    """``reset 3, timeout 1`` (largest first), or ``0 errors``."""
    if not errors:
        return "0 errors"
    return "errors " + ", ".join(f"{k} {v}" for k, v in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])))


#: A note (a stage waiting on another) is printed again after this long while it lasts.
NOTE_EVERY_S = 30.0


class LiveLine:
    """One line redrawn in place on a terminal: ``desc: pct%|bar| done/total`` and the tick's summary.

    ``total`` 0 draws no bar (a crawl with no ``--max-pages``). Notes go above the line
    (``tqdm.write``), each once when it starts and then every :data:`NOTE_EVERY_S` seconds.
    """

    def __init__(self, stream: TextIO, desc: str, total: int, unit: str) -> None:
        from tqdm import tqdm

        self.stream = stream
        # a terminal that reports no size (a fresh pseudo-terminal) would get no line at all (tqdm hides a
        # bar below the screen's height): 120 columns and 24 rows then
        sized = _columns(stream) > 0
        self._bar = tqdm(total=total or None, desc=desc, unit=unit, file=stream, dynamic_ncols=sized,
                         ncols=None if sized else 120, nrows=None if sized else 24, mininterval=0.0, smoothing=0.0,
                         leave=True,
                         bar_format=self._format(total))
        self._noted = 0.0

    @staticmethod
    def _format(total: int) -> str:
        if total:
            return "{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt}{postfix}"
        return "{desc}: {n_fmt} {unit}{postfix}"

    def show(self, done: int, total: int, text: str, note: str = "") -> None:
        bar = self._bar
        if (total or None) != bar.total:
            bar.total = total or None
            bar.bar_format = self._format(total)
        bar.n = done
        bar.set_postfix_str(text, refresh=False)
        now = time.monotonic()
        if not note:
            self._noted = 0.0
        elif not self._noted or now - self._noted >= NOTE_EVERY_S:
            self._noted = now
            bar.write(note, file=self.stream)
        bar.refresh()

    def close(self) -> None:
        self._bar.close()


def _columns(stream: Any) -> int:
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 0


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class UnitProgress:
    """Progress of a run made of units (shards, archives, files): ``done/total``, the percentage, the
    rate over the last minute and the ETA, said as one line through ``say`` (the command's stderr).

    A batch command's units take seconds to minutes each, and its other lines (commits, resumes,
    waits) go to the same stream, so it says a line when a unit ends, at most once every ``every``
    seconds (the last unit always): ``markdown export: 12/40 shards (30.0%), 2.4/min, ETA 11m40s,
    5m00s elapsed``. ``total`` None (a stream of unknown length) leaves out the percentage and ETA.
    """

    def __init__(self, what: str, unit: str, total: int | None, say: Any, *, every: float = 5.0,
                 already: int = 0) -> None:
        self.what, self.unit, self.total, self.say, self.every = what, unit, total, say, every
        self.started = time.monotonic()
        self.done = already
        self.failed = 0
        self._window = Window(self.started, float(already))
        self._said = 0.0

    def fields(self, now: float | None = None) -> dict[str, Any]:
        """The tick's fields (as JSON ticks and journals carry them)."""
        now = time.monotonic() if now is None else now
        rate = self._window.add(now, float(self.done))
        total = self.total or 0
        return {"done": self.done, "total": self.total, "percent": percent(self.done, total) if total else None,
                "rate_per_min": round(rate * 60, 2), "eta_s": eta_seconds(self.done, total, rate) if total else None,
                "failed": self.failed, "elapsed_s": round(now - self.started, 1)}

    def line(self, now: float | None = None) -> str:
        f = self.fields(now)
        of = f"{f['done']}/{f['total']}" if f["total"] else f"{f['done']}"
        pct = f" ({f['percent']:.1f}%)" if f["percent"] is not None else ""
        eta = f", ETA {human_seconds(f['eta_s'])}" if f["total"] else ""
        failed = f", {f['failed']} failed" if f["failed"] else ""
        return (f"{self.what}: {of} {self.unit}{pct}, {f['rate_per_min']:g}/min{eta}{failed}, "
                f"{human_seconds(f['elapsed_s'])} elapsed")

    def advance(self, n: int = 1, *, failed: bool = False) -> None:
        """``n`` more units ended (``failed``: without their output); say so if it is time."""
        self.done += n
        self.failed += n if failed else 0
        now = time.monotonic()
        last = self.total is not None and self.done >= self.total
        if last or now - self._said >= self.every:
            self._said = now
            self.say(self.line(now))
