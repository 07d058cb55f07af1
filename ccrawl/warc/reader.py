"""Read WARC, WAT and WET files (gzipped or not, a path or stdin) into records with their locations.

::

    for rec in iter_records("x.warc.gz"):
        rec.offset, rec.length          # the location triple, with the file name
        rec.warc_type, rec.url, rec.http_status, rec.http_headers, rec.payload

fastwarc does the parsing; this module adds what a user of Common Crawl needs on top:

* **locations**: ``offset`` is where the record starts in the file as stored (the gzip member
  for ``.gz``), ``length`` runs to the start of the next record, so ``(filename, offset,
  length)`` is the range ``fetch`` reads. A gzipped file that is one stream rather than one
  member per record (non-chunked gzip) cannot be cut that way: such records get ``None``.
* **whole records only**: a record whose block is shorter than its ``Content-Length``, or a
  header fastwarc cannot parse, stops the read with :class:`~ccrawl.errors.InputError`
  naming the file and the offset, after every whole record before it has been yielded.
  ``skip_bad_records=True`` reports each bad record through ``on_skip`` and carries on
  (a header that cannot be parsed ends the file, since nothing says where the next record
  starts).
* **ARC files** are named as such and refused with a one-line error: Common Crawl has written
  WARC since 2013 and this reader reads WARC only.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ccrawl.errors import InputError

__all__ = ["Record", "decode_payload", "iter_records", "parse_http_block"]

_GZIP_MAGIC = b"\x1f\x8b"
_HEAD = 1 << 16


@dataclass(slots=True)
class Record:
    """One WARC record: where it sits, its WARC headers, and its HTTP message when it holds one."""

    filename: str
    offset: int | None
    length: int | None
    warc_type: str
    headers: list[tuple[str, str]]
    block: bytes
    http_status: int | None = None
    http_headers: list[tuple[str, str]] | None = None
    payload: bytes = b""
    index: int = 0
    _lookup: dict[str, str] = field(default_factory=dict, repr=False)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first WARC header called ``name`` (case-insensitive)."""
        if not self._lookup:
            for k, v in self.headers:
                self._lookup.setdefault(k.lower(), v)
        return self._lookup.get(name.lower(), default)

    def http_header(self, name: str, default: str | None = None) -> str | None:
        """The first HTTP header called ``name`` (case-insensitive), when the record holds HTTP."""
        low = name.lower()
        for k, v in self.http_headers or ():
            if k.lower() == low:
                return v
        return default

    @property
    def url(self) -> str | None:
        uri = self.header("WARC-Target-URI")
        # wget writes the URI in angle brackets (WARC 1.0 grammar); nobody wants them.
        if uri and uri.startswith("<") and uri.endswith(">"):
            uri = uri[1:-1]
        return uri

    @property
    def date(self) -> str | None:
        return self.header("WARC-Date")

    @property
    def record_id(self) -> str | None:
        return self.header("WARC-Record-ID")

    @property
    def mime(self) -> str:
        """The payload's media type: the HTTP Content-Type for HTTP records, else the record's."""
        raw = self.http_header("Content-Type") if self.http_headers is not None else self.header("Content-Type")
        return (raw or "").split(";", 1)[0].strip().lower()

    @property
    def languages(self) -> list[str]:
        """ISO 639-3 codes Common Crawl identified (WET ``WARC-Identified-Content-Language``)."""
        raw = self.header("WARC-Identified-Content-Language") or ""
        return [c.strip() for c in raw.split(",") if c.strip()]


def parse_http_block(block: bytes) -> tuple[int | None, list[tuple[str, str]], int] | None:
    """Status, headers and header length of an HTTP message at the start of ``block``, or None.

    Requests have no status (None). Header bytes are decoded as latin-1, the way HTTP/1.1
    defines them, so no byte is lost. Continuation lines are folded into the header above.
    """
    end = block.find(b"\r\n\r\n")
    sep = 4
    if end < 0:
        end = block.find(b"\n\n")
        sep = 2
        if end < 0:
            return None
    lines = block[:end].decode("latin-1").replace("\r\n", "\n").split("\n")
    first = lines[0]
    status: int | None = None
    if first.startswith("HTTP/"):
        parts = first.split(None, 2)
        if len(parts) >= 2 and parts[1].isdigit():
            status = int(parts[1])
    elif not (" HTTP/" in first or first.endswith("HTTP/0.9")):
        return None
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and headers:
            k, v = headers[-1]
            headers[-1] = (k, v + " " + line.strip())
        elif ":" in line:
            k, v = line.split(":", 1)
            headers.append((k.strip(), v.strip()))
    return status, headers, end + sep


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    pos = 0
    while pos < len(body):
        eol = body.find(b"\r\n", pos)
        if eol < 0:
            break
        size_text = body[pos:eol].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return body  # not really chunked, whatever the header said: keep the bytes as stored
        if size == 0:
            break
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2
    return bytes(out)


