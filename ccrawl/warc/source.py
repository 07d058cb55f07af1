"""The bytes a WARC reader frames records from: a file as stored, or its gzip members inflated.

A :class:`Source` is one logical byte stream (the WARC text) with a window of it in memory.
:class:`PlainSource` is the file itself: a logical position is a file offset. :class:`GzipSource`
inflates member after member, so an empty member (``gzip.compress(b'')``, which stops fastwarc
and zlib's own multi-member reader) is simply a member that adds no bytes. It remembers where
every non-empty member starts and ends, in logical and in file offsets, which is how a record
gets its ``(offset, length)`` in the file; and it never lets a damaged member's bytes into the
stream: a member that does not inflate (or is cut short) becomes a :class:`Seam` at the logical
position where its bytes would have gone, naming the file offset and how many bytes were
dropped, and inflating resumes at the next gzip header in the file.

What lies between is surveyed (:func:`survey`) so that the records lost are counted, not guessed: a
run of members whose headers are damaged is one skipped stretch of the file, but each such member's
deflate data usually survives, so the stretch is walked member by member (a member is recognised by
inflating from 10 bytes past where it starts, the usual header size, and checking the CRC-32 and size
in its trailer). A member whose data does not inflate counts as one record; where a stretch holds
bytes that cannot be told apart into members (header and data both destroyed), the count is a lower
bound and the seam says so.

Inflating is bounded: a call produces at most ``chunk`` bytes, and only as many calls are made as
the reader asks bytes for, so a gzip bomb costs what the reader keeps, not what it would inflate to.

With the native core and libdeflate, a member that starts in the compressed bytes read so far is
first offered whole to :mod:`ccrawl.warc.inflate` (one call a member instead of one per 16 KiB of
input, and a CRC-checked member or nothing). What it does not take (cut by the read, damaged, over
``FAST_CAP`` = 2 MiB inflated) the streaming inflater takes from the same byte, so seams, bounds and
locations are the same either way; a call then produces at most 2 MiB.

At a member boundary with the window empty, the reader goes one step further
(:meth:`GzipSource.inflate_member`): the member stays in the inflater's buffer, and when it holds
exactly one record, as Common Crawl writes them, the record's parts are copied out from there and the
window never holds it (:meth:`GzipSource.pass_member`); any other member is appended to the window
(:meth:`GzipSource.spill_member`) and framed as before.
"""

from __future__ import annotations

import bisect
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from ccrawl.warc.inflate import INFLATE_ERRORS, ZLIB_API, MemberInflater, native_inflater

__all__ = ["GzipSource", "Lost", "PlainSource", "Seam", "Source", "survey"]

_CHUNK = 1 << 20
_FEED = 1 << 14
# The fast path is offered a member only with this much compressed input after its start (or the
# file's end): members are ~30 KB compressed in Common Crawl, so few are cut by a read.
_FAST_LOOKAHEAD = 1 << 19
_GZIP_HEADER = b"\x1f\x8b\x08"
# A skipped stretch is surveyed over at most this many of its bytes (past it the count is a lower
# bound), and a member found in it is inflated to at most _REMNANT_CAP bytes.
_SURVEY_MAX = 4 << 20  # tried at every byte, ~2 s a MiB: a damage path, bounded
_REMNANT_CAP = 16 << 20
_PROBE = 256  # compressed bytes tried first: a position where no deflate stream starts fails in these
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*([0-9]+)[ \t]*\r\n", re.IGNORECASE)


@dataclass(slots=True, frozen=True)
class Lost:
    """One member (or stretch of bytes) of a skipped region: its file offset, size, and the records it held."""

    offset: int
    size: int
    records: int
    exact: bool = True  # False: "at least ``records``" (bytes that could not be told apart into members)


@dataclass(slots=True)
class Seam:
    """Where a damaged member stops: logical positions, and the file offset and size of what was skipped."""

    pos: int
    start: int  # logical position where the damaged member's bytes began
    offset: int
    size: int
    reason: str
    reported: bool = False
    lost: list[Lost] = field(default_factory=list)  # what the skipped bytes held, member by member

    @property
    def records(self) -> int:
        """The records lost in the skipped bytes (a lower bound unless :attr:`exact`)."""
        return sum(part.records for part in self.lost)

    @property
    def exact(self) -> bool:
        return all(part.exact for part in self.lost)


