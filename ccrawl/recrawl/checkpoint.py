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

The file is input like any other, so :func:`load_checkpoint` trusts none of it (issue #13):
file paths are stored relative to ``--out`` (version 2; version 1 stored them as the run saw
them, relative to its working directory, and is still read) and any path that lands outside
``--out`` is refused, the position and the durable ranges must lie inside the work list, a
``done`` mark must sit at its end, and an unknown version is refused rather than guessed at.
Every refusal is a :class:`UsageError` naming ``--state``, never a traceback.
"""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ccrawl.durable import IN_PROGRESS, write_bytes
from ccrawl.errors import UsageError
from ccrawl.jsontypes import JSONObject
from ccrawl.recrawl.worklist import identity_digest

Position = tuple[int, int]  # (part index, row offset)

#: The version this code writes; it reads every version in ``READABLE_VERSIONS``.
VERSION = 2
#: 1: paths relative to the writing run's working directory (or absolute); 2: relative to --out.
READABLE_VERSIONS = (1, 2)


@dataclass(slots=True)
class Checkpoint:
    """The persisted state of a recrawl run."""

    worklist: JSONObject
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
    #: The output directory the paths above live in; they are written relative to it.
    out: str = ""

    def _rel(self, path: str) -> str:
        return os.path.relpath(os.path.abspath(path), os.path.abspath(self.out or "."))

    def to_json(self) -> dict[str, object]:
        return {
            "version": VERSION,
            "worklist_id": identity_digest(self.worklist),
            "worklist": self.worklist,
            "shard": self.shard,
            "shards": self.shards,
            "part": self.part,
            "row": self.row,
            "done": self.done,
            "fetched": self.fetched,
            "durable_above": self.durable_above,
            "warc_files": {self._rel(k): v for k, v in self.warc_files.items()},
            "pending_renames": [[self._rel(a), self._rel(b)] for a, b in self.pending_renames],
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
    write_bytes(path, json.dumps(cp.to_json(), separators=(",", ":")).encode())


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    worklist: JSONObject,
    shard: int,
    shards: int,
    out: str | os.PathLike[str] | None = None,
    rows_per_part: list[int] | None = None,
) -> Checkpoint | None:
    """The checkpoint at ``path`` for this work list and shard; None when there is none yet.

    ``out`` is the run's output directory: the file paths in the checkpoint are resolved against
    it and must stay inside it. ``rows_per_part`` (the work list's row count per part) bounds the
    position and the durable ranges. Anything that does not fit raises :class:`UsageError`.
    """
    target = Path(path)
    if not target.exists():
        return None
    try:
        raw = json.loads(target.read_bytes())
        return _validated(raw, target, worklist, shard, shards, out, rows_per_part)
    except UsageError:
        raise
    except IsADirectoryError as exc:
        raise UsageError(f"--state {target} is a directory: name a file (it is created on the first run)") from exc
    except OSError as exc:
        raise UsageError(f"--state {target} cannot be read ({exc.strerror or exc})") from exc
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError, RuntimeError) as exc:
        raise UsageError(
            f"--state {target} is not a recrawl checkpoint ({type(exc).__name__}: {_short(exc)}); "
            "move it aside or pick another"
        ) from exc


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."


def _int(value: object, name: str) -> int:
    """An integer field: a JSON int, not a bool, a float or a string that looks like one."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    return value


def _validated(
    raw: object,
    target: Path,
    worklist: JSONObject,
    shard: int,
    shards: int,
    out: str | os.PathLike[str] | None,
    rows_per_part: list[int] | None,
) -> Checkpoint:
    if not isinstance(raw, dict):
        raise TypeError(f"the file holds a JSON {type(raw).__name__}, not an object")
    version = raw.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise UsageError(
            f"--state {target} is checkpoint version {version!r}; this ccrawl reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}: resume it with the ccrawl that wrote it, or use another --state"
        )
    if not isinstance(raw["worklist"], dict):
        raise TypeError("worklist must be an object")
    if raw["worklist"] != worklist:
        theirs = raw["worklist"]
        raise UsageError(
            f"--state {target} belongs to another work list (id {identity_digest(theirs)}, "
            f"{theirs.get('source')}) and this run reads id {identity_digest(worklist)} "
            f"({worklist.get('source')}); its row offset points at nothing here: use another --state"
        )
    got_shard, got_shards = _int(raw["shard"], "shard"), _int(raw["shards"], "shards")
    if (got_shard, got_shards) != (shard, shards):
        raise UsageError(
            f"--state {target} was written for --shard {got_shard} --shards {got_shards}, not "
            f"--shard {shard} --shards {shards}: use the checkpoint of this shard"
        )
    done = raw["done"]
    if not isinstance(done, bool):
        raise TypeError("done must be true or false")
    durable = raw.get("durable_above", [])
    if not isinstance(durable, list):
        raise TypeError("durable_above must be a list")
    cp = Checkpoint(
        worklist=raw["worklist"],
        shard=got_shard,
        shards=got_shards,
        part=_int(raw["part"], "part"),
        row=_int(raw["row"], "row"),
        done=done,
        fetched=_int(raw["fetched"], "fetched"),
        durable_above=[_durable_range(r) for r in durable],
        out=str(out) if out is not None else "",
    )
    if cp.fetched < 0:
        raise UsageError(f"--state {target}: fetched {cp.fetched} is negative; the file was edited or damaged")
    _check_position(cp, target, rows_per_part)
    warc_files = raw.get("warc_files", {})
    renames = raw.get("pending_renames", [])
    if not isinstance(warc_files, dict) or not isinstance(renames, list):
        raise TypeError("warc_files must be an object and pending_renames a list")
    if (warc_files or renames) and out is None:
        raise UsageError(
            f"--state {target} lists output files still to finish; pass the --out of the run that wrote it"
        )
    inside = _InsideOut(target, out or ".", relative_to_out=version >= 2)
    for name, size in warc_files.items():
        tmp = inside.path(name, "warc_files")
        if not tmp.endswith(IN_PROGRESS) or _int(size, "warc_files size") < 0:
            raise UsageError(f"--state {target}: warc_files entry {name!r}: {size!r} is not a .tmp file and a length")
        cp.warc_files[tmp] = size
    for entry in renames:
        if not isinstance(entry, list) or len(entry) != 2:
            raise TypeError("a pending_renames entry must be [temp name, final name]")
        tmp, final = inside.path(entry[0], "pending_renames"), inside.path(entry[1], "pending_renames")
        if tmp != final + IN_PROGRESS:
            raise UsageError(f"--state {target}: pending rename {entry!r} is not <name>.tmp -> <name>")
        cp.pending_renames.append([tmp, final])
    return cp


def _durable_range(entry: object) -> list[int]:
    if not isinstance(entry, list) or len(entry) != 3:
        raise TypeError("a durable_above entry must be [part, first row, end row]")
    return [_int(v, "durable_above") for v in entry]


def _check_position(cp: Checkpoint, target: Path, rows_per_part: list[int] | None) -> None:
    """The mark and the durable ranges lie inside the work list; ``done`` sits at its end."""
    if cp.part < 0 or cp.row < 0:
        raise UsageError(f"--state {target}: part {cp.part} row {cp.row} is not a position in a work list")
    for part, first, end in cp.durable_above:
        if part < 0 or not 0 <= first < end:
            raise UsageError(f"--state {target}: durable_above range {[part, first, end]} is not a row range")
    if rows_per_part is None:
        return
    n = len(rows_per_part)
    at_end = (cp.part, cp.row) == (n, 0)
    if not at_end and (cp.part >= n or cp.row > rows_per_part[cp.part]):
        raise UsageError(
            f"--state {target}: part {cp.part} row {cp.row} is past the end of the work list "
            f"({n} parts); the file was edited or belongs elsewhere: use another --state"
        )
    if cp.done and not at_end:
        raise UsageError(
            f"--state {target} says done at part {cp.part} row {cp.row}, before the end of the work list "
            f"(part {n} row 0); the file was edited or damaged: use another --state"
        )
    for part, first, end in cp.durable_above:
        if part >= n or end > rows_per_part[part] or (part, first) < (cp.part, cp.row):
            raise UsageError(
                f"--state {target}: durable_above range {[part, first, end]} is not above the mark inside the "
                "work list; the file was edited or damaged: use another --state"
            )


class _InsideOut:
    """Resolves a checkpoint's file names against ``--out`` and refuses any that lands outside it."""

    def __init__(self, target: Path, out: str | os.PathLike[str], *, relative_to_out: bool) -> None:
        self.target = target
        self.out = Path(out).resolve()
        self.relative_to_out = relative_to_out

    def path(self, name: object, field_name: str) -> str:
        if not isinstance(name, str) or not name or "\x00" in name:
            raise TypeError(f"a {field_name} file name must be a non-empty string")
        given = Path(name)
        if self.relative_to_out:
            if given.is_absolute() or ".." in given.parts:
                self._refuse(name, field_name)
            given = self.out / given
        resolved = given.resolve()
        if resolved == self.out or self.out not in resolved.parents:
            self._refuse(name, field_name)
        return str(resolved)

    def _refuse(self, name: str, field_name: str) -> None:
        raise UsageError(
            f"--state {self.target}: {field_name} names {name!r}, outside --out {self.out}; a checkpoint only "
            "ever names files inside its --out (resume from the directory the run started in if it is an "
            "old checkpoint, else use another --state)"
        )


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
