"""Read WARC, WAT and WET files (gzipped or not, a path or stdin) into records with their locations.

::

    for rec in iter_records("x.warc.gz"):
        rec.offset, rec.length          # the location triple, with the file name
        rec.warc_type, rec.url, rec.http_status, rec.http_headers, rec.payload

Records are framed here, over :mod:`ccrawl.warc.source` (which inflates gzip members one by one),
because what a user of Common Crawl needs is exactly what a general reader glosses over:

* **locations**: ``offset`` is where the record starts in the file as stored (its gzip member
  for ``.gz``) and ``length`` covers its member(s), so ``(filename, offset, length)`` is the range
  ``fetch`` reads. Empty gzip members (``gzip.compress(b'')``) add nothing and belong to no record
  (fastwarc stops at one). A gzipped file that is one stream
  rather than one member per record (non-chunked gzip) cannot be cut that way: such records get
  ``None``, said once on ``on_skip``.
* **whole records only**: a record must be ``WARC/`` + header + ``Content-Length`` bytes +
  CRLF CRLF. A block shorter than its Content-Length, a Content-Length that is not followed by the
  end of the record (it lied, either way), a header that cannot be parsed, or a gzip member that
  does not inflate is a bad record: by default :class:`~ccrawl.errors.InputError` naming the file
  and the offset, after every whole record before it has been yielded.
* ``skip_bad_records=True`` reports each bad record through ``on_skip`` (default: stderr) and
  **resynchronises**: at the next gzip member for ``.gz``, at the next ``WARC/1.`` line for plain
  WARC. At the end one line counts what was skipped, in records and in bytes of the file: every
  record a run of damaged members held is counted (and named, one line each), and where the damaged
  bytes do not show how many records they held the count says "at least" (:func:`~ccrawl.warc.source.survey`).
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
from typing import BinaryIO

from ccrawl.errors import InputError
from ccrawl.warc.inflate import MemberInflater
from ccrawl.warc.source import GzipSource, Lost, PlainSource, Seam, Source

__all__ = ["DECODED_LIMIT", "Decoded", "Record", "decode_body", "decode_payload", "iter_records", "parse_http_block"]

_GZIP_MAGIC = b"\x1f\x8b"
#: How every ``on_skip`` line about one skipped record begins (the closing tally and notes do not).
SKIPPED = "parse: skipped "
_HEAD = 1 << 16


@dataclass(slots=True)
class Record:
    """One WARC record: where it sits, its WARC headers, and its HTTP message when it holds one."""

    filename: str
    offset: int | None
    length: int | None
    warc_type: str
    headers: list[tuple[str, str]]
    http_head: bytes = b""  # the HTTP message's header bytes, blank line included; b"" when not read as HTTP
    http_status: int | None = None
    http_headers: list[tuple[str, str]] | None = None
    payload: bytes = b""
    index: int = 0
    _lookup: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def block(self) -> bytes:
        """The record's block: ``http_head`` and ``payload`` (joined on each call when both are there)."""
        return self.http_head + self.payload if self.http_head else self.payload

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


#: The most bytes a payload is inflated to: the crawler's cap on what it decodes for extraction
#: (``ccrawl.recrawl.extractproc.RENDER_LIMIT``; a test keeps the two equal). A compression bomb
#: stops here, and :class:`Decoded` says it was cut.
DECODED_LIMIT = 10 * 1024 * 1024


@dataclass(slots=True)
class Decoded:
    """A payload with its encodings undone, and whether it was cut at the limit."""

    data: bytes
    truncated: bool = False
    limit: int = DECODED_LIMIT

    @property
    def note(self) -> str | None:
        """The line a row and stderr carry when the payload was cut (None when whole)."""
        if not self.truncated:
            return None
        return f"decoded body cut at {self.limit} bytes (it inflates to more; a compression bomb?)"


def decode_body(record: Record, limit: int = DECODED_LIMIT) -> Decoded:
    """The HTTP body with transfer and content encodings undone, inflated to at most ``limit`` bytes.

    A body that does not decode is returned as stored. Only inflating is bounded: an identity
    body is already whole in the record.
    """
    body = record.payload
    if (record.http_header("Transfer-Encoding") or "").lower().find("chunked") >= 0:
        body = _dechunk(body)
    encoding = (record.http_header("Content-Encoding") or "").lower().strip()
    want = limit + 1  # one byte past the limit tells a cut body from one of exactly ``limit``
    try:
        if encoding in ("gzip", "x-gzip"):
            out = zlib.decompressobj(47).decompress(body, want)
        elif encoding == "deflate":
            try:
                out = zlib.decompressobj().decompress(body, want)
            except zlib.error:
                out = zlib.decompressobj(-15).decompress(body, want)
        elif encoding == "br":
            import brotli

            out = bytes(brotli.Decompressor().process(body, output_buffer_limit=want))
        else:
            return Decoded(body, False, limit)
    except Exception:
        return Decoded(body, False, limit)
    if len(out) > limit:
        return Decoded(out[:limit], True, limit)
    return Decoded(out, False, limit)


