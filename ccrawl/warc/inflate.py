"""Whole gzip members inflated in one call: the fast path of :class:`ccrawl.warc.source.GzipSource`.

``Inflater(cap).member(raw, pos, buf)`` inflates the gzip member that starts at ``raw[pos]`` and
appends what it inflates to ``buf``. It returns ``(True, compressed size, inflated size)`` when the
member is whole in ``raw``, inflates to at most ``cap`` bytes, passes its CRC-32 and length checks,
and has a plain header (no header CRC, no reserved flag). Otherwise it returns ``(False, 0, 0)`` and
``buf`` is as it was: the reader then inflates the member with its streaming inflater, which is what
reports damage, truncation and gzip bombs. ``inflate(raw, pos)`` does the same into the inflater's
own buffer, where ``find`` and ``slice`` read the member and ``spill(buf)`` appends it: the reader
frames a record that fills its member from there, copying out only its payload.

The compiled implementation (``csrc/gzinflate.pyx``) calls libdeflate, which inflates the member in
one call where the streaming inflater makes one call per 16 KiB of input; it is used when the native
core is built and libdeflate (Debian's ``libdeflate0``) is installed. :class:`InflaterPy` is its
pure-Python twin with identical results, on ISA-L's zlib API (or zlib's).
"""

from __future__ import annotations

import zlib
from typing import Any, Protocol

from ccrawl import accel

__all__ = ["FAST_CAP", "INFLATE_ERRORS", "ZLIB_API", "Inflater", "InflaterPy", "MemberInflater", "native_inflater"]

FAST_CAP = 2 << 20
"""The most one member may inflate to and still take the fast path (2 MiB, above Common Crawl's 1 MiB payloads)."""

_GZIP_MIN = 18  # a 10-byte header and an 8-byte trailer: nothing shorter is a whole member
_FHCRC = 0x02
_FRESERVED = 0xE0


def _zlib_api() -> Any:
    """ISA-L's zlib API when installed: it inflates about twice as fast as zlib (bench/README.md)."""
    try:
        from isal import isal_zlib

        return isal_zlib
    except ImportError:  # pragma: no cover - isal is a dependency; zlib has the same API
        return zlib


ZLIB_API = _zlib_api()
"""The streaming inflater's module (``decompressobj``): the WARC reader's, the twin's, the CC-NEWS
member splitter's and the web graph's gzip streams."""
INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error, ZLIB_API.error)


class MemberInflater(Protocol):
    """What the reader's fast path calls: the compiled ``Inflater`` or :class:`InflaterPy`."""

    @property
    def made(self) -> int: ...

    def member(self, raw: bytes, pos: int, buf: bytearray) -> tuple[bool, int, int]: ...

    def inflate(self, raw: bytes, pos: int) -> tuple[bool, int, int]: ...

    def spill(self, buf: bytearray) -> None: ...

    def find(self, needle: bytes, start: int, stop: int) -> int: ...

    def slice(self, start: int, stop: int) -> bytes: ...


class InflaterPy:
    """The twin of the compiled ``Inflater``: same arguments, same results.

    :meth:`member` inflates a member onto the reader's window. :meth:`inflate` inflates one and keeps
    it (``made`` bytes), where :meth:`find` and :meth:`slice` read it and :meth:`spill` appends it to a
    window: the reader frames a record that fills its member straight from there.
    """

    def __init__(self, cap: int) -> None:
        if cap <= 0:
            raise ValueError("cap must be positive")
        self.cap = cap
        self._out = b""

    @property
    def made(self) -> int:
        return len(self._out)

    def member(self, raw: bytes, pos: int, buf: bytearray) -> tuple[bool, int, int]:
        ok, used, made = self.inflate(raw, pos)
        if ok:
            self.spill(buf)
        return ok, used, made

    def inflate(self, raw: bytes, pos: int) -> tuple[bool, int, int]:
        self._out = b""
        avail = len(raw) - pos
        if pos < 0 or avail < _GZIP_MIN:
            return False, 0, 0
        if raw[pos] != 0x1F or raw[pos + 1] != 0x8B or raw[pos + 2] != 8 or raw[pos + 3] & (_FHCRC | _FRESERVED):
            return False, 0, 0
        d = ZLIB_API.decompressobj(31)
        try:
            out = d.decompress(memoryview(raw)[pos:], self.cap)
        except INFLATE_ERRORS:
            return False, 0, 0
        if not d.eof:  # cut short, or more than cap bytes
            return False, 0, 0
        self._out = out
        return True, avail - len(d.unused_data), len(out)

    def spill(self, buf: bytearray) -> None:
        buf += self._out

    def find(self, needle: bytes, start: int, stop: int) -> int:
        return self._out.find(needle, max(start, 0), max(stop, 0))

    def slice(self, start: int, stop: int) -> bytes:
        return self._out[max(start, 0) : max(stop, 0)]


_native = accel.native("gzinflate")
Inflater: Any = _native.Inflater if _native else InflaterPy


def native_inflater(cap: int = FAST_CAP) -> MemberInflater | None:
    """A compiled inflater for the reader's fast path, or None (no native core, or no libdeflate)."""
    return _native.Inflater(cap) if _native else None
