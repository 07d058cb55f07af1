"""What search does on this machine after the index has answered: --at, --latest-only, --dedup, --sort.

All of them share one budget, ``max_buffer`` records held in memory (:class:`Budget`). Past it:

* ``--at`` and ``--latest-only`` stay exact. A CDX answer is sorted by urlkey and every capture
  of a URL sits in one urlkey group, so each crawl's answer is reduced group by group as it
  streams past (:func:`reduce_groups`); the reduced answers of several crawls are *runs*
  sorted by urlkey, held in memory until the budget is spent and written to temporary files in
  TMPDIR after that (:class:`RunStore`), then merged (``heapq.merge``) and reduced once more;
* ``--dedup`` cannot be exact, because payload digests arrive in no order: it forgets the
  digest it has not seen for the longest (:class:`DigestFilter`) and says so once, which lets
  a duplicate through rather than dropping a unique record;
* ``--sort`` sorts in memory up to the budget and as an external merge sort past it;
* ``--at`` sorts its result newest first when the result fits in the budget (the budget again),
  and hands it over in index order otherwise, saying so.

Temporary files live in one directory that :class:`RunStore` removes when it is closed, and
which Python's finaliser removes if the process ends without closing it.
"""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import json
import os
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

__all__ = [
    "Budget",
    "DigestFilter",
    "RunStore",
    "closest_to",
    "latest",
    "reduce_groups",
    "sort_records",
]

Row = dict[str, Any]
Reducer = Callable[[Row, Row], Row]


class Budget:
    """Records held in memory by --at, --latest-only, --dedup and --sort together."""

    def __init__(self, max_buffer: int) -> None:
        self.max_buffer = max(1, int(max_buffer))
        self.held = 0

    def room(self) -> int:
        return self.max_buffer - self.held


def _seconds(ts: str) -> float:
    digits = (ts + "00000101000000"[len(ts) :])[:14] if len(ts) < 14 else ts[:14]
    try:
        return dt.datetime.strptime(digits, "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC).timestamp()
    except ValueError:
        return 0.0


def latest(a: Row, b: Row) -> Row:
    """The newer of two captures (the later one in index order on a tie)."""
    return b if str(b["timestamp"]) >= str(a["timestamp"]) else a


def closest_to(target: str) -> Reducer:
    """A reducer keeping the capture closest to ``target`` (digits); the newer one on a tie."""
    when = _seconds(target)

    def pick(a: Row, b: Row) -> Row:
        da, db = abs(_seconds(str(a["timestamp"])) - when), abs(_seconds(str(b["timestamp"])) - when)
        if db < da or (db == da and str(b["timestamp"]) > str(a["timestamp"])):
            return b
        return a

    return pick


def reduce_groups(rows: Iterable[Row], reducer: Reducer) -> Iterator[Row]:
    """One row per run of equal ``urlkey`` (rows must arrive sorted by urlkey)."""
    for _, group in itertools.groupby(rows, key=lambda r: r["urlkey"]):
        best: Row | None = None
        for row in group:
            best = row if best is None else reducer(best, row)
        if best is not None:
            yield best


class RunStore:
    """Sorted runs of rows, held in memory within the budget and spilled to TMPDIR past it."""

    def __init__(self, budget: Budget, tmpdir: str | None = None) -> None:
        self.budget = budget
        self._tmpdir = tmpdir
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self.runs: list[list[Row] | str] = []
        self.spilled_rows = 0
        self._memory_rows = 0

    @property
    def directory(self) -> str | None:
        return self._dir.name if self._dir is not None else None

    def _file(self) -> tuple[IO[str], str]:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="ccrawl-search-", dir=self._tmpdir)
        fd, path = tempfile.mkstemp(suffix=".jsonl", dir=self._dir.name)
        return os.fdopen(fd, "w", encoding="utf-8"), path

    def add_run(self, rows: Iterable[Row]) -> None:
        """Store one sorted run: in memory while the budget lasts, then the rest on disk."""
        memory: list[Row] = []
        out: IO[str] | None = None
        path = ""
        for row in rows:
            if out is None and self.budget.room() > 0:
                memory.append(row)
                self.budget.held += 1
                continue
            if out is None:
                out, path = self._file()
                for held in memory:
                    out.write(json.dumps(held) + "\n")
                self.budget.held -= len(memory)
                self.spilled_rows += len(memory)
                memory = []
            out.write(json.dumps(row) + "\n")
            self.spilled_rows += 1
        if out is not None:
            self.runs.append(path)
            out.close()
        else:
            self.runs.append(memory)
            self._memory_rows += len(memory)

    def spill_run(self, rows: Iterable[Row]) -> None:
        """Write one sorted run straight to disk."""
        out, path = self._file()
        with out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
                self.spilled_rows += 1
        self.runs.append(path)

    def _read(self, run: list[Row] | str) -> Iterator[Row]:
        if isinstance(run, list):
            yield from run
            return
        with open(run, encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)

    def merged(self, key: Callable[[Row], Any], reverse: bool = False) -> Iterator[Row]:
        """All runs merged by ``key`` (each run must already be sorted by it)."""
        return heapq.merge(*(self._read(r) for r in self.runs), key=key, reverse=reverse)

    def release(self) -> None:
        """Give the in-memory rows back to the budget (the runs are being consumed)."""
        self.budget.held -= self._memory_rows
        self._memory_rows = 0

    def close(self) -> None:
        self.runs = []
        self.release()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


class DigestFilter:
    """Drops rows whose payload digest was seen; past the budget forgets the least recently seen."""

    def __init__(self, budget: Budget, warn: Callable[[str], None]) -> None:
        self.budget = budget
        self.seen: OrderedDict[str, None] = OrderedDict()
        self._warn = warn
        self.forgotten = 0

    def keep(self, row: Row) -> bool:
        digest = str(row.get("digest") or "")
        if not digest:
            return True
        if digest in self.seen:
            self.seen.move_to_end(digest)
            return False
        if self.budget.room() <= 0 and self.seen:
            self.seen.popitem(last=False)
            self.budget.held -= 1
            if self.forgotten == 0:
                self._warn(
                    f"search: --dedup holds {self.budget.max_buffer} records (--max-buffer); from here on it "
                    "forgets the digests it has not seen for the longest, so a duplicate may get through"
                )
            self.forgotten += 1
        self.seen[digest] = None
        self.budget.held += 1
        return True

    def close(self) -> None:
        self.budget.held -= len(self.seen)
        self.seen.clear()


def sort_records(
    rows: Iterable[Row], key: Callable[[Row], Any], *, reverse: bool, budget: Budget, tmpdir: str | None = None
) -> Iterator[Row]:
    """``rows`` sorted by ``key``: in memory within the budget, an external merge sort past it."""
    store = RunStore(budget, tmpdir)
    size = max(1, budget.room())
    chunk: list[Row] = []
    try:
        for row in rows:
            chunk.append(row)
            budget.held += 1
            if len(chunk) >= size:
                chunk.sort(key=key, reverse=reverse)
                store.spill_run(chunk)
                budget.held -= len(chunk)
                chunk = []
        chunk.sort(key=key, reverse=reverse)
        store.runs.append(chunk)
        yield from store.merged(key, reverse=reverse)
    finally:
        budget.held -= len(chunk)
        store.close()
