"""Where a writer process puts rows: a Parquet shard, a WARC file, or nowhere (``--out`` empty).

A sink is opened by its first row (so a run that stops cleanly leaves no empty file), writes to
``<name>.tmp`` while open, and on :meth:`seal` finishes the file (Parquet footer), fsyncs it and
hands the temp name back. The *parent* renames it to the final name after the checkpoint that
covers its rows is on disk, so a kill at any instant leaves either rows that the checkpoint
covers in a file the next start finishes renaming, or rows it does not cover in a ``.tmp``
that the next start deletes: never a sealed row that is fetched again.

WARC is durable wherever it is fsynced, so :meth:`WarcSink.sync` reports the synced length
and its rows at every batch; the checkpoint records (temp name, durable length), and a resume
truncates the file to that length and finishes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, Protocol

from ccrawl import durable
from ccrawl.recrawl.messages import CaptureRow
from ccrawl.recrawl.schema import CAPTURE_SCHEMA, CaptureColumns

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

#: Low-cardinality string columns, where a dictionary page pays for itself.
_DICTIONARY_COLUMNS = ["host", "content_type", "error", "extractor", "language", "warc_file"]


@dataclass(slots=True)
class Durable:
    """Rows made durable by a sync or a seal, and the file that holds them."""

    seqs: list[int]
    tmp_path: str = ""
    final_path: str = ""
    size: int = 0
    rows: int = 0
    payload: int = 0
    sealed: bool = False


class Sink(Protocol):
    """Where a writer process puts rows, and when they become durable.

    ``durable_at`` says which call makes rows durable: ``"seal"`` (Parquet: only a sealed file
    with its footer is readable) or ``"sync"`` (WARC and no output: every fsync, so the writer
    syncs every ``sync_rows`` rows or after a second; ``unsynced`` is how many rows wait for it).
    Both calls return the :class:`Durable` rows (None when there were none); ``payload`` is the
    open file's uncompressed payload, which ``--shard-size`` is compared with.
    """

    durable_at: Literal["seal", "sync"]
    payload: int

    @property
    def unsynced(self) -> int: ...

    def add(self, row: CaptureRow, body: bytes) -> None: ...

    def sync(self) -> Durable | None: ...

    def seal(self) -> Durable | None: ...


@dataclass(slots=True)
class _Naming:
    directory: Path
    stem: str  # "<prefix>-<run id>-w<k>"
    suffix: str
    counter: int = 0

    def next(self) -> Path:
        path = self.directory / f"{self.stem}-{self.counter:05d}{self.suffix}"
        self.counter += 1
        return path


def finalize(tmp_path: str, final_path: str) -> None:
    """Rename a sealed (already fsynced) temp file to its final name and make the rename durable."""
    durable.replace(tmp_path, final_path, sync_file=False)


@dataclass
class ParquetSink:
    """Capture rows into zstd Parquet shards; row groups are cut by rows or payload."""

    directory: Path
    stem: str
    metadata: dict[str, str]
    row_group_rows: int = 2000
    row_group_bytes: int = 32 * 1024 * 1024
    payload: int = 0
    _naming: _Naming = field(init=False)
    _file: BinaryIO | None = field(default=None, init=False)
    _writer: pq.ParquetWriter | None = field(default=None, init=False)
    _path: Path | None = field(default=None, init=False)
    _buffer: CaptureColumns = field(default_factory=CaptureColumns, init=False)
    _buffered: int = field(default=0, init=False)
    _seqs: list[int] = field(default_factory=list, init=False)
    _rows: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._naming = _Naming(self.directory, self.stem, ".parquet")
        self._schema = CAPTURE_SCHEMA.with_metadata({k.encode(): v.encode() for k, v in self.metadata.items()})

    durable_at: Literal["seal", "sync"] = field(default="seal", init=False)

    @property
    def unsynced(self) -> int:
        return 0  # a sync makes nothing durable: only a seal does

    def add(self, row: CaptureRow, body: bytes) -> None:
        self.buffer(row, body)
        if self.group_full():
            self._flush()

    # The pieces below let a caller that writes row groups on another thread (the fetch process's
    # writer, :mod:`ccrawl.recrawl.fetchwriter`) split the work: ``buffer``, ``cut`` and ``take_seal``
    # on the thread that adds rows; ``write_group`` and ``close_shard`` on the one that writes, in order.
    def buffer(self, row: CaptureRow, body: bytes) -> int:
        """Add one row to the open row group without writing anything; returns its payload."""
        size = self._buffer.append(row.columns, body)
        self._buffered += size
        self.payload += size
        self._seqs.append(row.header.seq)
        self._rows += 1
        return size

    @property
    def buffered(self) -> int:
        """Payload bytes in the row group not cut yet."""
        return self._buffered

    @property
    def buffered_rows(self) -> int:
        return len(self._buffer)

    def group_full(self) -> bool:
        return len(self._buffer) >= self.row_group_rows or self._buffered >= self.row_group_bytes

    def cut(self) -> pa.Table | None:
        """The buffered rows as one row group (a ``pyarrow.Table``), or None when there are none."""
        if not self._buffer:
            return None
        self._buffered = 0
        return self._buffer.take_table()

    def write_group(self, table: pa.Table) -> None:
        """Write a row group cut by :meth:`cut`, opening the shard's ``.tmp`` on the first."""
        import pyarrow.parquet as pq

        if self._writer is None:
            final = self._naming.next()
            self._path = final
            self._file = open(durable.in_progress(final), "wb")  # noqa: SIM115 - closed by close_shard()
            self._writer = pq.ParquetWriter(
                self._file,
                self._schema,
                compression="zstd",
                use_dictionary=_DICTIONARY_COLUMNS,
                write_statistics=["url", "host", "status", "fetched_at", "error"],
            )
        self._writer.write_table(table, row_group_size=table.num_rows)

    def _flush(self) -> None:
        table = self.cut()
        if table is not None:
            self.write_group(table)

    def take_seal(self) -> tuple[list[int], int, int] | None:
        """(seqs, rows, payload) of the open shard, reset for the next one; None when it has no row.

        The rows' last group must still be :meth:`cut` and written before :meth:`close_shard`."""
        if not self._rows:
            return None
        out = (self._seqs, self._rows, self.payload)
        self._seqs, self._rows, self.payload = [], 0, 0
        return out

    def close_shard(self, seqs: list[int], rows: int, payload: int) -> Durable:
        """Footer, fsync and close the open shard; its rows are the ones :meth:`take_seal` gave."""
        assert self._writer is not None and self._file is not None and self._path is not None
        self._writer.close()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        tmp = str(durable.in_progress(self._path))
        out = Durable(seqs, tmp, str(self._path), os.path.getsize(tmp), rows, payload, True)
        self._writer = self._file = self._path = None
        return out

    def sync(self) -> Durable | None:
        """Parquet rows are durable only at a seal."""
        return None

    def seal(self) -> Durable | None:
        """Finish the open shard (footer, fsync); None when no row arrived since the last seal."""
        taken = self.take_seal()
        if taken is None:
            return None
        self._flush()
        return self.close_shard(*taken)


