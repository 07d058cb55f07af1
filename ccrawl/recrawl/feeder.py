"""The feeder: walks the work list from the checkpoint, keeps this shard's rows, routes each to a fetch process.

Row offsets are counted *before* the shard filter (every machine of a fleet numbers rows the same
way, so checkpoints compare across machines); rows another shard owns, empty cells, and rows a
previous run already wrote above its low-water mark are counted and passed over. A host always
goes to the same fetch process, chosen by a CRC-32 of its registered domain: a hash independent
of the fleet's FNV-1a shard hash, so the rows one shard keeps still spread over every process.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ccrawl.recrawl.checkpoint import Position, ProgressTracker
from ccrawl.recrawl.messages import WorkItem
from ccrawl.recrawl.worklist import WorkList, to_url

#: (fetch process, the item)
Routed = tuple[int, WorkItem]


@dataclass(slots=True)
class FeedCounts:
    rows_read: int = 0
    dropped_not_owned: int = 0
    dropped_empty: int = 0
    skipped_durable: int = 0
    issued: int = 0


def route(url: str, fetchers: int) -> int:
    """The fetch process that owns ``url``'s registered domain."""
    if fetchers == 1:
        return 0
    from ccrawl.url.domain import shard_key

    return zlib.crc32(shard_key(url).encode("utf-8")) % fetchers


def feed(
    worklist: WorkList,
    tracker: ProgressTracker,
    *,
    start: Position,
    skip: set[Position],
    shard: int,
    shards: int,
    fetchers: int,
    validators: Mapping[str, tuple[str, str]] | None = None,
    counts: FeedCounts,
) -> Iterator[Routed]:
    """Yield this shard's rows in work-list order, recording each in ``tracker`` as it is issued."""
    from ccrawl.url.domain import shard_of

    parts = worklist.parts()
    for p in range(start[0], len(parts)):
        first = start[1] if p == start[0] else 0
        for row, value in worklist.iter_rows(p, first):
            counts.rows_read += 1
            pos = (p, row)
            url = to_url(value) if value else ""
            if not url:
                counts.dropped_empty += 1
            elif shards > 1 and shard_of(url, shards) != shard:
                counts.dropped_not_owned += 1
            elif pos in skip:
                counts.skipped_durable += 1
            else:
                seq = counts.issued
                counts.issued += 1
                tracker.issue(seq, pos)
                tracker.read_to((p, row + 1))
                etag, lm = validators.get(url, ("", "")) if validators else ("", "")
                yield route(url, fetchers), WorkItem(seq, url, etag, lm)
                continue
            tracker.read_to((p, row + 1))
        tracker.read_to((p + 1, 0))
