"""One WARC record (a decompressed gzip member) to one CC-NEWS index row, computed from the bytes.

CC-NEWS records carry no identified language, no detected type and no metadata records, so every
host, language and MIME column is worked out here: the host fields from the URL (registered domain via
the public suffix list), the detected MIME by sniffing the body's first bytes, the declared language
from ``<html lang>``, and the language itself by ccrawl's identifier
(:func:`ccrawl.extract.lang.detect_language`) over a sample of the page's visible text.

The sample is the hot path of indexing, so it is cut cheaply and natively
(:mod:`ccrawl.commoncrawl.news.text`): at most ``TEXT_WINDOW`` bytes of markup from the top, with
script/style/noscript/template/svg blocks and tags dropped, whitespace collapsed, and the first
``SAMPLE_BYTES`` bytes of what is left (the title, then the body's text) decoded. A trigram profile
settles a language on a few thousand characters; reading the whole page would only cost time.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any
from urllib.parse import urlsplit

from ccrawl.commoncrawl.news.text import visible_text
from ccrawl.extract.decode import charset_from_content_type, charset_from_meta, normalise_label
from ccrawl.extract.lang import detect_language
from ccrawl.url.domain import registered_domain
from ccrawl.url.surt import surt
from ccrawl.warc.reader import Record, decode_payload, parse_http_block

#: Bytes of markup the text sample is cut from (head scripts and styles are skipped at memchr speed).
TEXT_WINDOW = 128 * 1024
#: Bytes of collapsed visible text given to the language identifier.
SAMPLE_BYTES = 2048
_HTTP_HEAD = 65536
#: charset_from_meta reads the first 4 KB; it is handed no more than that.
_META_SCAN = 4096

_HTML_LANG = re.compile(rb"""<html\b[^>]*?\slang\s*=\s*["']?\s*([A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*)""", re.I)
_HTMLISH = (b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<title", b"<meta", b"<div", b"<p>")


def parse_warc_head(data: bytes) -> tuple[dict[str, str], int] | None:
    """WARC header fields (first of each name, lower-cased names) and where the block starts."""
    end = data.find(b"\r\n\r\n")
    if end < 0 or not data.startswith(b"WARC/"):
        return None
    fields: dict[str, str] = {}
    for line in data[:end].decode("utf-8", "replace").split("\r\n")[1:]:
        name, sep, value = line.partition(":")
        if sep:
            fields.setdefault(name.strip().lower(), value.strip())
    return fields, end + 4


def sniff_mime(body: bytes, start: int = 0, end: int | None = None) -> str | None:
    """The type of ``body[start:end]`` from its first bytes (WHATWG-style magic numbers, then markup),
    None when empty. The bounds let a caller sniff a body inside a whole record without copying it."""
    stop = len(body) if end is None else min(end, len(body))
    if start >= stop:
        return None
    head = body[start : min(stop, start + 1024)].lstrip(b" \t\r\n\xef\xbb\xbf")
    low = head[:512].lower()
    for magic, mime in (
        (b"%pdf-", "application/pdf"), (b"\xff\xd8\xff", "image/jpeg"), (b"\x89png\r\n\x1a\n", "image/png"),
        (b"gif87a", "image/gif"), (b"gif89a", "image/gif"), (b"pk\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"), (b"%!ps", "application/postscript"),
    ):
        if low.startswith(magic):
            return mime
    if low.startswith(b"riff") and low[8:12] == b"webp":
        return "image/webp"
    if low.startswith(b"<?xml"):
        if b"<rss" in low:
            return "application/rss+xml"
        if b"<feed" in low:
            return "application/atom+xml"
        if b"<html" in low:
            return "application/xhtml+xml"
        return "application/xml"
    if any(m in low for m in _HTMLISH):
        return "text/html"
    if low[:1] in (b"{", b"["):
        return "application/json"
    if b"\x00" in head[:512]:
        return "application/octet-stream"
    return "text/plain"


def text_sample(body: bytes, charset: str = "", start: int = 0, end: int | None = None) -> str:
    """A few KB of the visible text of ``body[start:end]``, for the language identifier (module doc)."""
    stop = len(body) if end is None else min(end, len(body))
    text = visible_text(body, start, min(TEXT_WINDOW, max(stop - start, 0)), SAMPLE_BYTES)
    low = charset.lower()
    codec = "utf-8" if low in ("", "utf-8", "utf8") else (normalise_label(charset) or "utf-8")
    try:
        out = text.decode(codec, "replace")
    except LookupError:
        out = text.decode("utf-8", "replace")
    return html.unescape(out) if "&" in out else out


def declared_language(body: bytes, start: int = 0, end: int | None = None) -> str | None:
    """The ``<html lang>`` value of ``body[start:end]`` (BCP-47 as written, ``_`` made ``-``), None when
    there is none."""
    stop = len(body) if end is None else min(end, len(body))
    m = _HTML_LANG.search(body, start, min(stop, start + 16384))
    return m.group(1).decode("ascii").replace("_", "-") if m else None


def host_fields(url: str) -> tuple[str | None, str | None, str | None, str | None]:
    """(host, registered domain, TLD, protocol) of a URL; Nones when it has no host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None, None, None, None
    scheme = parts.scheme.lower() or None
    if not host:
        return None, None, None, scheme
    host = host.rstrip(".")
    tld = host.rsplit(".", 1)[-1] if "." in host and not host.replace(".", "").isdigit() else None
    return host, registered_domain(host), tld, scheme


def _fetch_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def row_of(filename: str, offset: int, length: int, data: bytes, *, languages: bool = True) -> dict[str, Any] | None:
    """The index row of the record in ``data`` (one whole decompressed member), None unless a response."""
    # Requests and warcinfo are half the records: leave them before decoding their header.
    probe = data[:2048].lower()
    if b"warc-type: response" not in probe and b"warc-type:response" not in probe:
        return None
    head = parse_warc_head(data)
    if head is None:
        return None
    fields, start = head
    if fields.get("warc-type") != "response":
        return None
    declared = fields.get("content-length", "")
    end = min(start + int(declared), len(data)) if declared.isdigit() else len(data)
    url = fields.get("warc-target-uri", "")
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1]
    status: int | None = None
    http_headers: list[tuple[str, str]] | None = None
    # The HTTP head is parsed from a bounded slice and the body cut once: no copy of the whole block.
    parsed = parse_http_block(data[start : min(end, start + _HTTP_HEAD)])
    if parsed is None and end - start > _HTTP_HEAD:
        parsed = parse_http_block(data[start:end])
    hlen = 0
    if parsed is not None:
        status, http_headers, hlen = parsed
    # The body is addressed in place (``data[bstart:bend]``): copying it cost more than all the columns
    # that read it, and only a content- or transfer-encoded body (undone below) needs bytes of its own.
    bstart = min(start + hlen, end)
    content_length = end - bstart

    def header(name: str) -> str | None:
        for k, v in http_headers or ():
            if k.lower() == name:
                return v
        return None

    ctype = header("content-type")
    mime = ctype.split(";", 1)[0].strip().lower() if ctype else None
    charset = charset_from_content_type(ctype) or None
    body, bend = data, end
    if header("content-encoding") or header("transfer-encoding"):
        payload = data[bstart:end]
        rec = Record(filename, offset, length, "response", [], http_status=status, http_headers=http_headers,
                     payload=payload)
        body = decode_payload(rec)
        bstart, bend = 0, len(body)
    detected = sniff_mime(body, bstart, bend)
    lang: str | None = None
    confidence: float | None = None
    declared_lang: str | None = None
    if detected in ("text/html", "application/xhtml+xml"):
        declared_lang = declared_language(body, bstart, bend)
        if languages:
            cs = charset or charset_from_meta(body[bstart : min(bend, bstart + _META_SCAN)])
            code, conf = detect_language(text_sample(body, cs, bstart, bend))
            lang, confidence = (code or None), conf
    host, domain, tld, protocol = host_fields(url)
    try:
        key: str | None = surt(url) if url else None
    except Exception:  # a URL the SURT rules refuse still gets a row
        key = None
    digest = fields.get("warc-payload-digest")
    if digest and digest.lower().startswith("sha1:"):
        digest = digest[5:]
    return {
        "url_surtkey": key,
        "url": url or None,
        "url_host_name": host,
        "url_host_registered_domain": domain,
        "url_host_tld": tld,
        "url_protocol": protocol,
        "fetch_time": _fetch_time(fields.get("warc-date")),
        "fetch_status": status,
        "fetch_redirect": header("location") if status is not None and 300 <= status < 400 else None,
        "content_digest": digest or None,
        "content_mime_type": mime,
        "content_mime_detected": detected,
        "content_charset": charset,
        "content_languages": lang,
        "content_truncated": fields.get("warc-truncated") or None,
        "warc_filename": filename,
        "warc_record_offset": offset,
        "warc_record_length": length,
        "content_language_confidence": confidence,
        "content_language_declared": declared_lang,
        "content_length": content_length,
        "warc_record_id": fields.get("warc-record-id"),
    }


def response_host(data: bytes) -> str | None:
    """The host of a response record's target URI without building its row (the archive scan's filter)."""
    head = parse_warc_head(data[:65536])
    if head is None or head[0].get("warc-type") != "response":
        return None
    return host_fields(head[0].get("warc-target-uri", "").strip("<>"))[0]
