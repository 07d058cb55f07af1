"""A downloaded shard converted by the pool in parts: each worker reads its own records from the file.

With ``--workers N`` the exporting process used to read every record and send each payload down a
pipe to the pool (~145 KB a page, pickled, copied and unpickled onto fresh pages): 0.35-0.45 CPU-s a
shard beyond converting in one process, and a parent that tops out at two or three workers however
many there are (bench/README.md, "the conversion pool's cost"). Instead the file is cut at byte
offsets into parts; a worker finds the first record whose gzip member starts at or after its part's
start, converts every record starting before the part's end, and sends back only the rows.

A part is a :class:`FilePart` (parent to pool) and its answer a :class:`PartResult` (pool to parent).
The cut is exact by construction, and checked, never assumed:

* a record belongs to the part its member starts in; a worker reads on past its end only to say
  where the next record starts (``next``);
* a worker's first record is the first offset at or after its start where a gzip member opens
  that holds a whole WARC record (the gzip header, the member's CRC and the WARC framing all check);
* the parts **agree** when part 0 starts at offset 0, every part's ``first`` is the previous
  part's ``next``, the last part runs to the end of the file, and no worker skipped or reported
  anything. Then the records read are exactly the sequential reader's, each once, in file order.

Anything else (a gzip member stored inside another one that the scan took for a boundary, a damaged
member, one gzip stream for the whole file, junk between records) and :func:`convert_parts` says so,
and the caller converts the shard the sequential way, which reports or stops on it as it always did.

``--dedup-digest`` stays "before extraction" inside each part; a payload first seen in an earlier
part is dropped when the parts are joined (its conversion is the only thing spent), so the rows and
the counts are the sequential ones.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ccrawl.errors import InputError
from ccrawl.markdown.convert import ConvertedDoc, Converter

if TYPE_CHECKING:
    from ccrawl.markdown.sources import ReadStats
    from ccrawl.warc.reader import Record

#: Parts per worker for a file: a few, so a slow part does not leave the other workers idle.
PARTS_PER_WORKER = 4
#: The smallest part worth a trip to the pool, and the largest (its rows come back in one message).
MIN_PART_BYTES = 4 << 20
MAX_PART_BYTES = 64 << 20

_MAGIC = b"\x1f\x8b\x08"
_SCAN = 1 << 20


@dataclass(slots=True, frozen=True)
class FilePart:
    """Parent → pool: convert the records of ``path`` whose gzip members start in ``[start, stop)``."""

    path: str
    start: int
    stop: int
    kind: str
    dedup_digest: bool
    engine: str


@dataclass(slots=True)
class PartResult:
    """Pool → parent: one part's rows, what its reading counted, and where its records began and ended."""

    start: int
    docs: list[ConvertedDoc]
    #: each document's payload digest ("" when the record had none), when ``dedup_digest``
    digests: list[str]
    stats: dict[str, int]
    #: offset of the part's first record; None when no record starts at or after ``start``
    first: int | None
    #: offset of the first record at or past ``stop``; None when the part's records run to the end
    next: int | None
    #: why the part cannot stand for its bytes (a skip, a note, a record without an offset); "" when clean
    unclean: str = ""