def decode_payload(record: Record) -> bytes:
    """The HTTP body with transfer and content encodings undone (bytes as stored when that fails)."""
    body = record.payload
    if (record.http_header("Transfer-Encoding") or "").lower().find("chunked") >= 0:
        body = _dechunk(body)
    encoding = (record.http_header("Content-Encoding") or "").lower().strip()
    try:
        if encoding in ("gzip", "x-gzip"):
            return zlib.decompress(body, 47)
        if encoding == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:
                return zlib.decompress(body, -15)
        if encoding == "br":
            import brotli

            return bytes(brotli.decompress(body))
    except Exception:
        return body
    return body


def _sha1_b32(data: bytes) -> str:
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _digest_ok(declared: str | None, data: bytes) -> bool:
    if not declared or ":" not in declared:
        return True
    algo, value = declared.split(":", 1)
    if algo.lower() != "sha1":
        return True  # only sha1 is what Common Crawl writes; other algorithms are not checked
    value = value.strip()
    if len(value) == 40:  # some writers use hex
        return hashlib.sha1(data).hexdigest() == value.lower()
    return _sha1_b32(data) == value.upper()


class _CountingReader:
    """Replays the sniffed head, then reads the source; counts every byte handed to fastwarc.

    fastwarc asks a Python stream for ``tell()`` once, so a pipe (which cannot tell) is wrapped.
    """

    def __init__(self, head: bytes, source: BinaryIO) -> None:
        self._head = head
        self._source = source
        self.total = 0

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0 or size >= len(self._head):
                chunk, self._head = self._head, b""
            else:
                chunk, self._head = self._head[:size], self._head[size:]
        else:
            chunk = self._source.read(size)
        self.total += len(chunk)
        return chunk

    def tell(self) -> int:
        return self.total

    def seek(self, offset: int, whence: int = 0) -> int:
        if (whence, offset) in ((0, self.total), (1, 0)):
            return self.total
        raise OSError("seek is not supported on this stream")

    def close(self) -> None:
        """The caller owns the source and closes it."""


def _sniff(head: bytes, name: str) -> bool:
    """True when the data is gzipped; raises InputError for ARC files and things that are not WARC."""
    gz = head[:2] == _GZIP_MAGIC
    text = head
    if gz:
        try:
            text = zlib.decompressobj(47).decompress(head, 512)
        except zlib.error as exc:
            raise InputError(f"{name}: not a readable gzip file at offset 0 ({exc})") from None
    stripped = text.lstrip(b"\r\n")
    if stripped.startswith(b"filedesc:"):
        raise InputError(
            f"{name}: this is an ARC file, not WARC; parse reads WARC/WAT/WET only "
            "(convert it with warcio's `warcio recompress` or read it with another tool)"
        )
    if stripped and not stripped.startswith(b"WARC/"):
        raise InputError(f"{name}: not a WARC file at offset 0 (it starts {stripped[:16]!r})")
    return gz


def _record_end(path: Path, offset: int, gz: bool) -> int | None:
    """Where the record at ``offset`` ends in the file, found by reading it again (None if unsure)."""
    try:
        with path.open("rb") as f:
            f.seek(offset)
            if gz:
                d = zlib.decompressobj(31)
                consumed = 0
                while not d.eof:
                    chunk = f.read(_HEAD)
                    if not chunk:
                        return None
                    d.decompress(chunk)
                    consumed += len(chunk)
                return offset + consumed - len(d.unused_data)
            data = f.read(_HEAD)
            head_end = data.find(b"\r\n\r\n")
            if head_end < 0:
                return None
            length = None
            for line in data[:head_end].split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1].strip())
            if length is None:
                return None
            return offset + head_end + 4 + length + 4
    except (OSError, ValueError, zlib.error):
        return None


def iter_records(
    source: str | Path | BinaryIO,
    *,
    name: str | None = None,
    skip_bad_records: bool = False,
    on_skip: Callable[[str], None] | None = None,
    verify_digests: bool = False,
    parse_http: bool = True,
) -> Iterator[Record]:
    """Every whole record of ``source`` (a path, ``"-"`` for stdin, or a binary file object).

    ``verify_digests`` checks sha1 block and payload digests and treats a mismatch as a bad
    record. ``on_skip`` receives one line per skipped record (default: stderr).
    """
    report = on_skip or (lambda msg: print(msg, file=sys.stderr, flush=True))
    path: Path | None = None
    if isinstance(source, str | Path):
        if str(source) == "-":
            stream: BinaryIO = sys.stdin.buffer
            label = name or "<stdin>"
        else:
            path = Path(source)
            label = name or str(source)
            try:
                stream = path.open("rb")
            except OSError as exc:
                raise InputError(f"{label}: cannot open ({exc.strerror})") from None
    else:
        stream = source
        label = name or str(getattr(source, "name", "<stream>"))
    try:
        yield from _iter(stream, label, path, skip_bad_records, report, verify_digests, parse_http)
    finally:
        if path is not None:
            stream.close()


