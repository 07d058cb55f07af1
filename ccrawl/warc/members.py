"""Lists the gzip members of a multi-member stream (a ``.warc.gz``) as (offset, length) pairs.

A Common Crawl ``.warc.gz`` compresses each record into its own gzip member and concatenates
them, which is what makes a record addressable by (filename, offset, length) and fetchable with one
ranged GET. :func:`iter_members` walks such a stream and yields where each member starts and how
many compressed bytes it takes. For a file written that way (the WARC standard's recommendation,
and every Common Crawl file) the offsets are exactly the record offsets that fastwarc
(``record.stream_pos``) and warcio (``get_record_offset()``) report. A file that compresses several
records into one member (``example-bad-non-chunked.warc.gz`` in the corpus) has fewer members than
records, and this module reports the members: it never parses the WARC inside.

Memory stays bounded: the stream is read ``chunk_size`` bytes at a time and inflated 64 KiB at a
time into scratch output that is thrown away, so a file of any size, or a gzip bomb, costs about
one chunk. Inflating is unavoidable (gzip records no member length), so the scan runs
at zlib's inflate speed.

Offsets count from the first byte read from ``stream`` plus ``start``: pass the position the stream
was at (for example the start of a ranged read) to get file offsets.

Broken input raises :class:`ccrawl.errors.InputError` after every whole member before the break
has been yielded. The message names the offset of the member that could not be read:

- ``corrupt gzip member at offset N: <zlib's reason>; <hint>`` for bytes that are not gzip or fail
  to inflate (including trailing junk after the last member); the hint says the input is not gzip
  at all when N is the first offset, and where the file can be cut otherwise;
- ``truncated gzip member at offset N: the stream ends at byte M inside it``.

An empty stream has no members. ``iter_members`` is compiled (``csrc/gzmembers.pyx``, zlib's
``inflate`` into one reused buffer) when the native core is built; ``iter_members_py`` is the
pure-Python twin (``zlib.decompressobj(wbits=31)`` and ``unused_data``) with identical output.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import BinaryIO, Protocol

from ccrawl import accel
from ccrawl.errors import InputError

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_CHUNK_SIZE",
    "corrupt_error",
    "iter_members",
    "iter_members_py",
    "truncated_error",
]

DEFAULT_CHUNK_SIZE = 1 << 20
"""Bytes read from the stream at a time."""
MAX_CHUNK_SIZE = 1 << 30
"""zlib counts input in 32-bit unsigned ints, so one read stays well under 4 GiB."""

_GZIP_WBITS = 31  # 16 + 15: a gzip header and trailer around a deflate stream with a 32 KiB window
# Inflated bytes are only counted, never kept: 64 KiB of scratch per call stays in cache and under
# malloc's mmap threshold, which a chunk-sized output (1 MiB) is not.
_SCRATCH = 65536


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def _label(stream: object) -> str:
    name = getattr(stream, "name", None)
    return f"{name}: " if isinstance(name, str) else ""


def corrupt_error(stream: object, offset: int, start: int, reason: str) -> InputError:
    """The error for a member that is not gzip or does not inflate (shared with the native scan)."""
    if offset == start:
        hint = "expected a .warc.gz or another concatenation of gzip members"
    else:
        hint = f"the members before offset {offset} are whole, so the file can be cut there"
    return InputError(f"{_label(stream)}corrupt gzip member at offset {offset}: {reason}; {hint}")


def truncated_error(stream: object, offset: int, end: int) -> InputError:
    """The error for a stream that ends inside a member (shared with the native scan)."""
    return InputError(
        f"{_label(stream)}truncated gzip member at offset {offset}: the stream ends at byte {end} inside it; "
        "download the file again or drop the partial record"
    )


def _zlib_reason(exc: zlib.error) -> str:
    # zlib.error reads "Error -3 while decompressing data: incorrect header check"; the native
    # scan only has zlib's own message (the part after the colon), so both report that part.
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


def iter_members_py(
    stream: BinaryIO | _Readable, chunk_size: int = DEFAULT_CHUNK_SIZE, start: int = 0
) -> Iterator[tuple[int, int]]:
    """Yield (offset, length) of every gzip member in ``stream`` (pure-Python twin)."""
    if not 0 < chunk_size <= MAX_CHUNK_SIZE:
        raise ValueError(f"chunk_size must be between 1 and {MAX_CHUNK_SIZE} bytes, got {chunk_size}")
    return _scan(stream, chunk_size, start)


def _scan(stream: BinaryIO | _Readable, chunk_size: int, start: int) -> Iterator[tuple[int, int]]:
    member_start = start  # offset of the member being inflated
    fed = 0  # compressed bytes of the current member handed to the decompressor so far
    d = zlib.decompressobj(_GZIP_WBITS)
    pending = b""  # bytes read but not yet given to a decompressor
    while True:
        if not pending:
            pending = stream.read(chunk_size)
            if not pending:
                break
        fed += len(pending)
        data, pending = pending, b""
        try:
            # max_length bounds the inflated scratch; the rest waits in unconsumed_tail.
            d.decompress(data, _SCRATCH)
            while d.unconsumed_tail and not d.eof:
                d.decompress(d.unconsumed_tail, _SCRATCH)
        except zlib.error as exc:
            raise corrupt_error(stream, member_start, start, _zlib_reason(exc)) from None
        if d.eof:
            rest = d.unused_data
            length = fed - len(rest)
            yield member_start, length
            member_start += length
            fed = 0
            d = zlib.decompressobj(_GZIP_WBITS)
            pending = rest
    if fed:
        raise truncated_error(stream, member_start, member_start + fed)


_native = accel.native("gzmembers")
iter_members = _native.iter_members if _native else iter_members_py
