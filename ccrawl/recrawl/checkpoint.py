"""The recrawl checkpoint: where the next run starts, and the tracker that decides it.

A checkpoint is a low-water mark (``part``, ``row``) in work-list order: every row before it
is either not this shard's or is in readable output. Rows above the mark that are already
durable (a seal that landed while earlier rows were still in flight) are listed in
``durable_above`` as ``[part, first_row, end_row)`` ranges, so a resume neither re-fetches
them (no duplicates) nor skips anything that is not in them (no gaps). The list is bounded
by what the pipeline holds in flight, so the file stays a few hundred bytes to a few KB.

The file is written to ``<state>.tmp``, fsynced, renamed over ``<state>`` and the directory
fsynced, so a kill at any instant leaves the old checkpoint or the new one, never half.
A checkpoint written for another work list, shard or shard count is refused.
"""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccrawl.errors import UsageError
from ccrawl.recrawl.worklist import identity_digest

Position = tuple[int, int]  # (part index, row offset)


@dataclass(slots=True)
class Checkpoint:
    """The persisted state of a recrawl run."""

    worklist: dict[str, Any]
    shard: int = 0
    shards: int = 1
    part: int = 0
    row: int = 0
    done: bool = False
    fetched: int = 0
    durable_above: list[list[int]] = field(default_factory=list)
    #: WARC files still growing: temp name -> bytes known durable (fsynced and checkpointed).
    warc_files: dict[str, int] = field(default_factory=dict)
    #: Sealed files whose rows this checkpoint covers but whose rename may not have happened yet.
    pending_renames: list[list[str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "worklist_id": identity_digest(self.worklist),
            "worklist": self.worklist,
            "shard": self.shard,
            "shards": self.shards,
            "part": self.part,
            "row": self.row,
            "done": self.done,
            "fetched": self.fetched,
            "durable_above": self.durable_above,
            "warc_files": self.warc_files,
            "pending_renames": self.pending_renames,
            "updated_at": int(time.time()),
        }

    def durable_rows(self) -> set[Position]:
        """Rows above the low-water mark that are already in readable output."""
        out: set[Position] = set()
        for part, start, end in self.durable_above:
            out.update((part, r) for r in range(start, end))
        return out


def save_checkpoint(path: str | os.PathLike[str], cp: Checkpoint) -> None:
    """Write atomically: temp file, fsync, rename, fsync the directory."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    data = json.dumps(cp.to_json(), separators=(",", ":")).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    dfd = os.open(target.parent if str(target.parent) else ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def load_checkpoint(
    path: str | os.PathLike[str], *, worklist: dict[str, Any], shard: int, shards: int
) -> Checkpoint | None:
    """The checkpoint at ``path`` for this work list and shard; None when there is none yet."""
    target = Path(path)
    if not target.exists():
        return None
    try:
        raw = json.loads(target.read_text())
        cp = Checkpoint(
            worklist=raw["worklist"],
            shard=int(raw["shard"]),
            shards=int(raw["shards"]),
            part=int(raw["part"]),
            row=int(raw["row"]),
            done=bool(raw["done"]),
            fetched=int(raw["fetched"]),
            durable_above=[[int(a), int(b), int(c)] for a, b, c in raw.get("durable_above", [])],
            warc_files={str(k): int(v) for k, v in raw.get("warc_files", {}).items()},
            pending_renames=[[str(a), str(b)] for a, b in raw.get("pending_renames", [])],
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"--state {target} is not a recrawl checkpoint ({exc}); move it aside or pick another"
        ) from exc
    if cp.worklist != worklist:
        raise UsageError(
            f"--state {target} belongs to another work list (id {identity_digest(cp.worklist)}, "
            f"{cp.worklist.get('source')}) and this run reads id {identity_digest(worklist)} "
            f"({worklist.get('source')}); its row offset points at nothing here: use another --state"
        )
    if (cp.shard, cp.shards) != (shard, shards):
        raise UsageError(
            f"--state {target} was written for --shard {cp.shard} --shards {cp.shards}, not "
            f"--shard {shard} --shards {shards}: use the checkpoint of this shard"
        )
    return cp


def _ranges(positions: Iterable[Position]) -> list[list[int]]:
    out: list[list[int]] = []
    for part, row in sorted(positions):
        if out and out[-1][0] == part and out[-1][2] == row:
            out[-1][2] = row + 1
        else:
            out.append([part, row, row + 1])
    return out


class ProgressTracker:
    """Tracks issued rows and durable rows; yields the checkpoint's mark and the durable set above it.

    The feeder calls :meth:`issue` for every owned row in work-list order and :meth:`read_to`
    as it walks past rows (owned or not); the sink calls :meth:`mark_durable` when rows land in
    readable output, in any order. :meth:`position` never passes a row that is not durable.
    """

    def __init__(self, start: Position = (0, 0), durable_above: Iterable[Position] = ()) -> None:
        self._inflight: OrderedDict[int, tuple[Position, bool]] = OrderedDict()
        self._read_to: Position = start
        #: Durable rows above the mark carried over from the previous run, not yet passed.
        self._carried: set[Position] = set(durable_above)
        self.durable_count = 0

    def read_to(self, pos: Position) -> None:
        """The feeder has walked every row before ``pos`` (issued, dropped or carried over)."""
        self._read_to = max(self._read_to, pos)

    def issue(self, seq: int, pos: Position) -> None:
        """Row ``pos`` was handed to the pipeline under sequence number ``seq``."""
        self._inflight[seq] = (pos, False)

    def mark_durable(self, seqs: Iterable[int]) -> None:
        """These rows are in readable output (sealed shard, fsynced WARC, or counted and not kept)."""
        for seq in seqs:
            entry = self._inflight.get(seq)
            if entry is not None and not entry[1]:
                self._inflight[seq] = (entry[0], True)
                self.durable_count += 1
        while self._inflight:
            seq, (_, durable) = next(iter(self._inflight.items()))
            if not durable:
                break
            self._inflight.popitem(last=False)

    def pending(self) -> int:
        """Issued rows not yet durable."""
        return sum(1 for _, d in self._inflight.values() if not d)

    def position(self) -> Position:
        """The low-water mark: the first issued row not yet durable, else where the feeder has read to."""
        for pos, durable in self._inflight.values():
            if not durable:
                return pos
        return self._read_to

    def durable_above(self) -> list[list[int]]:
        """Durable rows past the mark, as ``[part, start, end)`` ranges."""
        mark = self.position()
        rows = {pos for pos, d in self._inflight.values() if d and pos > mark}
        rows.update(p for p in self._carried if p >= mark)
        self._carried = {p for p in self._carried if p >= mark}
        return _ranges(rows)
