"""Plans coalesced ranged reads: which nearby WARC records share one GET (``fetch --batch``).

One request per record is hopeless for millions of locations, so the locations are sorted by file
and offset and neighbours are merged into groups, each read with a single ranged GET and sliced
apart again by each record's own offset and length. The rule, applied greedily in disk order:

- a record joins the current group when it is in the same file, the *hole* between the group's
  end and the record's offset is at most ``gap`` bytes (default 1 MiB), and the group's span would
  stay at most ``max_span`` bytes (default 16 MiB); otherwise it starts a new group;
- a single record longer than ``max_span`` is a group of its own (it has to be read whole);
- groups never cross files; identical locations are read once (they appear once in ``members``);
- overlapping locations have a negative hole, so they merge like any neighbours, under the same
  ``max_span`` ceiling. The ceiling wins: two overlapping records that together exceed it land in
  consecutive groups whose byte ranges overlap, so a corrupt index can never force a huge read.

A group is ``(file, start, end, members)``: ``end`` is exclusive (the HTTP header is
``bytes=start-(end-1)``, :meth:`Group.range_header`) and ``members`` are the distinct
``(offset, length)`` pairs in disk order. Groups come sorted by file name (code point order), then
offset. Planning is pure arithmetic, which is what ``fetch --batch --dry-run`` prints through
:func:`plan_summary` and :func:`dry_run_line`.

``plan_groups`` is compiled (``csrc/ranges.pyx``) when the native core is built; ``plan_groups_py``
is the pure-Python twin with identical output and identical errors.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple

from ccrawl import accel
from ccrawl.errors import InputError, UsageError

__all__ = [
    "DEFAULT_GAP",
    "DEFAULT_MAX_SPAN",
    "Group",
    "Location",
    "dry_run_line",
    "format_bytes",
    "plan_groups",
    "plan_groups_py",
    "plan_summary",
]

DEFAULT_GAP = 1 << 20
"""Coalesce records at most this many bytes apart (``--gap``, 1 MiB)."""
DEFAULT_MAX_SPAN = 16 << 20
"""Never read more than this in one GET unless a single record is larger (``--max-span``, 16 MiB)."""

_INT64_MAX = (1 << 63) - 1

Location = tuple[str, int, int]
"""(file, offset, length): a WARC file path or URL, the record's byte offset, its byte length."""


class Group(NamedTuple):
    """One ranged read: bytes ``[start, end)`` of ``file``, holding ``members`` in disk order."""

    file: str
    start: int
    end: int
    members: tuple[tuple[int, int], ...]

    @property
    def span(self) -> int:
        """Bytes this read transfers."""
        return self.end - self.start

    def range_header(self) -> str:
        """The HTTP ``Range`` header value for this read."""
        return f"bytes={self.start}-{self.end - 1}"


def check_limits(gap: int, max_span: int) -> None:
    """Refuse a negative ``gap`` or a non-positive ``max_span`` with the flag's name."""
    if gap < 0:
        raise UsageError(f"--gap must be 0 or more bytes, got {gap}")
    if max_span <= 0:
        raise UsageError(f"--max-span must be at least 1 byte, got {max_span}")


def location(index: int, item: Any) -> Location:
    """Validate input item number ``index`` (0-based) as a location; the one source of location errors."""
    try:
        file, offset, length = item
    except (TypeError, ValueError):
        raise InputError(f"location #{index} is not (file, offset, length): {item!r}") from None
    if not isinstance(file, str) or not file:
        raise InputError(f"location #{index}: the file must be a non-empty string, got {file!r}")
    try:
        offset = operator.index(offset)
        length = operator.index(length)
    except TypeError:
        raise InputError(f"location #{index} ({file}): offset and length must be integers, got {item!r}") from None
    if offset < 0:
        raise InputError(f"location #{index} ({file}@{offset}): the offset must be 0 or more")
    if length <= 0:
        raise InputError(f"location #{index} ({file}@{offset}): the length must be positive, got {length}")
    if offset + length > _INT64_MAX:
        raise InputError(f"location #{index} ({file}@{offset}): offset + length is past 2**63 - 1")
    return (file, offset, length)


def plan_groups_py(
    locations: Iterable[Sequence[object]], gap: int = DEFAULT_GAP, max_span: int = DEFAULT_MAX_SPAN
) -> list[Group]:
    """The groups of ranged reads that cover ``locations`` (pure-Python twin)."""
    check_limits(gap, max_span)
    unique = {location(i, item) for i, item in enumerate(locations)}
    groups: list[Group] = []
    cur_file = ""
    cur_start = cur_end = 0
    members: list[tuple[int, int]] = []
    for file, offset, length in sorted(unique):
        end = offset + length
        if members and file == cur_file and offset - cur_end <= gap and max(cur_end, end) - cur_start <= max_span:
            members.append((offset, length))
            cur_end = max(cur_end, end)
            continue
        if members:
            groups.append(Group(cur_file, cur_start, cur_end, tuple(members)))
        cur_file, cur_start, cur_end, members = file, offset, end, [(offset, length)]
    if members:
        groups.append(Group(cur_file, cur_start, cur_end, tuple(members)))
    return groups


def plan_summary(locations: Collection[object], groups: Sequence[Group]) -> dict[str, int | float]:
    """Both halves of the trade a plan makes: requests saved and bytes read for the records' bytes.

    ``locations`` counts every input location, duplicates included (the one-at-a-time path would
    send one request each); ``record_bytes`` counts each distinct record once.
    """
    requests = len(groups)
    bytes_read = sum(g.end - g.start for g in groups)
    record_bytes = sum(length for g in groups for _, length in g.members)
    n = len(locations)
    return {
        "locations": n,
        "requests": requests,
        "bytes_read": bytes_read,
        "record_bytes": record_bytes,
        "fewer": n / requests if requests else 0.0,
        "amplification": bytes_read / record_bytes if record_bytes else 0.0,
    }


def format_bytes(n: int) -> str:
    """Bytes in decimal SI units with one decimal (``116.0 GB``, ``171.0 kB``; ``512 B`` below 1 kB).

    Decimal, not binary: the seed writes binary sizes as ``MiB`` (``--gap ... 1 MiB``) and its other
    reports use ``kB``, so its ``GB`` is 10^9 bytes. Its dry-run figures are ratios of rounded values
    and fit either base, so they cannot settle it; the spelling does.
    """
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        value /= 1000.0
        if round(value, 1) < 1000.0 or unit == "PB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable: the loop returns at PB")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def dry_run_line(summary: dict[str, int | float]) -> str:
    """The one line ``fetch --batch --dry-run`` prints, in the seed's shape (one line, wrapped here)::

        1000000 locations in 612078 requests, 1.6x fewer than one at a time;
        10.1 GB read for 1.6 GB of records, 6.3x amplification

    Ratios and sizes have one decimal; sizes use decimal units (:func:`format_bytes`). A plan with
    no requests reads ``0 locations in 0 requests; nothing to read``.
    """
    n = int(summary["locations"])
    requests = int(summary["requests"])
    if requests == 0:
        return f"{_plural(n, 'location')} in 0 requests; nothing to read"
    return (
        f"{_plural(n, 'location')} in {_plural(requests, 'request')}, "
        f"{summary['fewer']:.1f}x fewer than one at a time; "
        f"{format_bytes(int(summary['bytes_read']))} read for {format_bytes(int(summary['record_bytes']))} of records, "
        f"{summary['amplification']:.1f}x amplification"
    )


_native = accel.native("ranges")
plan_groups = _native.plan_groups if _native else plan_groups_py
