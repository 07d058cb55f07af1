"""Blocks of whole lines from a byte stream: the one reader behind ``ccrawl url ... --from`` and the
URLs-on-stdin path of ``ccrawl url surt|canon|key|domain|shard``.

Two properties, both needed by both callers:

- **read1**: each read takes what the stream has (``read1`` where it has one), so lines trickling down a
  pipe are answered as they come rather than when a whole block has filled; and a decompressor that fails
  part-way has already handed over everything it inflated before the damage (its ``read(n)`` would lose it).
- **a clean break**: when the stream breaks (a gzip member cut short, damaged zstd), the whole lines read
  before the break are yielded first, then :class:`StreamBroken` says so and whether an unterminated line
  was dropped (a URL cut in half is not a URL of the input).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Protocol

__all__ = ["PIECE", "ByteStream", "StreamBroken", "line_blocks"]

#: Bytes asked of the stream per read when filling a block: a decompressor that fails part-way loses at
#: most this much of what it had already inflated (pyarrow's zstd stream has no real ``read1``).
PIECE = 64 << 10


class ByteStream(Protocol):
    """What the reader needs of a stream: ``read`` (``read1`` is used when present)."""

    def read(self, size: int = -1, /) -> bytes: ...


class StreamBroken(Exception):
    """The stream could not be read past some point; ``cause`` is the reader's error, ``partial`` whether
    an unterminated line before it was dropped."""

    def __init__(self, cause: BaseException, partial: bool) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.partial = partial


def _break_errors() -> tuple[type[BaseException], ...]:
    """What reading a (compressed) stream past its damage raises: gzip's EOFError (cut short) and
    BadGzipFile/zlib.error (damaged), pyarrow's OSError/ArrowException for zstd."""
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
    import sys

    pa = sys.modules.get("pyarrow")  # only a pyarrow stream can raise pyarrow's errors: not imported for it
    if pa is not None:
        errors += (pa.ArrowException,)
    return errors


def _reader(stream: ByteStream) -> Callable[[int], bytes]:
    read1: Callable[[int], bytes] | None = getattr(stream, "read1", None)
    return read1 if read1 is not None else stream.read


def line_blocks(stream: ByteStream, size: int, *, fill: bool = False) -> Iterator[bytes]:
    """Blocks of whole lines of ``stream`` (the last may lack its newline), each at most about ``size``
    bytes plus one line.

    ``fill=False`` yields the whole lines of each read as it returns (a pipe's lines are answered as they
    arrive); ``fill=True`` gathers reads of :data:`PIECE` bytes until ``size`` (fewer, larger blocks from a
    file). Either way a read that fails raises :class:`StreamBroken` after the whole lines before it.
    """
    read = _reader(stream)
    errors = _break_errors()
    carry = b""
    while True:
        parts: list[bytes] = []
        want = size
        failed: BaseException | None = None
        while want > 0:
            try:
                data = read(min(want, PIECE) if fill else want)
            except errors as exc:
                failed = exc
                break
            if not data:
                break
            parts.append(data)
            want -= len(data)
            if not fill:
                break
        if not parts and failed is None:
            break
        data = carry + b"".join(parts)
        if failed is not None:
            cut = data.rfind(b"\n")
            if cut >= 0:
                yield data[: cut + 1]
            raise StreamBroken(failed, partial=cut + 1 < len(data))
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        carry = data[cut + 1 :]
        yield data[: cut + 1]
    if carry:
        yield carry
