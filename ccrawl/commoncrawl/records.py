"""Locations of WARC records and what ``fetch``/``get`` print for one record (the content flags).

A location is (filename, offset, length): the bucket path of a WARC file and the byte range of one
gzip member in it, exactly what the CDX API, ``search --locations`` and ``columnar locations`` give.
Both fetch paths (one at a time and ``--batch``) hand the record's bytes to :func:`render`, so the
records they produce are the same whichever way the bytes arrived.

Content flags (one per run): ``body`` (the HTTP payload, transfer and content encodings undone),
``text`` and ``markdown`` (the h2m extractor), ``links`` (one row per outlink), ``headers``
(status line and HTTP headers as text), ``meta`` (the record's metadata, no payload).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ccrawl.errors import InputError, UsageError
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    from ccrawl.extract.model import Extraction
    from ccrawl.warc.reader import Record as WarcRecord

CONTENT = ("body", "text", "markdown", "links", "headers", "meta")

META_COLUMNS = (
    "url",
    "filename",
    "offset",
    "length",
    "warc_type",
    "date",
    "record_id",
    "status",
    "mime",
    "digest",
    "payload_length",
    "languages",
)

#: Columns per content flag, for table/csv output and ``--fields``. ``note`` says when the payload
#: was cut at the decoding cap (:data:`ccrawl.warc.reader.DECODED_LIMIT`, the crawler's).
COLUMNS = {
    "body": ("url", "filename", "offset", "length", "status", "mime", "body", "note"),
    "text": ("url", "filename", "offset", "length", "text", "note"),
    "markdown": ("url", "filename", "offset", "length", "markdown", "note"),
    "links": ("source", "url"),
    "title": ("url", "filename", "offset", "length", "title"),
    "headers": ("url", "filename", "offset", "length", "status", "raw"),
    "meta": META_COLUMNS,
}

#: Extension of the file ``--dir`` writes per record, by content flag.
EXTENSIONS = {"title": "txt", "text": "txt", "markdown": "md", "links": "txt", "headers": "txt", "meta": "json"}


@dataclass(frozen=True, slots=True)
class Location:
    """Where one record is: bucket path (or URL), byte offset, byte length; ``extra`` rides along."""

    filename: str
    offset: int
    length: int
    extra: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """``filename@offset``: the ledger line, greppable and unique per record."""
        return f"{self.filename}@{self.offset}"

    @property
    def triple(self) -> tuple[str, int, int]:
        return (self.filename, self.offset, self.length)


_FIELD_NAMES = (
    ("filename", "offset", "length"),
    ("warc_filename", "warc_record_offset", "warc_record_length"),
)


def location_from(obj: Mapping[str, object], *, where: str = "location") -> Location:
    """A :class:`Location` from a CDX row or a columnar row (``warc_filename``/...); clear errors."""
    for names in _FIELD_NAMES:
        if names[0] in obj:
            break
    else:
        raise InputError(f"{where}: no filename field (want filename, offset, length)")
    filename, offset, length = (obj.get(n) for n in names)
    if not isinstance(filename, str) or not filename:
        raise InputError(f"{where}: filename must be a non-empty string")
    try:
        off, ln = int(str(offset)), int(str(length))
    except ValueError:
        raise InputError(f"{where}: offset and length must be integers, got {offset!r} and {length!r}") from None
    if off < 0 or ln <= 0:
        raise InputError(f"{where}: offset must be >= 0 and length > 0, got {off} and {ln}")
    return Location(filename, off, ln, obj)


def location_from_line(line: str, *, lineno: int) -> Location:
    """One JSONL line of locations."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"stdin line {lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise InputError(f"stdin line {lineno}: not a JSON object")
    return location_from(obj, where=f"stdin line {lineno}")


#: Not a user flag: the record's own bytes (one gzip member), validated, for ``export``.
WARC = "warc"


#: Not a fetch flag: the page title alone, for ``extract title``.
TITLE = "title"


def check_content(content: str) -> str:
    if content not in CONTENT and content not in (WARC, TITLE):
        raise UsageError(f"unknown content {content!r}; one of: {', '.join(CONTENT)}")
    return content


def parse_record(data: bytes, loc: Location) -> WarcRecord:
    """The one WARC record in ``data`` (a record's gzip member), or InputError naming the location."""
    from ccrawl.warc.reader import iter_records

    try:
        records = list(iter_records(io.BytesIO(data), name=loc.key))
    except InputError as exc:
        raise InputError(f"{loc.key}: the bytes there are not a whole WARC record ({exc})") from None
    if not records:
        raise InputError(f"{loc.key}: no WARC record in the {loc.length} bytes there; is the location right?")
    return records[0]


def _base(loc: Location, record: WarcRecord) -> Record:
    return {"url": record.url, "filename": loc.filename, "offset": loc.offset, "length": loc.length}


def _extract(record: WarcRecord, payload: bytes) -> Extraction:
    from ccrawl.extract.engines import get_extractor

    return get_extractor("h2m").extract(payload, record.url or "", content_type=record.http_header("Content-Type"))


def render(data: bytes, loc: Location, content: str) -> list[Record]:
    """What ``fetch``/``get`` output for the record in ``data`` under one content flag."""
    rows, note = _render(data, loc, content)
    if note is not None:
        for row in rows:
            row["note"] = note
    return rows


def _render(data: bytes, loc: Location, content: str) -> tuple[list[Record], str | None]:
    from ccrawl.warc.reader import decode_body

    record = parse_record(data, loc)
    if content == WARC:
        return [{**_base(loc, record), "warc": data}], None
    # Inflated to the crawler's cap at most: a compression bomb stops there, with a note.
    decoded = decode_body(record) if record.http_headers is not None else None
    payload = decoded.data if decoded is not None else record.payload
    return _content_rows(loc, record, content, payload), decoded.note if decoded is not None else None


def _content_rows(loc: Location, record: WarcRecord, content: str, payload: bytes) -> list[Record]:
    if content == "body":
        return [{**_base(loc, record), "status": record.http_status, "mime": record.mime, "body": payload}]
    if content == "meta":
        return [
            {
                **_base(loc, record),
                "warc_type": record.warc_type,
                "date": record.date,
                "record_id": record.record_id,
                "status": record.http_status,
                "mime": record.mime,
                "digest": record.header("WARC-Payload-Digest"),
                "payload_length": len(payload),
                "languages": ",".join(record.languages) or None,
            }
        ]
    if content == "headers":
        lines = [f"{k}: {v}" for k, v in record.http_headers or ()]
        status = record.http_status
        # The status line as captured (protocol and reason phrase included), else the record type.
        first = record.http_head.split(b"\n", 1)[0].rstrip(b"\r").decode("latin-1") if lines else record.warc_type
        raw = "\n".join([first, *lines]) + "\n"
        return [{**_base(loc, record), "status": status, "raw": raw}]
    extraction = _extract(record, payload)
    if content == TITLE:
        return [{**_base(loc, record), "title": extraction.title}]
    if content == "text":
        return [{**_base(loc, record), "text": extraction.text}]
    if content == "markdown":
        return [{**_base(loc, record), "markdown": extraction.markdown}]
    return [{"source": record.url, "url": link} for link in extraction.outlinks]
