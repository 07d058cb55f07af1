"""The documents of one unit: a WARC or WET file read record by record, or records fetched by location.

Which records become documents:

* **WARC**: ``response`` records with HTTP status 200 and an HTML payload (``text/html``,
  ``application/xhtml+xml``, or no Content-Type); transfer and content encodings are undone.
  Everything else is counted and skipped (``not_html``, ``not_ok``, other record types silently).
* **WET**: ``conversion`` records, the text passed through as it is.

``dedup_digest`` skips a record whose ``WARC-Payload-Digest`` (``WARC-Block-Digest`` for WET) was
already seen in this unit, before the payload is even decoded: a duplicate costs a set lookup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ccrawl.commoncrawl.records import Location
from ccrawl.markdown.convert import SourceDoc

if TYPE_CHECKING:
    from ccrawl.warc.reader import Record as WarcRecord

_HTML_TYPES = ("text/html", "application/xhtml+xml", "")


@dataclass(slots=True)
class ReadStats:
    """What reading a unit skipped, and why."""

    records: int = 0
    documents: int = 0
    duplicates: int = 0
    not_html: int = 0
    not_ok: int = 0
    bad_records: int = 0
    unfetchable: int = 0
    download_seconds: float = 0.0
    #: parts the pool's workers read the file in (0: read here, one pass)
    parts: int = 0
    #: why parts were tried and not used ("" when they were, or were not tried)
    parts_fallback: str = ""


def docs_from_records(
    records: Iterable[WarcRecord], *, kind: str, dedup_digest: bool, stats: ReadStats, limit: int = 0,
    digests: list[str] | None = None,
) -> Iterator[SourceDoc]:
    """Documents of ``records`` (``kind`` warc or wet), filtered and deduplicated as the module says.

    ``digests``, when given, gets each yielded document's digest ("" when its record has none).
    """
    from ccrawl.warc.reader import decode_payload

    seen: set[str] = set()
    want = "conversion" if kind == "wet" else "response"
    for rec in records:
        if rec.warc_type != want:
            continue
        stats.records += 1
        if kind == "warc":
            if rec.http_headers is None or rec.http_status != 200:
                stats.not_ok += 1
                continue
            if rec.mime not in _HTML_TYPES:
                stats.not_html += 1
                continue
        digest = ""
        if dedup_digest:
            digest = rec.header("WARC-Payload-Digest") or rec.header("WARC-Block-Digest") or ""
            if digest:
                if digest in seen:
                    stats.duplicates += 1
                    continue
                seen.add(digest)
        if kind == "warc":
            payload = decode_payload(rec)
            ctype = rec.http_header("Content-Type")
        else:
            payload = rec.payload
            ctype = "text/plain; charset=utf-8"
        stats.documents += 1
        if digests is not None:
            digests.append(digest)
        yield SourceDoc(rec.url or "", rec.date or "", rec.record_id or "", payload, ctype)
        if limit and stats.documents >= limit:
            return


def file_docs(
    path: Path | BinaryIO, *, kind: str, dedup_digest: bool, stats: ReadStats, skip_errors: bool,
    warn: Callable[[str], None], limit: int = 0, name: str | None = None,
) -> Iterator[SourceDoc]:
    """Documents of a local WARC/WET file (or a binary stream of one); a corrupt record stops the unit unless
    ``skip_errors``."""
    from ccrawl.warc.reader import SKIPPED, iter_records

    def skipped(msg: str) -> None:
        # The reader's closing tally and its note about a file in one gzip stream are not records.
        if msg.startswith(SKIPPED):
            stats.bad_records += 1
        warn(msg)

    records = iter_records(path, name=name, skip_bad_records=skip_errors, on_skip=skipped)
    yield from docs_from_records(records, kind=kind, dedup_digest=dedup_digest, stats=stats, limit=limit)


async def _fetch_records(
    client_options: Mapping[str, object], locations: list[Location], gap: int, max_span: int,
    warn: Callable[[str], None], stats: ReadStats,
) -> list[WarcRecord]:
    from ccrawl.commoncrawl.fetch import fetch_batch
    from ccrawl.commoncrawl.records import parse_record
    from ccrawl.net.client import CCClient, ClientOptions

    out: list[WarcRecord] = []
    async with CCClient.of(ClientOptions.parse(client_options)) as cc:
        async for result in fetch_batch(cc, locations, content="warc", gap=gap, max_span=max_span, order="input"):
            if result.error is not None or not result.rows:
                stats.unfetchable += 1
                warn(f"markdown export: skipped {result.location.key}: {result.error}")
                continue
            out.append(parse_record(result.rows[0]["warc"], result.location))
    return out


def location_records(
    client_options: Mapping[str, object], locations: list[Location], *, gap: int, max_span: int,
    warn: Callable[[str], None], stats: ReadStats,
) -> list[WarcRecord]:
    """The WARC records at ``locations``, read with coalesced ranged GETs, in stream order.

    A location that cannot be fetched or does not hold a whole record is named on stderr,
    counted as ``unfetchable`` and skipped: the index and the archive can disagree.
    """
    return asyncio.run(_fetch_records(client_options, locations, gap, max_span, warn, stats))
