"""What an export run is cut into: shards of a crawl's manifest, or parts of a location stream.

A unit gets one Parquet file per crawl it touches, one ledger entry and one digest dedup set.

* **Shard** ``N`` is file ``N`` (0-based) of ``warc.paths.gz`` (or ``wet.paths.gz``) and is
  written to ``data/crawl=<id>/NNNNNN.parquet``. ``--shards`` takes ``N``, ``N-M`` (inclusive),
  ``N,M`` and any mix of them (``0-3,7``), or ``all``.
* **Part** ``P`` of a location stream holds locations ``P*part_size`` to ``(P+1)*part_size - 1``
  in stream order, and is written to ``data/crawl=<id>/part-PPPPPP.parquet`` for each crawl its
  locations name (a stream usually names one). The stream is cut in order, so a rerun over the
  same stream finds the same parts and the ledger says which are done.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ccrawl.commoncrawl.records import Location
from ccrawl.errors import UsageError

_CRAWL = re.compile(r"crawl-data/([^/]+)/")


@dataclass(slots=True)
class Unit:
    """One shard (``path`` set) or one location part (``locations`` set)."""

    key: str
    index: int
    crawl: str = ""
    path: str = ""
    locations: list[Location] = field(default_factory=list)

    @property
    def is_part(self) -> bool:
        return not self.path

    def repo_path(self, crawl: str) -> str:
        """Where this unit's rows of ``crawl`` go in the dataset repo (and under ``<out>``)."""
        name = f"part-{self.index:06d}" if self.is_part else f"{self.index:06d}"
        return f"data/crawl={crawl}/{name}.parquet"


def parse_shards(spec: str, total: int) -> list[int]:
    """Shard indexes of ``spec`` (``N``, ``N-M``, ``N,M``, mixes, ``all``) in ascending order.

    ``total`` is how many files the manifest lists; an index past it is a usage error naming
    the count.
    """
    text = spec.strip().lower()
    if not text:
        raise UsageError("--shards is empty: give N, N-M, N,M or all")
    if text == "all":
        return list(range(total))
    out: set[int] = set()
    for piece in text.split(","):
        piece = piece.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", piece)
        if m is None:
            raise UsageError(f"--shards {spec!r}: {piece!r} is not N or N-M (give N, N-M, N,M or all)")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise UsageError(f"--shards {spec!r}: the range {piece} runs backwards")
        if hi >= total:
            raise UsageError(f"--shards {spec!r}: shard {hi} does not exist, the manifest lists {total} "
                             f"(0 to {total - 1})")
        out.update(range(lo, hi + 1))
    return sorted(out)


def shard_units(paths: list[str], indexes: Iterable[int], crawl: str) -> list[Unit]:
    """One unit per chosen manifest index."""
    return [Unit(key=f"crawl={crawl}/{i:06d}", index=i, crawl=crawl, path=paths[i]) for i in indexes]


def crawl_of(filename: str) -> str:
    """The crawl id in a bucket path (``crawl-data/CC-MAIN-2024-10/...``), ``unknown`` when absent."""
    m = _CRAWL.search(filename)
    return m.group(1) if m else "unknown"


def location_parts(locations: Iterable[Location], part_size: int) -> Iterator[Unit]:
    """The stream cut into parts of ``part_size`` locations, in stream order."""
    if part_size < 1:
        raise UsageError(f"--part-size must be at least 1, got {part_size}")
    batch: list[Location] = []
    index = 0
    for loc in locations:
        batch.append(loc)
        if len(batch) == part_size:
            yield Unit(key=f"part-{index:06d}", index=index, locations=batch)
            batch, index = [], index + 1
    if batch:
        yield Unit(key=f"part-{index:06d}", index=index, locations=batch)
