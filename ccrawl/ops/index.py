"""Operations ``index.build`` and ``index.search``: the on-disk BM25 index of :mod:`ccrawl.store.textindex`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Annotated, Any

from ccrawl.ops import Record, operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, Network, ReadPath, Value, WritePath

BUILD_COLUMNS = ("dir", "generation", "documents", "skipped", "seconds", "bytes")
SEARCH_COLUMNS = ("rank", "score", "url", "title", "language", "snippet")

Notice = Callable[[str], None]


def jsonl_documents(stream: IO[bytes], notice: Notice | None = None) -> Iterator[Any]:
    """Documents from a JSONL byte stream; a bad line is named through ``notice`` and skipped."""
    from ccrawl.store.textindex import Document, document_from_json, repaired

    skipped = Document("", "")  # counted as skipped by the build
    for n, raw in enumerate(stream, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            if notice:
                notice(f"input line {n}: not a JSON object ({exc}); skipped")
            yield skipped
            continue
        doc = document_from_json(obj)
        if doc is None:
            if notice:
                notice(f"input line {n}: no url and text to index; skipped")
            yield skipped
            continue
        doc, fixed = repaired(doc)
        if fixed and notice:
            notice(f"input line {n}: lone surrogates in {', '.join(fixed)} replaced by U+FFFD; indexed")
        yield doc


def _live_documents(urls: Iterable[str], workers: int, live: Mapping[str, Any] | None,
                    notice: Notice | None, allow_private_addresses: bool) -> Iterator[Any]:
    from ccrawl.ops.content import content_extract
    from ccrawl.store.textindex import Document

    options = {**dict(live or {}), "allow_private_addresses": allow_private_addresses}
    for row in content_extract(urls, concurrency=max(1, workers), **options):
        if row.get("error"):
            if notice:
                notice(f"{row.get('url')}: {row['error']}; not indexed")
            continue
        yield Document(str(row["url"]), str(row.get("text") or ""), str(row.get("title") or ""),
                       str(row.get("language") or ""))


@operation("index.build", summary="Build the on-disk BM25 index from JSONL documents or live-fetched URLs",
           columns=BUILD_COLUMNS, writes=True)
def index_build(
    dir: WritePath[str],
    input: ReadPath[str | None] = None,
    urls: Value[Iterable[str]] = (),
    workers: Limit[int] = 8,
    heap_mb: Limit[int] = 128,
    allow_private_addresses: Network[bool] = False,
    live: Injected[Mapping[str, Any] | None] = None,
    notice: Injected[Notice | None] = None,
) -> Iterator[Record]:
    """Index ``input`` (a JSONL path, ``-`` for stdin) or the pages at ``urls``; one summary record."""
    import sys

    from ccrawl.errors import UsageError
    from ccrawl.store.textindex import build

    url_list = [u for u in urls if u]
    if input and url_list:
        raise UsageError("give --input or --urls, not both")
    if input == "-":
        stats = build(dir, jsonl_documents(sys.stdin.buffer, notice), heap_mb=heap_mb)
    elif input:
        try:
            stream = open(input, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageError(f"--input {input}: {exc.strerror}") from None
        with stream:
            stats = build(dir, jsonl_documents(stream, notice), heap_mb=heap_mb)
    elif url_list:
        stats = build(dir, _live_documents(url_list, workers, live, notice, allow_private_addresses), heap_mb=heap_mb)
    else:
        raise UsageError("one of --input FILE|- or --urls is required; nothing was written")
    yield stats.record()


@operation("index.search", summary="Search the BM25 index: terms ORed, best score first", columns=SEARCH_COLUMNS)
def index_search(
    query: Value[str],
    dir: ReadPath[str],
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 100,
) -> Iterator[Record]:
    from ccrawl.store.textindex import Searcher

    yield from Searcher.open(dir).search(query, limit)
