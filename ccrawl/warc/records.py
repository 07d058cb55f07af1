"""ISO 28500 records of the crawl and the recrawl: warcinfo, then a request/response pair per page.

Each record is its own gzip member (so a record can be sliced out by offset and length, as
Common Crawl's index does). The request and the response name each other with
``WARC-Concurrent-To``; the response carries ``WARC-Block-Digest`` (head + body) and
``WARC-Payload-Digest`` (the body as stored: transfer coding removed, content coding kept),
both SHA-1 in base32, ``WARC-IP-Address`` and, when the body hit the size cap,
``WARC-Truncated: length``. Version 1.0 headers with second-precision dates: what every
reader (warcio, fastwarc, Common Crawl's tools) accepts.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
import zlib
from collections.abc import Callable, Iterable

Compress = Callable[[bytes], bytes]
"""Turns a whole record into one gzip member (the discovery crawl passes ISA-L's, see ccrawl.crawl.warc)."""


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def warc_date(ms: int | None = None) -> str:
    t = time.gmtime((ms if ms else int(time.time() * 1000)) / 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", t)


def record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def gzip_member(raw: bytes) -> bytes:
    """zlib at level 6, the default member of a record."""
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(raw) + c.flush()


def _record(headers: Iterable[tuple[str, str]], block: bytes, compress: Compress | None = None) -> bytes:
    lines = ["WARC/1.0", *(f"{k}: {v}" for k, v in headers), f"Content-Length: {len(block)}"]
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"
    return (compress or gzip_member)(raw)


def warcinfo(filename: str, fields: dict[str, str], compress: Compress | None = None) -> tuple[str, bytes]:
    """(record id, gzip member) of the warcinfo record opening a file."""
    rid = record_id()
    block = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("utf-8")
    headers = [
        ("WARC-Type", "warcinfo"),
        ("WARC-Date", warc_date()),
        ("WARC-Record-ID", rid),
        ("WARC-Filename", filename),
        ("Content-Type", "application/warc-fields"),
        ("WARC-Block-Digest", _sha1_b32(block)),
    ]
    return rid, _record(headers, block, compress)


def exchange(
    *,
    target_uri: str,
    fetched_at_ms: int,
    ip_address: str,
    request_head: bytes,
    response_head: bytes,
    body: bytes,
    truncated: bool,
    warcinfo_id: str,
    compress: Compress | None = None,
    payload_digest: str = "",
) -> tuple[bytes, bytes]:
    """(request member, response member) for one fetched page.

    ``payload_digest`` (``sha1:<base32>`` of ``body``) saves hashing the body again when the caller has it."""
    date = warc_date(fetched_at_ms)
    req_id, resp_id = record_id(), record_id()
    common = [("WARC-Date", date), ("WARC-Target-URI", target_uri), ("WARC-Warcinfo-ID", warcinfo_id)]
    if ip_address:
        common.append(("WARC-IP-Address", ip_address))
    block = response_head + body
    resp_headers = [
        ("WARC-Type", "response"),
        ("WARC-Record-ID", resp_id),
        *common,
        ("Content-Type", "application/http; msgtype=response"),
        ("WARC-Block-Digest", _sha1_b32(block)),
        ("WARC-Payload-Digest", payload_digest or _sha1_b32(body)),
    ]
    if truncated:
        resp_headers.append(("WARC-Truncated", "length"))
    req_headers = [
        ("WARC-Type", "request"),
        ("WARC-Record-ID", req_id),
        *common,
        ("WARC-Concurrent-To", resp_id),
        ("Content-Type", "application/http; msgtype=request"),
        ("WARC-Block-Digest", _sha1_b32(request_head)),
    ]
    return _record(req_headers, request_head, compress), _record(resp_headers, block, compress)
