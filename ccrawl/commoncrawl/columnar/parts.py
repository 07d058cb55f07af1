"""Which index parts a query reads: the crawls' ``cc-index-table.paths.gz`` manifests, or a local copy.

A part path carries its partition values (``.../crawl=CC-MAIN-2024-10/subset=warc/part-00000...``);
parts outside the selected crawls and subsets are never opened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccrawl.commoncrawl.columnar.native import Part
from ccrawl.commoncrawl.columnar.query import Index
from ccrawl.commoncrawl.columnar.source import HttpSource, LocalSource
from ccrawl.errors import InputError, NothingMatched

_PARTITION = re.compile(r"crawl=([^/]+)/subset=([^/]+)/[^/]+\.parquet$")


def part_of(path: str) -> Part:
    m = _PARTITION.search(path)
    if not m:
        raise InputError(f"{path}: not a cc-index-table part (no crawl=/subset= in its path)")
    return Part(m.group(1), m.group(2), path)


def open_http(client_options: Mapping[str, Any], crawl_ref: str, *, connections: int = 8) -> Index:
    """The parts of the crawls ``crawl_ref`` names (``latest``, an id, a comma list, ``all``...), over HTTP."""
    from ccrawl.commoncrawl import crawls, manifests

    source = HttpSource(client_options, connections=connections)
    try:
        client = source.client
        ids: list[str] = source.run(crawls.resolve(client, crawl_ref))
        parts: list[Part] = []
        for crawl in ids:
            paths: list[str] = source.run(manifests.fetch_paths(client, crawl, "cc-index-table"))
            parts += [part_of(p) for p in paths if p.endswith(".parquet")]
    except BaseException:
        source.close()
        raise
    return Index(source, parts, ids)


def open_local(root: Path | str, crawls: Sequence[str] = ()) -> Index:
    """The parts under a local copy of the bucket (``<root>/cc-index/table/cc-main/warc/...``)."""
    root = Path(root)
    found = sorted(root.glob("cc-index/table/cc-main/warc/crawl=*/subset=*/*.parquet"))
    parts = [part_of(str(p.relative_to(root))) for p in found]
    if crawls:
        parts = [p for p in parts if p.crawl in crawls]
    if not parts:
        raise NothingMatched(f"{root}: no cc-index-table parts under cc-index/table/cc-main/warc/")
    return Index(LocalSource(root), parts, sorted({p.crawl for p in parts}))
