"""What one fetch attempt produced: every value a capture row or a WARC record pair needs.

A failure is a result too (``status`` 0, ``error`` set), never an exception, because on a
recrawl a row is an attempt and the failures are half of what the corpus says.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import TypedDict
from urllib.parse import urlsplit

Header = tuple[str, str]


class RowMeta(TypedDict, total=False):
    """A row's ``meta_json``: only the keys that say something on that row."""

    error_detail: str
    body_truncated: bool
    declared_length: int
    redirects: list[str]

ERROR_CLASSES = ("dns", "timeout", "refused", "tls", "skip", "other")

# Response headers that describe a transfer coding the stored body no longer has.
_HOP_HEADERS = frozenset({"transfer-encoding", "content-length", "connection", "keep-alive"})


def sha1_base32(data: bytes) -> str:
    """SHA-1 of ``data`` in base32, the form Common Crawl's CDX ``digest`` and WARC headers use."""
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def canonical_header_name(name: str) -> str:
    """``content-type`` -> ``Content-Type``, the way Go's net/textproto writes header keys."""
    canonical = _CANONICAL.get(name)
    if canonical is None:
        canonical = "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))
        if len(_CANONICAL) < _CACHE_ENTRIES:
            _CANONICAL[name] = canonical
    return canonical


#: Served header names repeat across millions of rows (a few dozen distinct ones in practice), so
#: their canonical forms are remembered; bounded so a server inventing names cannot grow it.
_CANONICAL: dict[str, str] = {}
_CACHE_ENTRIES = 4096
#: One encoder for every row: ``json.dumps`` with arguments builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def headers_to_json(headers: list[Header]) -> str:
    """Headers as a JSON object of canonical name -> list of values, in served order.

    This is the shape the Go original's ``json.Marshal(resp.Header)`` gives, so a query
    written against its capture files (``resp_headers->'$.Content-Type'[0]``) works here too.
    """
    grouped: dict[str, list[str]] = {}
    for name, value in headers:
        key = canonical_header_name(name)
        text = value if value.isascii() else _latin1_to_text(value)
        values = grouped.get(key)
        if values is None:
            grouped[key] = [text]
        else:
            values.append(text)
    return _JSON.encode(grouped)


def request_headers_json(headers: list[Header]) -> str:
    """:func:`headers_to_json` of request headers, remembered: they are the same for every URL of a host."""
    key = tuple(headers)
    text = _REQUEST_JSON.get(key)
    if text is None:
        text = headers_to_json(headers)
        if len(_REQUEST_JSON) >= _CACHE_ENTRIES:
            _REQUEST_JSON.clear()  # a crawl moves on from hosts; starting over costs one miss each
        _REQUEST_JSON[key] = text
    return text


_REQUEST_JSON: dict[tuple[Header, ...], str] = {}