def _header_size(data: bytes | bytearray, p: int) -> int | None:
    """The size of the gzip header at ``data[p]`` when it is one (its flags read), else None."""
    if data[p : p + 3] != _GZIP_HEADER or len(data) < p + 10:
        return None
    flags, at = data[p + 3], p + 10
    if flags & 0xE0:
        return None
    if flags & 0x04:  # FEXTRA
        if len(data) < at + 2:
            return None
        at += 2 + int.from_bytes(data[at : at + 2], "little")
    for bit in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            end = data.find(b"\0", at)
            if end < 0:
                return None
            at = end + 1
    if flags & 0x02:  # FHCRC
        at += 2
    return at - p


def _remnant(data: bytes, p: int, header: int) -> tuple[int, bytes] | None:
    """The member at ``data[p]`` when its deflate data, ``header`` bytes in, inflates whole and matches
    its trailer's CRC-32 and size: where it ends and what it inflates to. Else None."""
    s = p + header
    if s + 10 > len(data):  # the least deflate stream (2 bytes) and its trailer
        return None
    d = zlib.decompressobj(-15)
    view = memoryview(data)
    try:
        out = d.decompress(view[s : s + _PROBE], _REMNANT_CAP)
        fed = min(_PROBE, len(data) - s)
        if not d.eof and not d.unconsumed_tail and s + fed < len(data):
            out += d.decompress(view[s + fed :], _REMNANT_CAP - len(out))
            fed = len(data) - s
    except zlib.error:
        return None
    if not d.eof:
        return None
    end = s + fed - len(d.unused_data)
    if end + 8 > len(data):
        return None
    crc, size = struct.unpack_from("<II", data, end)
    if crc != zlib.crc32(out) or size != len(out) & 0xFFFFFFFF:
        return None
    return end + 8, out


def _records_in(text: bytes) -> tuple[int, bool]:
    """How many WARC records ``text`` (a member's inflated bytes) holds, and whether that is exact."""
    n = pos = 0
    while True:
        while text[pos : pos + 1] in (b"\r", b"\n") and pos < len(text):
            pos += 1
        if pos >= len(text):
            return n, True
        if not text.startswith(b"WARC/", pos):
            return n + 1, False
        head_end = text.find(b"\r\n\r\n", pos)
        found = _CONTENT_LENGTH.search(text, pos, head_end + 2) if head_end >= 0 else None
        n += 1
        if found is None:
            return n, False
        pos = head_end + 4 + int(found.group(1))
        if pos > len(text):  # the record goes on in another member
            return n, False


def _partial(data: bytes, s: int) -> bytes:
    """What the deflate data at ``data[s]`` inflates to before it fails (byte-exact at the failure)."""
    d, out = zlib.decompressobj(-15), bytearray()
    for i in range(s, len(data), 64):
        before = d.copy()
        try:
            out += d.decompress(data[i : i + 64])
        except zlib.error:
            d = before
            for j in range(i, min(i + 64, len(data))):
                try:
                    out += d.decompress(data[j : j + 1])
                except zlib.error:
                    break
            break
        if d.eof or len(out) > _REMNANT_CAP:
            break
    return bytes(out)


def _broken(data: bytes, header: int | None, stop: int) -> tuple[int, bool]:
    """The records lost in a member, ``data[:stop]``, whose data does not inflate whole, and whether
    that is exact: it is when what does inflate shows the record it breaks off in, and that record's
    end is the member's inflated size in the trailer (so it was the member's last, and nothing else
    hides in the stretch). Records whole before the break were read by the reader."""
    if header is None or stop < header + 8:
        return 1, False
    text = _partial(data[:stop], header)
    size = int.from_bytes(data[stop - 4 : stop], "little")
    pos = 0
    while True:
        while text[pos : pos + 1] in (b"\r", b"\n"):
            pos += 1
        if pos >= len(text) or not text.startswith(b"WARC/", pos):
            return 1, False
        head_end = text.find(b"\r\n\r\n", pos)
        found = _CONTENT_LENGTH.search(text, pos, head_end + 2) if head_end >= 0 else None
        if found is None:
            return 1, False
        pos = head_end + 4 + int(found.group(1)) + 4
        if pos & 0xFFFFFFFF == size:  # the member's last record: the one it breaks off in
            return 1, True
        if pos >= len(text):  # it breaks off in a record that is not its last
            return 1, False