def decode_payload(record: Record, limit: int = DECODED_LIMIT) -> bytes:
    """The HTTP body with encodings undone (bytes as stored when that fails), cut at ``limit``."""
    return decode_body(record, limit).data


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


def _read_head(stream: BinaryIO) -> bytes:
    """The first 64 KiB (or all there is): a socket or raw pipe may hand out less per read."""
    head = stream.read(_HEAD)
    while head and len(head) < _HEAD:
        more = stream.read(_HEAD - len(head))
        if not more:
            break
        head += more
    return head


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
        # Never quote the bytes: a client of `ccrawl serve` could read the start of any file that way.
        if gz:
            raise InputError(f"{name}: a gzip file but not a WARC (no WARC/1.x header at offset 0 of its data)")
        raise InputError(f"{name}: not a WARC or gzip file (no WARC/1.x header at offset 0)")
    return gz


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


_MAX_HEADER = 1 << 20  # a WARC header longer than this is not one
_BREAKS = b"\r\n"


@dataclass(slots=True)
class _Bad:
    """A record that cannot be read: why, and whether reading may go on after it."""

    why: str
    resync: bool = True  # False: the record was framed fine (a digest), go on at its end
    seam: Seam | None = None  # the damaged member(s) the record runs into


@dataclass(slots=True)
class _Frame:
    headers: list[tuple[str, str]]
    start: int  # where the block starts
    block_end: int
    end: int  # past the record's trailing line breaks


def _parse_header(raw: bytes) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    for line in raw.decode("utf-8", errors="replace").split("\r\n")[1:]:
        if line[:1] in (" ", "\t") and headers:
            k, v = headers[-1]
            headers[-1] = (k, v + " " + line.strip())
        elif ":" in line:
            k, v = line.split(":", 1)
            headers.append((k.strip(), v.strip()))
    return headers


def _frame(src: Source, pos: int) -> _Frame | _Bad:
    """The record at logical ``pos``: header, block and where it ends, or why it is not one."""
    src.ensure(pos + 8)
    if src.take(pos, pos + 5) != b"WARC/":
        return _Bad("no WARC record starts here (no WARC/1.x header)")  # the bytes are not quoted: see _sniff
    head_end = src.find(b"\r\n\r\n", pos, pos + _MAX_HEADER)
    if head_end < 0:
        if src.end - pos >= _MAX_HEADER:
            return _Bad("no end to the WARC header within 1 MiB")
        return _Bad("the WARC header is cut short or has no Content-Length")
    headers = _parse_header(src.take(pos, head_end))
    declared = _content_length(headers)
    if declared is None:
        return _Bad("the WARC header is cut short or has no Content-Length")
    start = head_end + 4
    block_end = start + declared
    if not src.ensure(block_end):
        got = max(0, src.end - start)
        seam = src.seam_in(pos + 1, src.end)
        if seam is not None:
            return _Bad(_seam_text(seam), seam=seam)
        return _Bad(f"truncated: {got} of {declared} bytes")
    src.ensure(block_end + 4)
    end = block_end
    src.ensure(block_end + 16)
    # The line breaks after the block, but not past the end of the member that completes them: a
    # record that fills its member keeps the member's location (the fast path frames it alone).
    while end < block_end + 16 and not (end >= block_end + 4 and src.member_end(end)) \
            and src.take(end, end + 1) in (b"\r", b"\n"):
        end += 1
    if src.take(block_end, end) != b"\r\n\r\n":
        # Some writers end a record with less than CRLF CRLF; accept that only when the next
        # record (or the end) follows, else the Content-Length does not say where the block ends.
        src.ensure(end + 5)
        after = src.take(end, end + 5)
        if after and after != b"WARC/":
            return _Bad(
                f"the Content-Length ({declared}) does not end the block: neither CRLF CRLF nor a WARC/1.x header"
                " follows it"
            )
    seam = src.seam_in(pos + 1, end)
    if seam is not None and not (seam.pos == end and src.file_span(pos, end)[1] is not None):
        return _Bad(_seam_text(seam), seam=seam)
    return _Frame(headers, start, block_end, end)


