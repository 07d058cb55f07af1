"""WARC/1.0 output of the discovery crawl: rotating files that are sealed by an atomic rename.

A file is written as ``<name>.warc.gz.open`` and becomes ``<name>.warc.gz`` only after an fsync,
so a name without ``.open`` is always a whole file; the frontier forgets a URL only once the file
holding its page is sealed. Each file starts with a warcinfo record, then a request/response pair
per fetch (records from :mod:`ccrawl.warc.records`, one gzip member each).

The stored response describes the stored body: the fetcher keeps the content coding as served,
and here the body is decoded (gzip, deflate, br, zstd) the way a browser would see it, so the
head is rewritten to match, ``Content-Encoding`` and ``Transfer-Encoding`` removed (kept as
``X-Crawler-Content-Encoding``), ``Content-Length`` set to the stored length (the served one kept
as ``X-Crawler-Content-Length``). A body cut at the cap (10 MB by default, after decoding too)
gets ``WARC-Truncated: length``.

Members are compressed with ISA-L (``isal``) at level 2: ten times zlib level 6's speed for about
14% more bytes on real HTML (bench/README.md, "Discovery crawl: WARC members with ISA-L"); zlib at
level 1 when isal is not installed. Either is one ordinary gzip member that every reader inflates.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ccrawl import __version__, durable
from ccrawl.fetch.decoding import ContentDecodeError, decode_content
from ccrawl.fetch.result import FetchResult
from ccrawl.warc import records as warcrec

OPEN_SUFFIX = ".open"
ISAL_LEVEL = 2


def _member_compressor() -> warcrec.Compress:
    try:
        from isal import isal_zlib
    except ImportError:  # a core dependency, but the members stay valid gzip without it
        import zlib

        def zlib_member(raw: bytes) -> bytes:
            c = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            return c.compress(raw) + c.flush()

        return zlib_member

    def isal_member(raw: bytes) -> bytes:
        c = isal_zlib.compressobj(ISAL_LEVEL, isal_zlib.DEFLATED, 16 + isal_zlib.MAX_WBITS)
        return bytes(c.compress(raw) + c.flush())

    return isal_member


gzip_member = _member_compressor()
"""One gzip member per WARC record (ISA-L level 2; zlib level 1 without isal). Releases the GIL."""
FAST_MEMBERS = gzip_member.__name__ == "isal_member"
"""ISA-L compresses a 25 KB page in ~55 us: less than handing the record to a thread costs (see
:func:`ccrawl.crawl.run.CrawlOptions.auto_encode_threads`)."""
_DROP = frozenset({"content-encoding", "transfer-encoding", "content-length"})


@dataclass(slots=True)
class StoredBody:
    """The body a WARC response record holds, its head, and whether it was cut."""

    head: bytes
    body: bytes
    truncated: bool
    decoded: bool


def stored_body(result: FetchResult, max_body: int) -> StoredBody:
    """Decode the content coding and rewrite the head to describe the stored body."""
    coding = ""
    for name, value in result.resp_headers:
        if name.lower() == "content-encoding":
            coding = value.strip()
    body = result.body
    truncated = result.body_truncated
    decoded = False
    if coding and coding.lower() != "identity" and not truncated:
        try:
            body = decode_content(result.body, coding, max_body + 1)
            decoded = True
        except ContentDecodeError:
            body = result.body  # keep the bytes as served, and the header that says what they are
        if len(body) > max_body:
            body, truncated = body[:max_body], True
    headers = []
    for name, value in result.resp_headers:
        low = name.lower()
        if low in _DROP:
            if low == "content-encoding" and decoded:
                headers.append(("X-Crawler-Content-Encoding", value))
            elif low == "content-encoding":
                headers.append((name, value))
            elif low == "content-length" and (decoded or truncated):
                headers.append(("X-Crawler-Content-Length", value))
            elif low == "transfer-encoding":
                headers.append(("X-Crawler-Transfer-Encoding", value))
            continue
        headers.append((name, value))
    if truncated and result.declared_length >= 0 and not any(n == "X-Crawler-Content-Length" for n, _ in headers):
        headers.append(("X-Crawler-Content-Length", str(result.declared_length)))
    headers.append(("Content-Length", str(len(body))))
    lines = [f"HTTP/{result.http_version or '1.1'} {result.status} {result.reason}"] + [f"{n}: {v}" for n, v in headers]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
    return StoredBody(head, body, truncated, decoded)


def encode_exchange(result: FetchResult, warcinfo_id: str, max_body: int) -> tuple[bytes, bytes]:
    """(request member, response member) of ``result``. A pure function of its arguments, so a crawl
    runs it in a process pool and compression and digests leave the event loop's core."""
    stored = stored_body(result, max_body)
    return warcrec.exchange(
        target_uri=result.target_url, fetched_at_ms=result.fetched_at, ip_address=result.ip_address,
        request_head=result.request_head(), response_head=stored.head, body=stored.body,
        truncated=stored.truncated, warcinfo_id=warcinfo_id, compress=gzip_member,
        # the fetcher hashed the body as served: the same bytes unless they were decoded here
        payload_digest=f"sha1:{result.digest}" if result.digest and stored.body is result.body else "",
    )