def _latin1_to_text(value: str) -> str:
    """Header values are kept as latin-1 (byte exact); show UTF-8 ones as the text they are."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


@dataclass(slots=True)
class Phases:
    """Seconds one fetch spent in each phase; the phases do not overlap, so they add up.

    ``host_clock`` is waiting for the per-host spacing, ``slot`` waiting for a free
    concurrency slot, ``robots`` getting (or waiting for) the host's robots.txt, ``dns``
    the lookup (cache hits cost ~0), ``connect`` TCP + TLS, ``ttfb`` from the request
    going out to the response head, ``body`` reading the body.
    """

    dns: float = 0.0
    connect: float = 0.0
    ttfb: float = 0.0
    body: float = 0.0
    robots: float = 0.0
    host_clock: float = 0.0
    slot: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "dns": self.dns,
            "connect": self.connect,
            "ttfb": self.ttfb,
            "body": self.body,
            "robots": self.robots,
            "host_clock": self.host_clock,
            "slot": self.slot,
        }

    def total(self) -> float:
        return self.dns + self.connect + self.ttfb + self.body + self.robots + self.host_clock + self.slot


@dataclass(slots=True)
class FetchResult:
    """One attempt at one URL. Field names follow the capture schema where one exists."""

    url: str
    host: str
    status: int = 0
    """HTTP status of the final response; 0 when no response was had."""
    fetched_at: int = 0
    """Unix milliseconds when the first request went out (after the host clock and robots)."""
    content_type: str = ""
    body: bytes = b""
    """As served: transfer coding removed, content coding (gzip, br, zstd, ...) kept."""
    body_truncated: bool = False
    """True when the body was cut at ``FetchConfig.max_body``."""
    declared_length: int = -1
    """Content-Length as served, -1 when the server sent none (chunked, or none at all)."""
    digest: str = ""
    """SHA-1 of the stored body in base32 (Common Crawl's form); empty when no body is stored."""
    unchanged: bool = False
    """True on a 304 Not Modified answer to a conditional request."""
    etag: str = ""
    last_modified: str = ""
    error: str = ""
    """'' on success, else one of :data:`ERROR_CLASSES`, decided from the exception type."""
    error_detail: str = ""
    """The original message, for ``meta_json.error_detail``."""
    ttfb_ms: int = 0
    """From the first request going out to the final response head, redirect hops included."""
    fetch_duration_ms: int = 0
    """From the first request going out to the last body byte."""
    final_url: str = ""
    """Where redirects ended; '' when the URL did not move."""
    redirects: list[str] = field(default_factory=list)
    """Every URL requested after the first, in order (the last is ``final_url``)."""
    ip_address: str = ""
    resp_headers: list[Header] = field(default_factory=list)
    """Response headers of the final response, as served, in order, duplicates kept; names and
    values are the served bytes decoded as latin-1, so :meth:`response_head` is byte exact."""
    req_headers: list[Header] = field(default_factory=list)
    """Request headers of the final request, as sent (Host included)."""
    http_version: str = ""
    """``"1.1"`` or ``"1.0"``, from the status line."""
    reason: str = ""
    method: str = "GET"
    request_target: str = ""
    """Path and query of the final request exactly as sent (percent-encoded), for the request line."""
    phases: Phases = field(default_factory=Phases)

    @property
    def ok(self) -> bool:
        return self.error == ""

    @property
    def body_length(self) -> int:
        return len(self.body)

    @property
    def target_url(self) -> str:
        """The URL of the final response: ``final_url`` when it moved, else ``url``."""
        return self.final_url or self.url

    def headers_json(self) -> str:
        """``resp_headers`` as JSON; '' on a failure row, which has no response."""
        return headers_to_json(self.resp_headers) if self.status else ""

    def req_headers_json(self) -> str:
        return request_headers_json(self.req_headers) if self.req_headers else ""

    def meta(self) -> RowMeta:
        """Extra context for ``meta_json``: only keys that say something on this row."""
        meta: RowMeta = {}
        if self.error_detail:
            meta["error_detail"] = self.error_detail
        if self.body_truncated:
            meta["body_truncated"] = True
            meta["declared_length"] = self.declared_length
        if self.redirects:
            meta["redirects"] = list(self.redirects)
        return meta

    def response_head(self) -> bytes:
        """Status line and headers as served (rebuilt from the parsed head, order and case kept)."""
        return self._head(f"HTTP/{self.http_version} {self.status} {self.reason}", self.resp_headers)

    def stored_response_head(self) -> bytes:
        """The head that describes the *stored* body, for a WARC response record.

        Transfer coding is gone from the stored body, so Transfer-Encoding goes and
        Content-Length is rewritten to the stored length; Content-Encoding stays, because the
        stored body still has it. A truncated body keeps the served length in
        ``X-Crawler-Content-Length`` (and the writer sets ``WARC-Truncated: length``).
        """
        headers = [(n, v) for n, v in self.resp_headers if n.lower() not in _HOP_HEADERS]
        if self.body_truncated and self.declared_length >= 0:
            headers.append(("X-Crawler-Content-Length", str(self.declared_length)))
        headers.append(("Content-Length", str(len(self.body))))
        return self._head(f"HTTP/{self.http_version} {self.status} {self.reason}", headers)

    def request_head(self) -> bytes:
        """The final request's line and headers, for a WARC request record."""
        target = self.request_target
        if not target:
            parts = urlsplit(self.target_url)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return self._head(f"{self.method} {target} HTTP/{self.http_version or '1.1'}", self.req_headers)

    @staticmethod
    def _head(first_line: str, headers: list[Header]) -> bytes:
        lines = [first_line] + [f"{n}: {v}" for n, v in headers]
        # latin-1 round-trips the bytes the parser decoded with latin-1 / surrogateescape.
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
