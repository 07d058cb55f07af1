"""Index WARC files the way Common Crawl's URL index looks: one CDX JSON object per capture.

Each line has the fields Common Crawl's CDX server returns with ``output=json``, in its order
and with its types (every value a string)::

    {"urlkey": "com,example)/", "timestamp": "20240101120000", "url": "http://example.com/",
     "mime": "text/html", "mime-detected": "text/html", "status": "200",
     "digest": "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "length": "1228", "offset": "784",
     "filename": "crawl-data/.../x.warc.gz", "languages": "eng", "encoding": "UTF-8"}

Only ``response`` and ``revisit`` records are indexed (as Common Crawl does). Where Common
Crawl's values come from its own pipeline this module takes them from the record:

* ``mime`` is the HTTP Content-Type without parameters, lowercased (``warc/revisit`` for
  revisits); ``mime-detected`` is ``WARC-Identified-Payload-Type`` when present, else ``mime``;
* ``digest`` is ``WARC-Payload-Digest`` without its ``sha1:``, computed when missing;
* ``languages`` is ``WARC-Identified-Content-Language`` when present, else left out;
* ``encoding`` is the Content-Type charset, uppercased, else left out;
* ``redirect`` is the Location header of a 3xx.

Lines sort by ``(urlkey, timestamp)`` in :func:`index_files`, the order of the real index.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from ccrawl.url.surt import surt
from ccrawl.warc.reader import Record, iter_records

__all__ = ["capture_of", "index_file", "index_files", "to_line"]


def _timestamp(warc_date: str | None) -> str:
    digits = "".join(ch for ch in (warc_date or "") if ch.isdigit())
    return digits[:14].ljust(14, "0")


def capture_of(record: Record, filename: str) -> dict[str, str] | None:
    """The CDX object of one record, or None for records the index leaves out."""
    if record.warc_type not in ("response", "revisit") or record.url is None:
        return None
    if record.offset is None or record.length is None:
        return None
    url = record.url
    try:
        urlkey = surt(url)
    except Exception:
        return None  # a target URI no canonicaliser can read is not indexable
    revisit = record.warc_type == "revisit"
    mime = "warc/revisit" if revisit else record.mime or "unk"
    out: dict[str, str] = {"urlkey": urlkey, "timestamp": _timestamp(record.date), "url": url, "mime": mime}
    detected = record.header("WARC-Identified-Payload-Type")
    out["mime-detected"] = (detected or record.mime or mime).lower()
    if record.http_status is not None:
        out["status"] = str(record.http_status)
    digest = record.header("WARC-Payload-Digest")
    if digest:
        out["digest"] = digest.split(":", 1)[-1]
    else:
        out["digest"] = base64.b32encode(hashlib.sha1(record.payload).digest()).decode("ascii")
    out["length"] = str(record.length)
    out["offset"] = str(record.offset)
    out["filename"] = filename
    if record.http_status is not None and 300 <= record.http_status < 400:
        location = record.http_header("Location")
        if location:
            out["redirect"] = location
    languages = record.header("WARC-Identified-Content-Language")
    if languages:
        out["languages"] = languages
    content_type = record.http_header("Content-Type") or ""
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            out["encoding"] = value.strip("\"' ").upper()
    return out


def index_file(path: str | Path, filename: str | None = None) -> Iterator[dict[str, str]]:
    """CDX objects of one WARC file in file order; ``filename`` is the name the index records."""
    name = filename if filename is not None else str(path)
    for record in iter_records(path, name=name):
        capture = capture_of(record, name)
        if capture is not None:
            yield capture


def index_files(files: Iterable[tuple[str | Path, str]]) -> list[dict[str, str]]:
    """CDX objects of several ``(path, filename)`` pairs, sorted as the real index is."""
    rows = [c for path, name in files for c in index_file(path, name)]
    rows.sort(key=lambda r: (r["urlkey"], r["timestamp"], r["filename"], int(r["offset"])))
    return rows


def to_line(capture: dict[str, str]) -> str:
    """One CDXJ line as Common Crawl serves it: ``urlkey timestamp {json}``."""
    return f"{capture['urlkey']} {capture['timestamp']} {json.dumps(capture, separators=(', ', ': '))}"