def _content_length(headers: list[tuple[str, str]]) -> int | None:
    """The first Content-Length, when it is ASCII digits (``isdigit`` alone takes ``'²'``)."""
    declared = next((v for k, v in headers if k.lower() == "content-length"), "")
    return int(declared) if declared.isascii() and declared.isdigit() else None


def _whole_member(fast: MemberInflater) -> _Frame | None:
    """The record that fills the member held by ``fast`` exactly (``WARC/``, header, block, CRLF CRLF,
    as Common Crawl writes one record a member), in positions inside the member; else None.

    It frames what :func:`_frame` would, with the same rules, so the record is the one the window
    path gives; anything else (a bad header, two records, another trailer) is left to that path.
    """
    if fast.slice(0, 5) != b"WARC/":
        return None
    head_end = fast.find(b"\r\n\r\n", 0, _MAX_HEADER)
    if head_end < 0:
        return None
    headers = _parse_header(fast.slice(0, head_end))
    declared = _content_length(headers)
    if declared is None:
        return None
    start = head_end + 4
    block_end = start + declared
    if block_end + 4 != fast.made or fast.slice(block_end, block_end + 4) != b"\r\n\r\n":
        return None
    return _Frame(headers, start, block_end, block_end + 4)


def _seam_text(seam: Seam) -> str:
    seam.reported = True
    first = seam.lost[0] if seam.lost else None
    size = first.size if first is not None else seam.size
    return f"{seam.reason} (the member at offset {seam.offset}, {size} bytes{_more_records(first)})"


def _more_records(part: Lost | None) -> str:
    """What a skipped member's line adds when it held other than exactly one record."""
    if part is None or (part.exact and part.records == 1):
        return ""
    if not part.exact:
        plural = "s" * (part.records != 1)
        return f"; at least {part.records} record{plural}: its damaged bytes do not show how many"
    return f"; {part.records} records"


def _iter(
    stream: BinaryIO,
    label: str,
    path: Path | None,
    skip_bad: bool,
    report: Callable[[str], None],
    verify: bool,
    parse_http: bool,
) -> Iterator[Record]:
    head = _read_head(stream)
    if not head:
        return
    gz = _sniff(head, label)
    src: Source = GzipSource(stream, head) if gz else PlainSource(stream, head)
    index = 0
    skipped = skipped_bytes = 0
    bound = False  # the count of skipped records is a lower bound
    one_stream = False
    pos = 0

    def file_pos(logical: int | None) -> int | None:
        if logical is None:
            return src.raw_offset if isinstance(src, GzipSource) else src.end
        return src.file_offset(logical)

    def skip(bad_at: int, why: str, resume: int | None, seam: Seam | None = None) -> None:
        nonlocal skipped, skipped_bytes, index
        where = file_pos(bad_at)
        where_text = f"offset {where}" if where is not None else f"{bad_at} bytes into the inflated stream"
        msg = f"{label}: bad WARC record at {where_text} (record {index + 1}): {why}"
        if not skip_bad:
            raise InputError(msg + "; the records before it were read, pass --skip-bad-records to go on past it")
        stop = file_pos(resume)
        skipped += 1
        if where is not None and stop is not None:
            skipped_bytes += stop - where
        if resume is None:
            report(f"{SKIPPED}the rest of {msg}")
        else:
            report(f"{SKIPPED}{msg}")
        if seam is not None:  # the record ran into damaged members: the others they held are lost too
            more_parts(seam, seam.lost[1:])
            bound_by(seam.lost[:1])
            extra = max(0, seam.lost[0].records - 1) if seam.lost else 0
            skipped += extra
            index += extra

    def bound_by(parts: list[Lost]) -> None:
        nonlocal bound
        bound = bound or not all(part.exact for part in parts)

    def more_parts(seam: Seam, parts: list[Lost]) -> None:
        """One line for each further member a damaged stretch held, numbered as records."""
        nonlocal skipped, index
        for part in parts:
            if part.records or not part.exact:
                report(f"{SKIPPED}{_part_text(seam, part, label, index + 1)}")
            skipped += part.records
            index += part.records
        bound_by(parts)

    def seams_before() -> None:
        nonlocal skipped, skipped_bytes, index
        for seam in src.seams:  # a damaged member between records
            if seam.pos <= pos and not seam.reported:
                seam.reported = True
                first = seam.lost[0] if seam.lost else Lost(seam.offset, seam.size, 1)
                _report_seam(seam, first, label, index, skip_bad, report)
                skipped += first.records
                index += first.records
                bound_by([first])
                more_parts(seam, seam.lost[1:])
                skipped_bytes += seam.size

    members = src if isinstance(src, GzipSource) and src.fast is not None else None

    def from_member() -> tuple[Record, int] | None:
        """At a member boundary with nothing inflated past it: the record of a member that holds one
        whole record, framed where the inflater put it (only its parts are copied out), and its end."""
        assert members is not None
        seams_before()
        fast = members.inflate_member()
        if fast is None:
            return None
        whole = _whole_member(fast)
        if whole is None:
            members.spill_member()  # into the window, for the path below
            return None
        members.pass_member()
        offset, length = src.file_span(pos, pos + whole.end)
        return _record(label, offset, length, whole, index, parse_http, fast.find, fast.slice), pos + whole.end

    while True:
        got = from_member() if members is not None and pos == src.end else None
        if got is None:
            while src.ensure(pos + 1) and src.take(pos, pos + 1) in (b"\r", b"\n"):
                pos += 1
            seams_before()
            if not src.ensure(pos + 1):
                break
            frame = _frame(src, pos)
            if isinstance(frame, _Bad):
                resume = src.next_resume(pos)
                skip(pos, frame.why, resume, frame.seam)
                index += 1
                if resume is None:
                    break
                src.release(resume)
                pos = resume
                continue
            offset, length = src.file_span(pos, frame.end)
            if gz and offset is None and not one_stream:
                one_stream = True
                report(
                    f"parse: {label} is one gzip stream, not one member per record; "
                    "offsets after the first record cannot locate records"
                )
            if offset is None:
                length = None
            got = _record(label, offset, length, frame, index, parse_http, src.find, src.take), frame.end
        record, end = got
        problem = _digest_problem(record) if verify else None
        if problem is not None:
            skip(pos, problem, end)
        else:
            yield record
        index += 1
        pos = end
        src.release(pos)
    if skipped or bound:
        least = "at least " if bound else ""
        report(f"parse: {label}: skipped {least}{skipped} record{'s' * (skipped != 1)} ({skipped_bytes} bytes)")