def plan_parts(size: int, workers: int, part_bytes: int | None = None) -> list[tuple[int, int]]:
    """Byte ranges ``[start, stop)`` covering a file of ``size`` bytes (one range when it is small)."""
    if part_bytes is None:
        part_bytes = min(max(size // max(1, workers * PARTS_PER_WORKER), MIN_PART_BYTES), MAX_PART_BYTES)
    part_bytes = max(1, part_bytes)
    count = max(1, -(-size // part_bytes))
    cuts = [size * i // count for i in range(count + 1)]
    return [(cuts[i], cuts[i + 1]) for i in range(count) if cuts[i] < cuts[i + 1]] or [(0, size)]


def _candidates(fh: BinaryIO, start: int) -> Iterator[int]:
    """Offsets at or after ``start`` where the bytes could open a gzip member (magic, deflate, no reserved flags).

    The caller reads the file between two answers, so every block is sought afresh.
    """
    pos = start
    while True:
        fh.seek(pos)
        data = fh.read(_SCAN)
        at = data.find(_MAGIC)
        while at != -1 and at + 3 < len(data):
            if data[at + 3] & 0xE0 == 0:
                yield pos + at
            at = data.find(_MAGIC, at + 1)
        if len(data) < _SCAN:
            return  # the end of the file: a magic in its last three bytes opens nothing
        pos += len(data) - 3  # overlap, so a magic cut by the block's end is found whole in the next


def _records_from(fh: BinaryIO, offset: int, name: str, notes: list[str]) -> Generator[Record, None, None]:
    """The reader from ``offset`` on, with absolute offsets, every skip or note collected instead of raised."""
    from ccrawl.warc.reader import iter_records

    fh.seek(offset)
    for rec in iter_records(fh, name=name, skip_bad_records=True, on_skip=notes.append):
        if rec.offset is not None:
            rec.offset += offset
        yield rec


def _open_at(
    fh: BinaryIO, start: int, name: str, notes: list[str]
) -> tuple[int | None, list[Record], Iterator[Record]]:
    """Where the part's records begin (the first offset at or after ``start`` where a gzip member opens
    that holds a whole record, or 0 for the first part), the record read to prove it, and the reader after it.

    ``notes`` collects what the reader reports from that point on; a rejected candidate's notes are dropped.
    """
    if start == 0:
        return 0, [], _records_from(fh, 0, name, notes)
    for cand in _candidates(fh, start):
        notes.clear()
        it = _records_from(fh, cand, name, notes)
        try:
            first = next(it, None)
        except InputError:
            it.close()
            continue  # not a readable gzip member, or not WARC inside: the magic was a coincidence
        if first is None or notes or first.offset != cand:
            it.close()
            continue
        return cand, [first], it
    notes.clear()
    return None, [], iter(())


def convert_part(part: FilePart) -> PartResult:
    """Read and convert one part (runs in a pool worker)."""
    from ccrawl.markdown.sources import ReadStats, docs_from_records

    stats = ReadStats()
    notes: list[str] = []
    result = PartResult(part.start, [], [], {}, None, None)
    with open(part.path, "rb") as fh:
        result.first, head, rest = _open_at(fh, part.start, f"{part.path}@{part.start}", notes)

        def bounded() -> Iterator[Record]:
            for rec in itertools.chain(head, rest):
                if rec.offset is None:
                    result.unclean = "a record without an offset (not one gzip member per record)"
                    return
                if rec.offset >= part.stop:
                    result.next = rec.offset
                    return
                yield rec

        docs = docs_from_records(bounded(), kind=part.kind, dedup_digest=part.dedup_digest, stats=stats,
                                 digests=result.digests if part.dedup_digest else None)
        try:
            result.docs = list(Converter(part.engine, 1).convert(docs))
        except InputError:
            # The file does not open as WARC at offset 0: the one-pass read that follows says so, under its name.
            result.unclean = "its reader could not start"
            result.docs, result.digests = [], []
    if notes and not result.unclean:
        # The reader's own line names offsets within the part; the one-pass read that follows says it right.
        result.unclean = "its reader skipped a damaged record or could not frame one"
    result.stats = _counts(stats)
    return result


def _counts(stats: ReadStats) -> dict[str, int]:
    return {f.name: getattr(stats, f.name) for f in fields(stats) if isinstance(getattr(stats, f.name), int)}


def check_parts(results: list[PartResult], size: int) -> str:
    """Why the parts do not cover the file exactly, or "" when they do (see the module docstring)."""
    if not results:
        return "no parts"
    for r in results:
        if r.unclean:
            return f"the part at {r.start}: {r.unclean}"
    if results[0].start != 0:  # (a part at offset 0 starts reading there: see _open_at)
        return "the first part does not start at offset 0"
    for before, after in itertools.pairwise(results):
        if before.next != after.first:
            return (f"the part at {before.start} ends at {before.next} but the part at {after.start} "
                    f"starts at {after.first}")
    if results[-1].next is not None:
        return f"the last part stops at {results[-1].next}, before the end of the file ({size} bytes)"
    return ""


def join_parts(results: list[PartResult], stats: ReadStats, dedup_digest: bool) -> Iterator[ConvertedDoc]:
    """The parts' rows in file order, their counts added to ``stats``, cross-part duplicates dropped."""
    seen: set[str] = set()
    for r in results:
        for name, value in r.stats.items():
            setattr(stats, name, getattr(stats, name) + value)
        for i, doc in enumerate(r.docs):
            if dedup_digest:
                digest = r.digests[i]
                if digest:
                    if digest in seen:
                        stats.duplicates += 1
                        stats.documents -= 1
                        continue
                    seen.add(digest)
            yield doc


def convert_parts(converter: Converter, path: Path, *, kind: str, dedup_digest: bool,
                  part_bytes: int | None = None) -> tuple[list[PartResult], str]:
    """``path`` converted by ``converter``'s pool in parts; the results and "" or why they cannot be used."""
    size = os.path.getsize(path)
    ranges = plan_parts(size, converter.workers, part_bytes)
    tasks = [FilePart(str(path), start, stop, kind, dedup_digest, converter.engine) for start, stop in ranges]
    results = converter.map(convert_part, tasks)
    return results, check_parts(results, size)
