"""One seekable, read-only file over ranged reads: the way every remote Parquet part is opened.

The columnar engine, the hub work list, ``publish verify`` and ``news search`` all hand pyarrow a file
object whose reads become ranged requests. They differ only in what they already hold, so
:class:`RangeFile` takes each as an option instead of being written three times:

* ``blocks``: bytes already fetched by start offset (a coalesced prefetch); a read inside one is free;
* ``tail``: the file's last bytes, fetched once on opening (or handed in), so the footer probe and the
  footer cost one request; :meth:`RangeFile.parquet_metadata` parses the footer out of it;
* ``block_size``: a read-ahead window (fsspec's ``BytesCache``), for readers that issue many small reads.

A reply shorter than asked is an :class:`~ccrawl.errors.InputError` naming the file: a server that lies
about a length must not turn into a silently truncated column.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from ccrawl.errors import InputError

if TYPE_CHECKING:
    import fsspec.caching
    import pyarrow.parquet as pq
    from _typeshed import WriteableBuffer

Fetch = Callable[[int, int], bytes]  # (start, length) -> bytes


def cached(blocks: dict[int, bytes], start: int, length: int) -> bytes | None:
    """``length`` bytes from ``start`` when one fetched block holds them all."""
    for begin, data in blocks.items():
        if begin <= start and start + length <= begin + len(data):
            return data[start - begin : start - begin + length]
    return None


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of ``size`` bytes named ``name``, read through ``fetch(start, length)``."""

    def __init__(
        self,
        fetch: Fetch,
        size: int,
        *,
        name: str,
        blocks: dict[int, bytes] | None = None,
        tail: int | bytes = 0,
        block_size: int = 0,
        on_bytes: Callable[[int], None] | None = None,
    ) -> None:
        from ccrawl.arrowpool import python_file_handed_to_arrow

        python_file_handed_to_arrow()  # Arrow will hold buffers over this object's bytes
        super().__init__()
        self._fetch_fn = fetch
        self.size = size
        self.name = name
        self.on_bytes = on_bytes
        self.requests = 0
        self.bytes_fetched = 0
        self._pos = 0
        #: Bytes already fetched, by start offset; reads inside one are free.
        self.blocks = blocks if blocks is not None else {}
        if isinstance(tail, bytes):
            self._tail = tail[-size:] if size else b""
        else:
            self._tail = self.fetch(size - min(size, tail), min(size, tail)) if tail and size else b""
        self._tail_start = size - len(self._tail)
        self._ahead: fsspec.caching.BytesCache | None = None
        if block_size:
            import fsspec.caching

            self._ahead = fsspec.caching.BytesCache(block_size, lambda s, e: self.fetch(s, e - s), size)

    def fetch(self, start: int, length: int) -> bytes:
        """One ranged request, counted and checked for a short reply."""
        self.requests += 1
        data = self._fetch_fn(start, length)
        self.bytes_fetched += len(data)
        if self.on_bytes is not None:
            self.on_bytes(len(data))
        if len(data) != min(start + length, self.size) - start:
            raise InputError(f"{self.name}: asked {length} bytes at {start}, got {len(data)}")
        return data

    def _bytes(self, start: int, end: int) -> bytes:
        if start >= self._tail_start:
            return self._tail[start - self._tail_start : end - self._tail_start]
        hit = cached(self.blocks, start, end - start) if self.blocks else None
        if hit is not None:
            return hit
        if self._ahead is not None:
            return bytes(self._ahead._fetch(start, end))
        return self.fetch(start, end - start)

    def parquet_metadata(self) -> pq.FileMetaData:
        """The Parquet footer, parsed from the tail already read (one more request only past it).

        Handed to ``ParquetFile(metadata=...)`` so pyarrow does not probe the end of the file itself.
        """
        import pyarrow.parquet as pq

        if self.size < 12 or not self._bytes(self.size - 4, self.size) == b"PAR1":
            raise InputError(f"{self.name}: not a Parquet file (no PAR1 trailer)")
        (footer_len,) = struct.unpack("<I", self._bytes(self.size - 8, self.size - 4))
        if footer_len + 12 > self.size:
            raise InputError(f"{self.name}: the Parquet footer claims {footer_len} bytes, the file has {self.size}")
        footer = self._bytes(self.size - footer_len - 8, self.size)
        return pq.read_metadata(io.BytesIO(b"PAR1" + footer))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        end = self.size if size is None or size < 0 else min(self.size, self._pos + size)
        if end <= self._pos:
            return b""
        data = self._bytes(self._pos, end)
        self._pos += len(data)
        return data

    readall = read

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)