@dataclass
class WarcSink:
    """Request/response record pairs into gzip-per-record WARC files; failures are counted, not written."""

    directory: Path
    stem: str
    info_fields: dict[str, str]
    payload: int = 0
    _naming: _Naming = field(init=False)
    _file: BinaryIO | None = field(default=None, init=False)
    _path: Path | None = field(default=None, init=False)
    _info_id: str = field(default="", init=False)
    _pending: list[int] = field(default_factory=list, init=False)
    _rows: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._naming = _Naming(self.directory, self.stem, ".warc.gz")

    def _open(self) -> BinaryIO:
        from ccrawl.warc.records import warcinfo

        final = self._naming.next()
        self._path = final
        self._file = open(durable.in_progress(final), "wb")  # noqa: SIM115 - closed by seal()
        self._info_id, member = warcinfo(final.name, self.info_fields)
        self._file.write(member)
        return self._file

    durable_at: Literal["seal", "sync"] = field(default="sync", init=False)

    @property
    def unsynced(self) -> int:
        return len(self._pending)

    def add(self, row: CaptureRow, body: bytes) -> None:
        head, cols = row.header, row.columns
        self._pending.append(head.seq)
        if cols["error"]:
            return  # a WARC record is a response; a failure has none (counted on the summary)
        from ccrawl.warc.records import exchange

        f = self._file or self._open()
        request, response = exchange(
            target_uri=head.target_url,
            fetched_at_ms=cols["fetched_at"],
            ip_address=cols["ip_address"],
            request_head=head.request_head,
            response_head=head.response_head,
            body=body,
            truncated=head.truncated,
            warcinfo_id=self._info_id,
        )
        f.write(request)
        f.write(response)
        # --shard-size counts uncompressed payload, as for Parquet: the HTTP exchange itself,
        # not the gzipped members it became.
        self.payload += len(head.request_head) + len(head.response_head) + len(body)
        self._rows += 1

    def sync(self) -> Durable | None:
        """fsync what is written; the rows since the last sync are durable now."""
        if not self._pending:
            return None
        size = 0
        tmp = ""
        if self._file is not None and self._path is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            size = self._file.tell()
            tmp = str(durable.in_progress(self._path))
        out = Durable(self._pending, tmp, str(self._path or ""), size, self._rows, self.payload, False)
        self._pending = []
        return out

    def seal(self) -> Durable | None:
        """Sync and close the open file; None when nothing is open and nothing is pending."""
        out = self.sync() or (Durable([], "", "", 0) if self._file is not None else None)
        if self._file is None or self._path is None:
            return out
        assert out is not None
        out.tmp_path, out.final_path = str(durable.in_progress(self._path)), str(self._path)
        out.size, out.sealed, out.rows, out.payload = self._file.tell(), True, self._rows, self.payload
        self._file.close()
        self._file = self._path = None
        self._rows, self.payload = 0, 0
        return out


@dataclass
class NullSink:
    """``--out`` empty: rows are counted and dropped, and durable at once (nothing to lose)."""

    payload: int = 0
    _pending: list[int] = field(default_factory=list)
    durable_at: Literal["seal", "sync"] = field(default="sync", init=False)

    @property
    def unsynced(self) -> int:
        return len(self._pending)

    def add(self, row: CaptureRow, body: bytes) -> None:
        self._pending.append(row.header.seq)

    def sync(self) -> Durable | None:
        if not self._pending:
            return None
        out = Durable(self._pending)
        self._pending = []
        return out

    def seal(self) -> Durable | None:
        return self.sync()
