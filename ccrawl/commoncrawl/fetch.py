"""Fetching WARC records by location: one ranged GET each, or coalesced into shared GETs (``--batch``).

Both paths yield a :class:`FetchResult` per input location and render record bytes through
:func:`ccrawl.commoncrawl.records.render`, so their output is byte for byte the same.

``fetch_batch`` plans groups with :func:`ccrawl.net.ranges.plan_groups` (``gap``, ``max_span``),
keeps at most ``lookahead`` group reads in flight, and emits in one of two orders:

* ``order="file"`` streams groups in disk order (file, then offset);
* ``order="input"`` restores the input order. Groups are read in the order the input first needs
  them, and finished records wait in memory until their turn, so one slow group early in the input
  holds back everything behind it.

A :class:`Ledger` (``--ledger``) gets one ``filename@offset`` line per finished location, flushed
after each group (after each record one at a time); a rerun with the same ledger skips those lines.
A location that cannot be read is reported in its result and the run goes on (a range past the end
of its file included: :class:`~ccrawl.net.client.ShortRead`, and with ``--batch`` the records of
the same read that fit are kept); a transport failure
(:class:`~ccrawl.errors.Unreachable`) ends it, since every other read would fail the same way.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from ccrawl import durable
from ccrawl.commoncrawl.records import EXTENSIONS, Location, check_content, render
from ccrawl.errors import CcrawlError, Unreachable, UsageError
from ccrawl.net.client import CCClient

if TYPE_CHECKING:
    from ccrawl.net.ranges import Group

DEFAULT_LOOKAHEAD = 64
ORDERS = ("file", "input")

#: The longest record a location may ask for, and so the most one request reads. Common Crawl's
#: records are small (its WARC writer truncates a payload at a few MiB); a location saying 3 GB is
#: a mistake or an attack, and would be read whole into memory. ``max_length=`` raises it per call.
MAX_RECORD_LENGTH = 64 << 20


def check_location(loc: Location, max_length: int = MAX_RECORD_LENGTH) -> None:
    """Refuse, in one line, a location no request should be made for: negative, empty or over the cap."""
    if loc.offset < 0 or loc.length <= 0:
        raise UsageError(
            f"fetch: {loc.key}: the offset must be 0 or more and the length positive, got {loc.offset} and {loc.length}"
        )
    if loc.length > max_length:
        raise UsageError(
            f"fetch: {loc.key}: a record length of {loc.length} bytes is over the {_size(max_length)} cap "
            "(MAX_RECORD_LENGTH); Common Crawl records are a few MiB at most"
        )


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n}-byte"


@dataclass(slots=True)
class FetchResult:
    """One input location and what came of it: rendered rows, or the error that stopped it."""

    location: Location
    rows: list[dict[str, Any]] | None = None
    error: CcrawlError | None = None


class Ledger:
    """The ``--ledger`` file: finished locations, one ``filename@offset`` per line, appended."""

    def __init__(self, path: Path | str | None) -> None:
        self.path = Path(path) if path else None
        self.done: set[str] = set()
        self._fh: TextIO | None = None
        if self.path is not None and self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                self.done = {line.strip() for line in fh if line.strip()}

    def __contains__(self, loc: Location) -> bool:
        return loc.key in self.done

    def add(self, loc: Location) -> None:
        if self.path is None:
            return
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
        self._fh.write(loc.key + "\n")
        self.done.add(loc.key)

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self.flush()
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _render(data: bytes, loc: Location, content: str) -> FetchResult:
    try:
        return FetchResult(loc, render(data, loc, content))
    except CcrawlError as exc:
        return FetchResult(loc, error=exc)


async def fetch_each(
    cc: CCClient,
    locations: Iterable[Location],
    *,
    content: str = "body",
    ledger: Ledger | None = None,
    max_length: int = MAX_RECORD_LENGTH,
) -> AsyncIterator[FetchResult]:
    """One ranged GET per location, in input order (the reference the batch path must match).

    A location over ``max_length`` (or negative) is a UsageError: before any request when
    ``locations`` is a sequence, else before its own (a stream is read as it comes).
    """
    check_content(content)
    if isinstance(locations, Sequence):
        for loc in locations:
            check_location(loc, max_length)
    for loc in locations:
        check_location(loc, max_length)
        if ledger is not None and loc in ledger:
            continue
        try:
            data = await cc.get_range(cc.data_url(loc.filename), loc.offset, loc.length)
        except Unreachable:
            raise
        except CcrawlError as exc:
            yield FetchResult(loc, error=exc)
            continue
        result = _render(data, loc, content)
        yield result
        if ledger is not None and result.error is None:
            ledger.add(loc)
            ledger.flush()


def check_batch(gap: int, max_span: int, order: str, lookahead: int, max_length: int = MAX_RECORD_LENGTH) -> None:
    """Refuse flags no plan should be made with; ``max_span`` over ``max_length`` among them, so that
    no coalesced request reads more than the longest record may (a group only passes ``max_span``
    for one record longer than it, and no record is over ``max_length``)."""
    from ccrawl.net.ranges import check_limits

    check_limits(gap, max_span)
    if max_span > max_length:
        raise UsageError(
            f"--max-span {max_span} is over the {_size(max_length)} cap on one request (MAX_RECORD_LENGTH)"
        )
    if order not in ORDERS:
        raise UsageError(f"--order {order!r}: use input or file")
    if lookahead < 1:
        raise UsageError(f"--lookahead must be at least 1, got {lookahead}")


def plan(locations: list[Location], *, gap: int, max_span: int) -> list[Group]:
    """The coalesced groups for ``locations`` (see :mod:`ccrawl.net.ranges`)."""
    from ccrawl.net.ranges import plan_groups

    return list(plan_groups([loc.triple for loc in locations], gap, max_span))


def dry_run(locations: Iterable[Location], *, gap: int, max_span: int, ledger: Ledger | None = None) -> str:
    """The one line ``fetch --batch --dry-run`` prints: requests saved and bytes read."""
    from ccrawl.net.ranges import dry_run_line, plan_summary

    todo = [loc for loc in locations if ledger is None or loc not in ledger]
    for loc in todo:
        check_location(loc)
    return str(dry_run_line(plan_summary([loc.triple for loc in todo], plan(todo, gap=gap, max_span=max_span))))


async def _read_group(cc: CCClient, group: Group, content: str, members: dict[tuple[int, int], list[int]],
                      todo: list[Location]) -> dict[int, FetchResult]:
    """Read one group and render each of its locations, keyed by input index."""
    from ccrawl.net.client import ShortRead

    out: dict[int, FetchResult] = {}
    url = cc.data_url(group.file)
    try:
        data = await cc.get_range(url, group.start, group.end - group.start)
    except ShortRead as exc:
        data = exc.data  # the file ends inside the group: keep every record that fits
    except Unreachable:
        raise
    except CcrawlError as exc:
        for offset, length in group.members:
            for i in members[(offset, length)]:
                out[i] = FetchResult(todo[i], error=exc)
        return out
    for offset, length in group.members:
        piece = data[offset - group.start : offset - group.start + length]
        if len(piece) < length:
            short = ShortRead(url, offset, length, group.start + len(data), b"")
            for i in members[(offset, length)]:
                out[i] = FetchResult(todo[i], error=short)
            continue
        first: FetchResult | None = None
        for i in members[(offset, length)]:
            # Duplicate locations share the bytes but each gets its own rows, as one at a time would.
            first = _render(piece, todo[i], content) if first is None else FetchResult(
                todo[i], [dict(r) for r in first.rows] if first.rows is not None else None, first.error
            )
            out[i] = first
    return out


async def fetch_batch(
    cc: CCClient,
    locations: Iterable[Location],
    *,
    content: str = "body",
    gap: int = 1 << 20,
    max_span: int = 16 << 20,
    order: str = "file",
    lookahead: int = DEFAULT_LOOKAHEAD,
    ledger: Ledger | None = None,
    max_length: int = MAX_RECORD_LENGTH,
) -> AsyncIterator[FetchResult]:
    """Coalesced ranged GETs over ``locations``; same results as :func:`fetch_each`.

    Every location is checked against ``max_length`` before the first request, and no planned
    request is longer than ``max_length`` (see :func:`check_batch`).
    """
    check_content(content)
    check_batch(gap, max_span, order, lookahead, max_length)
    todo = [loc for loc in locations if ledger is None or loc not in ledger]
    for loc in todo:
        check_location(loc, max_length)
    groups = plan(todo, gap=gap, max_span=max_span)
    # Which input indexes each (file, offset, length) stands for, in input order.
    by_triple: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    for i, loc in enumerate(todo):
        by_triple[loc.triple].append(i)
    group_members = [{(o, n): by_triple[(g.file, o, n)] for o, n in g.members} for g in groups]
    if order == "file":
        schedule = list(range(len(groups)))
    else:
        schedule = sorted(range(len(groups)), key=lambda gi: min(min(v) for v in group_members[gi].values()))

    pending: deque[asyncio.Task[dict[int, FetchResult]]] = deque()
    next_to_start = 0

    def top_up() -> None:
        nonlocal next_to_start
        while len(pending) < lookahead and next_to_start < len(schedule):
            gi = schedule[next_to_start]
            pending.append(asyncio.ensure_future(_read_group(cc, groups[gi], content, group_members[gi], todo)))
            next_to_start += 1

    finished: dict[int, FetchResult] = {}
    next_input = 0
    try:
        top_up()
        while pending:
            done = await pending.popleft()
            top_up()
            if order == "file":
                ready = [done[i] for i in sorted(done, key=lambda i: (todo[i].offset, i))]
            else:
                finished.update(done)
                ready = []
                while next_input in finished:
                    ready.append(finished.pop(next_input))
                    next_input += 1
            for result in ready:
                yield result
                if ledger is not None and result.error is None:
                    ledger.add(result.location)
            if ledger is not None:
                ledger.flush()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


def record_file_name(loc: Location, content: str, rows: list[dict[str, Any]]) -> str:
    """``<warc name>-<offset>.<ext>``: unique per record, and says where the bytes came from.

    Common Crawl reuses a file name across the ``warc``, ``crawldiagnostics`` and ``robotstxt``
    directories of a segment, so a record from any directory but ``warc`` is prefixed with it.
    """
    parts = loc.filename.rstrip("/").split("/")
    base = parts[-1]
    if len(parts) > 1 and parts[-2] not in ("warc", ""):
        base = f"{parts[-2]}-{base}"
    for suffix in (".warc.gz", ".gz", ".warc"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    if content == "body":
        mime = str(rows[0].get("mime") or "") if rows else ""
        ext = "html" if "html" in mime else "txt" if mime.startswith("text/") else "bin"
    else:
        ext = EXTENSIONS[content]
    return f"{base}-{loc.offset}.{ext}"


def file_bytes(content: str, rows: list[dict[str, Any]]) -> bytes:
    """What ``--dir`` writes for one record under a content flag."""
    import json

    if content == "body":
        return bytes(rows[0]["body"]) if rows else b""
    if content in ("text", "markdown"):
        return str(rows[0][content]).encode("utf-8") if rows else b""
    if content == "headers":
        return str(rows[0]["raw"]).encode("utf-8") if rows else b""
    if content == "links":
        return "".join(f"{r['url']}\n" for r in rows).encode("utf-8")
    return (json.dumps(rows[0], ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8") if rows else b""


def write_record_file(out_dir: Path, result: FetchResult, content: str) -> dict[str, Any]:
    """Write one fetched record to ``out_dir`` and return the row ``fetch --dir`` prints for it."""
    assert result.rows is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / record_file_name(result.location, content, result.rows)
    data = file_bytes(content, result.rows)
    durable.write_bytes(path, data, sync=False)
    url = result.rows[0].get("url") if content != "links" and result.rows else result.location.extra.get("url")
    return {
        "url": url,
        "filename": result.location.filename,
        "offset": result.location.offset,
        "path": str(path),
        "bytes": len(data),
    }