def survey(data: bytes, offset: int, whole: bool = True, truncated: bool = False) -> list[Lost]:
    """What the skipped bytes ``data`` (starting at file ``offset``, with the damaged member) held.

    The stretch is walked member by member: a member whose data inflates whole (its header damaged)
    is counted by the records it holds; one whose data does not inflate runs to the next member found
    past it (tried at every byte), or the end, and counts as the record it breaks off in: exactly when
    its trailer's size confirms that record was its last (:func:`_broken`), else "at least". A member
    the file ends inside (``truncated``) loses the one record it breaks off in; the rest was never in
    the file. ``whole`` False: the stretch went on past ``data``, so its last part is a lower bound.
    """
    if truncated:
        return [Lost(offset, len(data), 1, whole)]
    lost: list[Lost] = []
    p, n = 0, len(data)
    while p < n:
        header = _header_size(data, p)
        tries = [10] if header in (None, 10) else [header, 10]
        found = next((got for h in tries if (got := _remnant(data, p, h)) is not None), None)
        if found is not None:
            end, text = found
            records, exact = _records_in(text)
            lost.append(Lost(offset + p, end - p, records, exact))
            p = end
            continue
        # The next member is one that inflates to something: an empty deflate stream followed by eight
        # zero bytes (an empty member's trailer) is too easily found in damaged bytes.
        q = next((r for r in range(p + 1, n - 18) if data[r + 10] & 6 != 6  # block type 3 is no deflate block
                  and (got := _remnant(data, r, 10)) is not None and got[1]), n)
        records, exact = _broken(data[p:], header, q - p)
        lost.append(Lost(offset + p, q - p, records, exact))
        p = q
    if lost and not whole:
        last = lost[-1]
        lost[-1] = Lost(last.offset, last.size, max(last.records, 1), False)
    return lost


class Source:
    """A window on a logical byte stream, read on demand; subclasses say where bytes come from."""

    def __init__(self, stream: BinaryIO, head: bytes) -> None:
        self.stream = stream
        self.head = head  # bytes already read from the stream (the sniffed start)
        self.base = 0  # logical position of buf[0]
        self.buf = bytearray()
        self.done = False  # nothing more will come
        self.seams: list[Seam] = []

    def _read_raw(self) -> bytes:
        if self.head:
            chunk, self.head = self.head, b""
            return chunk
        return self.stream.read(_CHUNK)

    def _more(self) -> bool:
        """Append more logical bytes (or a seam); False when the stream is finished."""
        raise NotImplementedError

    @property
    def end(self) -> int:
        """Logical position just past the bytes in memory."""
        return self.base + len(self.buf)

    def ensure(self, end: int) -> bool:
        """Read until the window reaches ``end``; False if the stream ends first."""
        while self.end < end:
            if self.done or not self._more():
                return False
        return True

    def take(self, start: int, end: int) -> bytes:
        # Through a memoryview: one copy (a bytearray slice would copy once more before bytes()).
        # The view lives only for this expression, so the buffer can grow or shrink again after.
        return bytes(memoryview(self.buf)[start - self.base : end - self.base])

    def find(self, needle: bytes, start: int, limit: int) -> int:
        """Logical position of ``needle`` at or after ``start`` and before ``limit``, else -1."""
        searched = start
        while True:
            i = self.buf.find(needle, searched - self.base, limit - self.base)
            if i >= 0:
                return self.base + i
            searched = max(start, self.end - len(needle) + 1)
            if self.end >= limit or self.done or not self._more():
                return -1

    def release(self, pos: int) -> None:
        """Forget the bytes before ``pos``: the reader will not ask for them again."""
        if pos > self.base:
            cut = min(pos, self.end) - self.base
            del self.buf[:cut]
            self.base += cut

    def seam_in(self, start: int, end: int) -> Seam | None:
        """The first seam at a logical position in ``[start, end]``."""
        for seam in self.seams:
            if start <= seam.pos <= end:
                return seam
        return None

    def file_span(self, start: int, end: int) -> tuple[int | None, int | None]:
        """File offset and length of logical ``[start, end)`` when it is a whole unit of the file."""
        return start, end - start

    def member_end(self, pos: int) -> bool:
        """True when logical ``pos`` is where a gzip member's bytes end."""
        return False

    def next_resume(self, after: int) -> int | None:
        """Where reading may start again after a bad record at ``after`` (None: nowhere known yet)."""
        raise NotImplementedError

    def file_offset(self, pos: int) -> int | None:
        """The file offset that logical ``pos`` stands for, when known."""
        return pos