def _report_seam(seam: Seam, first: Lost, label: str, index: int, skip_bad: bool,
                 report: Callable[[str], None]) -> None:
    msg = f"{label}: bad WARC record at offset {seam.offset} (record {index + 1}): {seam.reason}"
    if not skip_bad:
        raise InputError(msg + "; the records before it were read, pass --skip-bad-records to go on past it")
    report(f"{SKIPPED}{msg} ({first.size} bytes{_more_records(first)})")


def _part_text(seam: Seam, part: Lost, label: str, number: int) -> str:
    """The line for a further member of a damaged stretch (its header or its data damaged too)."""
    return (f"{label}: bad WARC record at offset {part.offset} (record {number}): a gzip member in the damaged "
            f"stretch after offset {seam.offset} ({part.size} bytes{_more_records(part)})")


def _record(label: str, offset: int | None, length: int | None, frame: _Frame, index: int, parse_http: bool,
            find: Callable[[bytes, int, int], int], take: Callable[[int, int], bytes]) -> Record:
    """The record ``frame`` locates, its parts copied out with ``take`` (the block is never copied whole)."""
    wtype = next((v for k, v in frame.headers if k.lower() == "warc-type"), "") or "unknown"
    record = Record(label, offset, length, wtype, frame.headers, index=index)
    start, block_end = frame.start, frame.block_end
    if parse_http and wtype in ("response", "request", "revisit") and block_end > start:
        # parse_http_block over the bytes up to the block's first blank line finds what it finds
        # over the whole block: the first CRLF CRLF, else the first LF LF.
        head_end, sep = find(b"\r\n\r\n", start, block_end), 4
        if head_end < 0:
            head_end, sep = find(b"\n\n", start, block_end), 2
        head = take(start, head_end + sep) if head_end >= 0 else b""
        parsed = parse_http_block(head) if head else None
        if parsed is not None:  # else the block is kept whole as the payload
            record.http_status, record.http_headers, hlen = parsed
            record.http_head = head
            record.payload = take(start + hlen, block_end)
            return record
    record.payload = take(start, block_end)
    return record


def _digest_problem(record: Record) -> str | None:
    if not _digest_ok(record.header("WARC-Block-Digest"), record.block):
        return "WARC-Block-Digest does not match the block"
    # A revisit's payload digest names the payload of the capture it revisits.
    if record.warc_type != "revisit" and record.http_headers is not None and not _digest_ok(
        record.header("WARC-Payload-Digest"), record.payload
    ):
        return "WARC-Payload-Digest does not match the payload"
    return None
