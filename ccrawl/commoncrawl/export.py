"""Writing captures into rotating ``.warc.gz`` files that say where they came from (``export``).

Each output file opens with a warcinfo record carrying the provenance: the tool and its version,
the prefix (and subprefix), creator, operator and the exact command line, so the file explains
itself without a sidecar. The captured records follow, copied byte for byte from Common Crawl
(each is already one gzip member), read with the same coalesced ranged GETs as ``fetch --batch``.

Files are named ``<prefix>[-<subprefix>]-<serial>.extracted.warc.gz`` (cdx_toolkit's spelling,
so existing tooling globbing for it keeps working) with a six-digit serial from 000000, written
as ``.part`` and renamed when closed. A file rotates before a record would take it past ``size``
bytes; a single record larger than ``size`` still gets a file of its own.

A record that cannot be read is named on stderr and skipped, and the run ends with a line saying
how many were skipped; ``strict=True`` ends the run at the first one instead.
"""

from __future__ import annotations

import io
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ccrawl import __version__
from ccrawl.commoncrawl.fetch import DEFAULT_LOOKAHEAD, fetch_batch
from ccrawl.commoncrawl.records import WARC, Location
from ccrawl.errors import TemporaryFailure, UsageError
from ccrawl.jsontypes import Record
from ccrawl.net.client import CCClient

DEFAULT_SIZE = 1_000_000_000
COLUMNS = ("file", "records", "bytes")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def warcinfo_record(
    *, filename: str, prefix: str, subprefix: str | None, creator: str | None, operator: str | None,
    command_line: str, description: str | None = None,
) -> bytes:
    """The gzip member of the warcinfo record every exported file starts with (written by fastwarc)."""
    from fastwarc.stream_io import GzipWriter
    from fastwarc.warc import WarcRecord, WarcRecordType

    fields: dict[str, str] = {
        "software": f"ccrawl/{__version__}",
        "format": "WARC File Format 1.1",
        "isPartOf": prefix if not subprefix else f"{prefix}-{subprefix}",
        "prefix": prefix,
    }
    if subprefix:
        fields["subprefix"] = subprefix
    if creator:
        fields["creator"] = creator
    if operator:
        fields["operator"] = operator
    fields["command-line"] = command_line
    fields["hostname"] = socket.gethostname()
    fields["description"] = description or "Captures extracted from Common Crawl with ccrawl export"
    # warc-fields are "name: value" lines; a value may not span lines, so newlines become spaces.
    payload = "".join(f"{k}: {' '.join(v.splitlines())}\r\n" for k, v in fields.items()).encode("utf-8")
    record = WarcRecord()
    record.init_headers(record_type=WarcRecordType.warcinfo)
    record.headers["WARC-Filename"] = filename
    record.headers["Content-Type"] = "application/warc-fields"
    record.set_bytes_content(payload)
    buffer = io.BytesIO()
    writer = GzipWriter(buffer)
    record.write(writer, checksum_data=True)
    writer.close()
    return buffer.getvalue()


class RotatingWarcWriter:
    """Appends record bytes to ``<prefix>...-<serial>.extracted.warc.gz`` files, rotating at ``size``."""

    def __init__(
        self, out_dir: Path | str, *, prefix: str, subprefix: str | None = None, size: int = DEFAULT_SIZE,
        creator: str | None = None, operator: str | None = None, command_line: str = "",
    ) -> None:
        if not prefix or "/" in prefix:
            raise UsageError(f"--prefix {prefix!r}: give a file name prefix without a slash")
        if size < 1:
            raise UsageError(f"--size {size}: must be at least 1 byte")
        self.out_dir = Path(out_dir)
        self.prefix, self.subprefix, self.size = prefix, subprefix, size
        self.creator, self.operator, self.command_line = creator, operator, command_line
        self.serial = 0
        self._fh: BinaryIO | None = None
        self._path: Path | None = None
        self._records = 0
        self._bytes = 0
        self.closed_files: list[Record] = []

    def _name(self) -> str:
        middle = f"-{self.subprefix}" if self.subprefix else ""
        return f"{self.prefix}{middle}-{self.serial:06d}.extracted.warc.gz"

    def _open(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        name = self._name()
        self._path = self.out_dir / name
        self._fh = open(self._path.with_name(name + ".part"), "wb")  # noqa: SIM115 (open until rotation)
        head = warcinfo_record(
            filename=name, prefix=self.prefix, subprefix=self.subprefix, creator=self.creator,
            operator=self.operator, command_line=self.command_line,
        )
        self._fh.write(head)
        self._bytes, self._records = len(head), 0

    def abort(self) -> None:
        """Close the current file without sealing it: its ``.part`` stays, never renamed to a finished name."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def close_file(self) -> Record | None:
        """Close the current file (rename ``.part`` to its name); its summary row, or None."""
        if self._fh is None or self._path is None:
            return None
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._path.with_name(self._path.name + ".part"), self._path)
        row = {"file": str(self._path), "records": self._records, "bytes": self._bytes}
        self.closed_files.append(row)
        self._fh, self._path = None, None
        self.serial += 1
        return row

    def write(self, data: bytes) -> Record | None:
        """Append one record's gzip member; returns the row of a file this closed by rotating."""
        closed = None
        if self._fh is not None and self._records and self._bytes + len(data) > self.size:
            closed = self.close_file()
        if self._fh is None:
            self._open()
        assert self._fh is not None
        self._fh.write(data)
        self._bytes += len(data)
        self._records += 1
        return closed


async def export_locations(
    cc: CCClient,
    locations: Iterable[Location],
    *,
    out_dir: Path | str,
    prefix: str,
    subprefix: str | None = None,
    size: int = DEFAULT_SIZE,
    creator: str | None = None,
    operator: str | None = None,
    command_line: str = "",
    strict: bool = False,
    gap: int = 1 << 20,
    max_span: int = 16 << 20,
    lookahead: int = DEFAULT_LOOKAHEAD,
    warn: Callable[[str], None] = _stderr,
) -> AsyncIterator[Record]:
    """Copy the records at ``locations`` into rotating WARC files; yields a row per file written.

    Records go out in disk order (file, then offset), the order coalesced reads return them in.
    """
    writer = RotatingWarcWriter(
        out_dir, prefix=prefix, subprefix=subprefix, size=size, creator=creator, operator=operator,
        command_line=command_line,
    )
    skipped = 0
    try:
        async for result in fetch_batch(
            cc, locations, content=WARC, gap=gap, max_span=max_span, order="file", lookahead=lookahead
        ):
            if result.error is not None or not result.rows:
                if strict:
                    raise TemporaryFailure(f"export: {result.location.key}: {result.error}; run it again") from None
                skipped += 1
                warn(f"export: {result.location.key}: {result.error}, skipping the record")
                continue
            closed = writer.write(bytes(result.rows[0]["warc"]))
            if closed is not None:
                yield closed
        last = writer.close_file()
        if last is not None:
            yield last
    finally:
        writer.abort()
    if skipped:
        warn(f"export: the result is incomplete, {skipped} record{'s' * (skipped != 1)} could not be read; "
             "run it again or pass --strict to fail instead")