@dataclass(slots=True)
class Encoded:
    """A fetch's request and response records, compressed, and the warcinfo they point at."""

    result: FetchResult
    warcinfo_id: str
    request: bytes
    response: bytes


class WarcFiles:
    """``write(result)`` appends a record pair; ``seal()`` closes the file and names it for good.

    Files rotate past ``max_bytes``; ``on_seal(name)`` runs after each seal (the frontier
    forgets the URLs of that file there).
    """

    def __init__(self, directory: Path | str, *, prefix: str = "ccrawl", max_bytes: int = 1 << 30,
                 max_body: int = 10 * 1024 * 1024, operator: str = "") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if "/" in prefix or prefix.startswith("."):
            from ccrawl.errors import UsageError

            raise UsageError(f"--prefix {prefix!r}: a file name prefix, without / or a leading dot")
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.max_body = max_body
        self.operator = operator
        self.serial = 0
        self.name = ""
        self._file: BinaryIO | None = None
        self._size = 0
        self._warcinfo_id = ""
        self.records = 0

    @property
    def path(self) -> Path:
        return self.directory / self.name

    def _open(self) -> None:
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        while True:
            self.name = f"{self.prefix}-{stamp}-{self.serial:05d}-{os.getpid()}.warc.gz"
            self.serial += 1
            if not (self.directory / self.name).exists() and not (self.directory / (self.name + OPEN_SUFFIX)).exists():
                break
        self._file = open(self.directory / (self.name + OPEN_SUFFIX), "xb")  # noqa: SIM115 - closed by seal()
        fields = {
            "software": f"ccrawl/{__version__} (crawl)",
            "format": "WARC File Format 1.0",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/",
            "hostname": socket.gethostname(),
            "robots": "classic",
        }
        if self.operator:
            fields["operator"] = self.operator
        self._warcinfo_id, member = warcrec.warcinfo(self.name, fields, gzip_member)
        self._file.write(member)
        self._size = len(member)

    def write(self, result: FetchResult) -> str:
        """Append ``result``'s request and response; returns the (final) name of the file they are in."""
        return self.append(self.encode(result, self.warcinfo_id()))

    def warcinfo_id(self) -> str:
        """The record id of the open file's warcinfo (a file is opened when none is)."""
        if self._file is None:
            self._open()
        return self._warcinfo_id

    def encode(self, result: FetchResult, warcinfo_id: str) -> Encoded:
        """The gzip members of ``result``'s record pair, encoded here (see :func:`encode_exchange`)."""
        request, response = encode_exchange(result, warcinfo_id, self.max_body)
        return Encoded(result, warcinfo_id, request, response)

    def append(self, encoded: Encoded) -> str:
        """Write encoded members into the open file; re-encodes when that file changed meanwhile."""
        if self._file is None or encoded.warcinfo_id != self._warcinfo_id:
            encoded = self.encode(encoded.result, self.warcinfo_id())
        assert self._file is not None
        self._file.write(encoded.request)
        self._file.write(encoded.response)
        self._size += len(encoded.request) + len(encoded.response)
        self.records += 1
        return self.name

    def full(self) -> bool:
        return self._file is not None and self._size >= self.max_bytes

    def seal(self) -> str:
        """fsync and rename the open file; returns its name ('' when nothing was open)."""
        if self._file is None:
            return ""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        durable.replace(self.directory / (self.name + OPEN_SUFFIX), self.directory / self.name, sync_file=False)
        return self.name

    def abandon_leftovers(self) -> list[str]:
        """Rename ``*.warc.gz.open`` left by a killed run to ``*.warc.gz.aborted``; their URLs are refetched."""
        moved = []
        for path in sorted(self.directory.glob(f"{self.prefix}-*.warc.gz{OPEN_SUFFIX}")):
            target = path.with_name(path.name[: -len(OPEN_SUFFIX)] + ".aborted")
            os.replace(path, target)
            moved.append(target.name)
        return moved
