"""``news search <host>``: a publisher's articles in a month, from the published index or by scanning.

From the index: one batched listing of ``data/YYYY/MM/`` gives the month's shards and their sizes; each
shard is opened with one ranged read of its tail (footer and, for a small shard, more), then only the
``url_host_name`` column chunks are read; a row group is read whole only where that column matched. A
host in few shards so costs footers and one column chunk per shard, and the rows of the shards that hold
it. The bytes read are counted and reported.

By scanning (``--no-index``, or a month that is not indexed): every archive of the month is streamed
and only responses whose target host matches are turned into rows, with the same function the index is
built with, so both paths give the same rows.

Rows are CDX fields (``urlkey, timestamp, url, ..., offset, length, filename``), sorted by archive and
offset, so ``-o jsonl`` pipes straight into ``ccrawl fetch -``.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ccrawl.commoncrawl.news.months import Month
from ccrawl.commoncrawl.news.rows import response_host, row_of
from ccrawl.commoncrawl.news.schema import cdx_row
from ccrawl.commoncrawl.news.stream import WarcStream

#: Bytes read from a shard's end on opening: the footer of any shard this tool writes, in one request.
TAIL = 16 * 1024


def host_matches(host: str | None, query: str) -> bool:
    """``host`` is the query host or a subdomain of it (``bbc.co.uk`` matches ``www.bbc.co.uk``)."""
    return bool(host) and (host == query or host.endswith("." + query))  # type: ignore[union-attr]


def normalize_host(query: str) -> str:
    from ccrawl.errors import UsageError

    q = query.strip().lower().rstrip(".")
    if "://" in q:
        from urllib.parse import urlsplit

        q = urlsplit(q).hostname or ""
    if q.startswith("*."):
        q = q[2:]
    if not q or "/" in q or " " in q:
        raise UsageError(f"news search {query!r}: give a host name such as bbc.co.uk")
    return q


@dataclass(slots=True)
class SearchReport:
    """How a search was answered: the path, what it read, what it could not search."""

    path: str = ""
    shards: int = 0
    shards_opened: int = 0
    manifest_files: int = 0
    index_bytes: int = 0
    bytes_read: int = 0
    archives_scanned: int = 0
    matches: int = 0
    missing: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


class RangeFile(io.RawIOBase):
    """A read-only file over ``repo.read_range``, its tail fetched on the first read; counts bytes."""

    def __init__(self, repo: Any, path: str, size: int, counter: Callable[[int], None]) -> None:
        super().__init__()
        self.repo = repo
        self.path = path
        self.size = size
        self.pos = 0
        self.counter = counter
        start = max(0, size - TAIL)
        self._tail_start = start
        self._tail = self._fetch(start, size - start) if size else b""

    def metadata(self) -> Any:
        """The footer, parsed from the tail already read (one more request only for a footer past it).

        Handed to ``ParquetFile(metadata=...)`` so pyarrow does not read its own 64 KB from the end.
        """
        import struct

        import pyarrow.parquet as pq

        if self.size < 12 or not self._tail.endswith(b"PAR1"):
            from ccrawl.errors import InputError

            raise InputError(f"{self.path}: not a Parquet file (no PAR1 trailer)")
        (footer_len,) = struct.unpack("<I", self._tail[-8:-4])
        need = footer_len + 8
        footer = self._tail[-need:] if need <= len(self._tail) else self._fetch(self.size - need, need)
        return pq.read_metadata(io.BytesIO(b"PAR1" + footer))

    def _fetch(self, start: int, length: int) -> bytes:
        data: bytes = self.repo.read_range(self.path, start, length)
        self.counter(len(data))
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), max(0, self.size - self.pos))
        if n <= 0:
            return 0
        if self.pos >= self._tail_start:
            i = self.pos - self._tail_start
            data = self._tail[i : i + n]
        else:
            data = self._fetch(self.pos, n)
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


def _search_shard(
    repo: Any, path: str, size: int, query: str, counter: Callable[[int], None]
) -> tuple[list[dict[str, Any]], bool]:
    """The matching rows of one shard, and whether any row group had to be read whole."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    raw = RangeFile(repo, path, size, counter)
    pf = pq.ParquetFile(raw, metadata=raw.metadata())
    rows: list[dict[str, Any]] = []
    opened = False
    prefix = surt_prefix(query)
    key_col = pf.schema_arrow.get_field_index("url_surtkey")
    for rg in range(pf.metadata.num_row_groups):
        if prefix and key_col >= 0 and not _may_hold(pf.metadata.row_group(rg).column(key_col), prefix):
            continue  # the row group's SURT range cannot hold the host: not even its host column is read
        hosts = pf.read_row_group(rg, columns=["url_host_name"]).column(0)
        mask = pc.or_(pc.equal(hosts, query), pc.ends_with(hosts, "." + query))
        mask = pc.fill_null(mask, False)
        if not pc.any(mask).as_py():
            continue
        opened = True
        table = pf.read_row_group(rg).filter(mask)
        rows.extend(table.to_pylist())
    return rows, opened