class PlainSource(Source):
    """An uncompressed WARC: logical positions are file offsets."""

    def _more(self) -> bool:
        chunk = self._read_raw()
        if not chunk:
            self.done = True
            return False
        self.buf += chunk
        return True

    def next_resume(self, after: int) -> int | None:
        # A record starts on a line of its own with the version; a WARC/1.x inside a block is
        # possible but rare, and a later check (Content-Length, trailer) rejects a false start.
        hit = self.find(b"\nWARC/1.", after, 1 << 62)
        return hit + 1 if hit >= 0 else None


class GzipSource(Source):
    """A ``.warc.gz``: members inflated one after another; their bounds kept for locations."""

    def __init__(self, stream: BinaryIO, head: bytes) -> None:
        super().__init__(stream, head)
        self.fast = native_inflater()  # whole members in one call; None streams every member
        self.raw = b""  # compressed bytes read; raw[raw_pos:] is not inflated yet
        self.raw_pos = 0
        self.raw_offset = 0  # file offset of raw[raw_pos]
        self.member_raw = bytearray()  # compressed bytes of the current member inflated so far
        self.member_offset = 0  # file offset of the member being inflated
        self.member_start = 0  # logical position where its bytes start
        self.inflater: Any = None  # the streaming inflater of the current member, made when first fed
        self.file_eof = False
        self.starts: dict[int, int] = {}  # logical start of a non-empty member -> its file offset
        self.ends: dict[int, int] = {}  # logical end of a non-empty member -> file offset past it
        self.member_starts: list[int] = []  # logical starts of non-empty members, ascending

    def _fill_raw(self) -> bool:
        if self.file_eof:
            return False
        chunk = self._read_raw()
        if not chunk:
            self.file_eof = True
            return False
        self.raw = self.raw[self.raw_pos :] + chunk
        self.raw_pos = 0
        return True

    def _more(self) -> bool:
        while True:
            if self.raw_pos >= len(self.raw) and not self._fill_raw():
                if self.member_raw:
                    self._damage("truncated gzip member: the file ends inside it")
                    continue
                self.done = True
                return False
            if self.fast is not None and not self.member_raw:  # at a member's first byte
                took = self._whole_member(self.fast)
                if took is not None:
                    if took:
                        return True
                    continue
            # Fed a slice at a time: zlib copies what is left of its input into unused_data at
            # the end of every member, which for a whole chunk would be a megabyte per record.
            fed = memoryview(self.raw)[self.raw_pos : self.raw_pos + _FEED]
            if self.inflater is None:
                self.inflater = ZLIB_API.decompressobj(31)
            try:
                out = self.inflater.decompress(fed, _CHUNK)
            except INFLATE_ERRORS as exc:
                self._damage(f"corrupt gzip member ({str(exc).split(': ', 1)[-1]})")
                continue
            used = len(fed) - len(self.inflater.unconsumed_tail) - len(self.inflater.unused_data)
            self.member_raw += fed[:used]
            self.raw_pos += used
            self.raw_offset += used
            self.buf += out
            if self.inflater.eof:
                self._member_done()
            if out:
                return True

    def _whole_member(self, fast: MemberInflater) -> bool | None:
        """Inflate the member at ``raw_pos`` in one call: None if the streaming path must take it,
        else whether it added bytes."""
        self._fill_lookahead()
        ok, used, made = fast.member(self.raw, self.raw_pos, self.buf)
        if not ok:
            return None
        self._skip_raw(used)
        self._member_done()
        return made > 0

    def inflate_member(self) -> MemberInflater | None:
        """At a member boundary with the window empty: inflate the member there into the fast inflater.

        Returns the inflater, holding the member, when it took it whole; the caller then frames from it
        and calls :meth:`pass_member` (it copied what it keeps) or :meth:`spill_member` (the bytes go
        into the window, as :meth:`_more` would put them). None when the streaming path must take it.
        """
        if self.fast is None or self.member_raw or self.buf:
            return None
        self._fill_lookahead()
        ok, used, _ = self.fast.inflate(self.raw, self.raw_pos)
        if not ok:
            return None
        self._skip_raw(used)
        return self.fast

    def _fill_lookahead(self) -> None:
        """Read until a whole member can be offered from ``raw_pos`` (or the file ends)."""
        while len(self.raw) - self.raw_pos < _FAST_LOOKAHEAD and self._fill_raw():
            pass

    def _skip_raw(self, used: int) -> None:
        """Move past ``used`` compressed bytes that a whole-member call inflated."""
        self.raw_pos += used
        self.raw_offset += used

    def pass_member(self) -> None:
        """The member :meth:`inflate_member` gave was read from the inflater: the window moves past it."""
        assert self.fast is not None and not self.buf
        self.base += self.fast.made
        self._member_done()

    def spill_member(self) -> None:
        """The member :meth:`inflate_member` gave goes into the window."""
        assert self.fast is not None
        self.fast.spill(self.buf)
        self._member_done()

    def _member_done(self) -> None:
        """The member ended at ``raw_offset``: keep its bounds when it added bytes, then the next one."""
        if self.end > self.member_start:
            self.starts[self.member_start] = self.member_offset
            self.ends[self.end] = self.raw_offset
            self.member_starts.append(self.member_start)
        self._next_member()

    def _next_member(self) -> None:
        self.member_offset = self.raw_offset
        self.member_start = self.end
        self.member_raw = bytearray()
        self.inflater = None

    def _damage(self, reason: str) -> None:
        """Give up on the member being inflated and resume at the next gzip header after its start."""
        # What it inflated to so far stays (deflate output before an error is what was written);
        # the seam marks where it stops, and no record may span a seam.
        buf = bytearray(self.member_raw)
        buf += memoryview(self.raw)[self.raw_pos :]
        kept = bytearray()  # the skipped bytes, up to _SURVEY_MAX, for the survey
        base = 0  # offset of buf[0] in the skipped stretch
        while True:
            i = buf.find(_GZIP_HEADER, 1 if base == 0 else 0)  # not the damaged member's own header
            if i >= 0:
                rest = bytes(buf[i:])
                stop = base + i
                break
            cut = max(0, len(buf) - 2)  # a header may begin in the last two bytes
            kept += memoryview(buf)[: max(0, min(cut, _SURVEY_MAX - len(kept)))]
            del buf[:cut]
            base += cut
            chunk = b"" if self.file_eof else self._read_raw()
            if not chunk:
                self.file_eof = True
                rest, i, stop = b"", len(buf), base + len(buf)
                break
            buf += chunk
        kept += memoryview(buf)[: max(0, min(i, _SURVEY_MAX - len(kept)))]
        self.raw, self.raw_pos = rest, 0
        self.raw_offset = self.member_offset + stop
        lost = survey(bytes(kept), self.member_offset, whole=len(kept) == stop,
                      truncated=reason.startswith("truncated"))
        self.seams.append(Seam(self.end, self.member_start, self.member_offset, stop, reason, lost=lost))
        self._next_member()

    def release(self, pos: int) -> None:
        super().release(pos)
        if len(self.member_starts) > 1024:
            keep = bisect.bisect_left(self.member_starts, pos)
            for s in self.member_starts[:keep]:
                self.starts.pop(s, None)
            self.member_starts = self.member_starts[keep:]
            self.ends = {e: f for e, f in self.ends.items() if e >= pos}
            self.seams = [s for s in self.seams if s.pos >= pos]

    def file_span(self, start: int, end: int) -> tuple[int | None, int | None]:
        offset = self.starts.get(start)
        stop = self.ends.get(end)
        if offset is None or stop is None or stop <= offset:
            return offset, None
        return offset, stop - offset

    def member_end(self, pos: int) -> bool:
        return pos in self.ends

    def file_offset(self, pos: int) -> int | None:
        if pos in self.starts:
            return self.starts[pos]
        if pos == self.member_start:
            return self.member_offset
        return next((s.offset for s in self.seams if s.start == pos), None)

    def next_resume(self, after: int) -> int | None:
        while True:
            i = bisect.bisect_right(self.member_starts, after)
            if i < len(self.member_starts):
                return self.member_starts[i]
            if self.done or not self._more():
                return None