def _iter(
    stream: BinaryIO,
    label: str,
    path: Path | None,
    skip_bad: bool,
    report: Callable[[str], None],
    verify: bool,
    parse_http: bool,
) -> Iterator[Record]:
    from fastwarc.stream_io import GzipReader
    from fastwarc.warc import ArchiveIterator

    head = stream.read(_HEAD)
    if not head:
        return
    gz = _sniff(head, label)
    counting = _CountingReader(head, stream)
    pending: Record | None = None
    one_stream = False  # a gzip file that is one member for many records
    index = 0

    def bad(offset: int | None, why: str) -> None:
        where = f"offset {offset}" if offset is not None else "an unknown offset"
        msg = f"{label}: bad WARC record at {where} (record {index + 1}): {why}"
        if not skip_bad:
            raise InputError(msg + "; the records before it were read, pass --skip-bad-records to go on past it")
        report(f"parse: skipped {msg}")

    # fastwarc's own format detection wants a seekable stream (stdin is not): say it ourselves.
    inner: Any = GzipReader(counting) if gz else counting
    iterator = ArchiveIterator(inner, parse_http=False, stream_detect=False)
    # A second handle on a file checks that each gzip offset really starts a member.
    probe = path.open("rb") if (gz and path is not None) else None
    probe_size = path.stat().st_size if probe is not None and path is not None else 0
    try:
        while True:
            try:
                rec = next(iterator)
            except StopIteration:
                break
            except (OSError, ValueError) as exc:
                after = pending.offset if pending is not None else None
                if pending is not None:
                    if path is not None and pending.offset is not None and not one_stream:
                        end = _record_end(path, pending.offset, gz)
                        pending.length = end - pending.offset if end is not None else None
                    else:
                        pending.length = None
                    yield pending
                    pending = None
                where = f"after the record at offset {after}" if after is not None else "at offset 0"
                msg = f"{label}: corrupt or truncated WARC {where} (record {index + 1}): {exc}"
                if not skip_bad:
                    raise InputError(msg + "; the records before it were read") from None
                report(f"parse: skipped the rest of {msg}")
                return
            offset: int | None = rec.stream_pos
            if gz and not one_stream and probe is not None and offset is not None:
                probe.seek(offset)
                if offset >= probe_size or probe.read(2) != _GZIP_MAGIC:
                    one_stream = True
                    report(
                        f"parse: {label} is one gzip stream, not one member per record; "
                        "offsets after the first record cannot locate records"
                    )
            if pending is not None:
                if gz and offset is not None and offset == pending.offset:
                    if not one_stream:
                        report(
                            f"parse: {label} is one gzip stream, not one member per record; "
                            "offsets after the first record cannot locate records"
                        )
                    one_stream = True
                if one_stream:
                    pending.offset = pending.length = None
                    offset = None
                else:
                    assert offset is not None and pending.offset is not None
                    pending.length = offset - pending.offset
                    if pending.length <= 0:
                        pending.offset = pending.length = None
                yield pending
                pending = None
            elif one_stream:
                offset = None
            headers = list(rec.headers.items())
            declared_text = rec.headers.get("Content-Length")
            block = rec.reader.read()
            declared = int(declared_text) if declared_text and declared_text.strip().isdigit() else None
            if declared is None:
                bad(offset, "the WARC header is cut short or has no Content-Length")
                index += 1
                continue
            if len(block) < declared:
                bad(offset, f"truncated: {len(block)} of {declared} bytes")
                index += 1
                continue
            wtype = rec.headers.get("WARC-Type") or "unknown"
            record = Record(label, offset, None, wtype, headers, block, payload=block, index=index)
            if parse_http and wtype in ("response", "request", "revisit") and block:
                parsed = parse_http_block(block)
                if parsed is not None:  # else the block is kept whole as the payload
                    record.http_status, record.http_headers, hlen = parsed
                    record.payload = block[hlen:]
            if verify and not _digest_ok(record.header("WARC-Block-Digest"), block):
                bad(offset, "WARC-Block-Digest does not match the block")
                index += 1
                continue
            # A revisit's payload digest names the payload of the capture it revisits.
            if verify and wtype != "revisit" and record.http_headers is not None and not _digest_ok(
                record.header("WARC-Payload-Digest"), record.payload
            ):
                bad(offset, "WARC-Payload-Digest does not match the payload")
                index += 1
                continue
            pending = record
            index += 1
        if pending is not None:
            if one_stream or pending.offset is None:
                pending.length = None
            else:
                pending.length = counting.total - pending.offset
            if pending.length is not None and pending.length <= 0:
                pending.offset = pending.length = None
            yield pending
    finally:
        if probe is not None:
            probe.close()