def surt_prefix(query: str) -> str | None:
    """The SURT host part every URL of ``query`` and its subdomains starts with (None: do not prune)."""
    import re

    if not re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", query):
        return None
    from ccrawl.url.surt import surt

    try:
        key = surt(f"http://{query}/")
    except Exception:
        return None
    return key.split(")", 1)[0] or None


def _may_hold(column: Any, prefix: str) -> bool:
    """Whether a row group's ``url_surtkey`` statistics allow a key starting with ``prefix``."""
    stats = column.statistics
    if stats is None or not stats.has_min_max or stats.null_count:
        return True
    return not (str(stats.max) < prefix or str(stats.min) > prefix + "\uffff")


def search_index(
    repo: Any, month: Month, query: str, *, files: list[Any], limit: int = 0, workers: int = 4,
    report: SearchReport,
) -> Iterator[dict[str, Any]]:
    """CDX rows of ``query`` from the month's shards ``files`` (HubFile from one listing), in file order."""
    lock = threading.Lock()

    def count(n: int) -> None:
        with lock:
            report.bytes_read += n

    def one(f: Any) -> tuple[list[dict[str, Any]], bool]:
        try:
            return _search_shard(repo, f.path, f.size, query, count)
        except Exception as exc:  # a broken shard is reported and skipped: the answer says it is partial
            from ccrawl.errors import TemporaryFailure, Unreachable

            if isinstance(exc, TemporaryFailure | Unreachable):
                raise
            with lock:
                report.unreadable.append(f"{f.path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            return [], False

    report.path = "index"
    report.shards = len(files)
    report.index_bytes = sum(f.size for f in files)
    emitted = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = pool.map(one, sorted(files, key=lambda f: f.path))
        for rows, opened in results:
            report.shards_opened += int(opened)
            for row in sorted(rows, key=lambda r: (r["warc_filename"], r["warc_record_offset"])):
                yield cdx_row(row)
                emitted += 1
                report.matches = emitted
                if limit and emitted >= limit:
                    return


async def scan_archives(
    cc: Any, paths: list[str], query: str, *, limit: int = 0, workers: int = 4, report: SearchReport,
    notice: Callable[[str], None] | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """CDX rows of ``query`` by streaming every archive in ``paths`` (``workers`` at once), in path order."""
    report.path = "scan"
    sem = asyncio.Semaphore(max(1, workers))

    async def one(path: str) -> list[dict[str, Any]]:
        async with sem:
            stream = WarcStream(cc, path)
            out: list[dict[str, Any]] = []
            try:
                async for m in stream.members():
                    if m.oversized or not host_matches(response_host(m.data), query):
                        continue
                    row = row_of(path, m.offset, m.length, m.data)
                    if row is not None:
                        out.append(row)
            except ValueError as exc:
                if notice:
                    notice(f"news search: {path}: {exc}; kept the records before it")
            if stream.stats.truncated_at is not None and notice:
                notice(f"news search: {path} ends inside the record at offset {stream.stats.truncated_at}")
            report.bytes_read += stream.stats.bytes_read
            report.archives_scanned += 1
            return out

    tasks = [asyncio.ensure_future(one(p)) for p in paths]
    emitted = 0
    try:
        for task in tasks:
            rows = await task
            for row in rows:
                yield cdx_row(row)
                emitted += 1
                report.matches = emitted
                if limit and emitted >= limit:
                    return
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
