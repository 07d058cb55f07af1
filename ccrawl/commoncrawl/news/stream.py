"""A CC-NEWS WARC streamed over HTTP and split into its gzip members as the bytes arrive.

Nothing is written to disk: each chunk is inflated (ISA-L's inflate when ``isal`` is installed, about
twice zlib's speed; else zlib), every finished member is handed on with its compressed offset and
length, and the bytes are dropped. A connection that dies part way is reopened with a ranged request
at the end of the last whole member, so a dropped stream costs the partial record, never the file.
A file that really ends inside a member (the server sent every byte it has) is reported through
:attr:`WarcStream.truncated_at` and its whole records stand.

A record larger than ``max_record`` inflated bytes (a gzip bomb, or a lying archive) is not kept
whole: it is inflated in bounded pieces, counted, and handed on with ``oversized`` set.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ccrawl.errors import TemporaryFailure
from ccrawl.warc.inflate import ZLIB_API as _inflate_mod  # ISA-L's: about twice zlib's rate (bench/README.md)

if TYPE_CHECKING:
    from ccrawl.net.client import CCClient

#: Inflated bytes one record may hold before it is treated as oversized (and not kept).
MAX_RECORD = 64 << 20
_SCRATCH = 1 << 16
#: Compressed bytes handed to the inflater per call (see :meth:`MemberSplitter.feed`).
_SLICE = 1 << 15
_GZIP = 31


def inflater_name() -> str:
    return "isal" if _inflate_mod is not zlib else "zlib"


@dataclass(slots=True)
class Member:
    """One whole gzip member: where it sits in the compressed file and what it inflates to."""

    offset: int
    length: int
    data: bytes
    oversized: bool = False


class MemberSplitter:
    """Feed compressed chunks, get whole members back; :attr:`pending` is a member begun but not ended."""

    def __init__(self, start: int = 0, *, max_record: int = MAX_RECORD, use_zlib: bool = False) -> None:
        self._mod: Any = zlib if use_zlib else _inflate_mod
        self.offset = start
        self.fed = 0
        self.max_record = max_record
        self._reset()

    def _reset(self) -> None:
        self._d = self._mod.decompressobj(_GZIP)
        self._out: list[bytes] = []
        self._size = 0
        self._over = False

    @property
    def pending(self) -> int:
        """Compressed bytes of a member that has started and not finished."""
        return self.fed

    def _keep(self, out: bytes) -> None:
        if not out:
            return
        if self._over or self._size + len(out) > self.max_record:
            self._over = True
            self._out = []
        else:
            self._out.append(out)
        self._size += len(out)

    def _room(self) -> int:
        return _SCRATCH if self._over else self.max_record - self._size + 1

    def feed(self, data: bytes) -> list[Member]:
        """Members completed by ``data`` (raises ``zlib.error`` style errors as ValueError).

        ``data`` is handed to the inflater in slices of at most ``_SLICE`` bytes (memoryviews, no copy):
        when a member ends, the inflater copies what is left of its input into ``unused_data``, so a
        1 MiB chunk holding dozens of members would be copied over and over (measured: a fifth of the
        split's time at 1 MiB chunks); a bounded slice caps that copy.
        """
        done: list[Member] = []
        view = memoryview(data)
        size = len(view)
        pos = 0
        while pos < size:
            piece = view[pos : pos + _SLICE]
            n_in = len(piece)
            try:
                d = self._d
                room = self._room()
                out = d.decompress(piece, room)
                self._keep(out)
                while not d.eof:  # output capped by ``room``: go on until the slice is all inflated
                    tail = d.unconsumed_tail
                    if not tail and len(out) != room:
                        break
                    room = self._room()
                    out = d.decompress(tail, room)
                    self._keep(out)
            except Exception as exc:  # zlib.error / isal_zlib.error
                raise ValueError(f"corrupt gzip member at offset {self.offset}: {exc}") from None
            if self._d.eof:
                used = n_in - len(self._d.unused_data)
                self.fed += used
                data_out = b"".join(self._out) if not self._over else b""
                done.append(Member(self.offset, self.fed, data_out, self._over))
                self.offset += self.fed
                self.fed = 0
                self._reset()
                pos += used
            else:
                self.fed += n_in
                pos += n_in
        return done


@dataclass(slots=True)
class StreamStats:
    """What streaming one file cost and found."""

    bytes_read: int = 0
    resumes: int = 0
    members: int = 0
    truncated_at: int | None = None
    size: int | None = None


class WarcStream:
    """One archive of the bucket, streamed as members; see the module docstring."""

    def __init__(
        self,
        cc: CCClient,
        path: str,
        *,
        start: int = 0,
        max_record: int = MAX_RECORD,
        on_resume: Callable[[int], None] | None = None,
    ) -> None:
        self.cc = cc
        self.path = path
        self.start = start
        self.max_record = max_record
        self.on_resume = on_resume
        self.stats = StreamStats()

    async def members(self) -> AsyncIterator[Member]:
        from ccrawl.net.client import TruncatedBody

        cc = self.cc
        url = cc.data_url(self.path)
        pos = self.start
        losses = 0
        while True:
            splitter = MemberSplitter(pos, max_record=self.max_record)
            try:
                async with cc.stream(url, start=pos) as stream:
                    total = stream.total_size
                    self.stats.size = total
                    skip = pos if (pos and stream.status == 200) else 0  # a server that ignored Range
                    async for chunk in stream.chunks():
                        self.stats.bytes_read += len(chunk)
                        if skip:
                            cut = min(skip, len(chunk))
                            chunk, skip = chunk[cut:], skip - cut
                        for member in splitter.feed(chunk):
                            self.stats.members += 1
                            yield member
                if total is not None and splitter.offset + splitter.fed < total:
                    raise TruncatedBody(f"{url}: {splitter.offset + splitter.fed} of {total} bytes")
            except TruncatedBody as exc:
                losses += 1
                if losses > cc.retries:
                    raise TemporaryFailure(
                        f"{url}: the connection kept dropping ({exc}); run again to resume the month"
                    ) from exc
                pos = splitter.offset  # the end of the last whole record
                self.stats.resumes += 1
                if self.on_resume is not None:
                    self.on_resume(pos)
                await asyncio.sleep(cc.retry_delay(losses - 1, None))
                continue
            if splitter.pending:
                self.stats.truncated_at = splitter.offset
            return
