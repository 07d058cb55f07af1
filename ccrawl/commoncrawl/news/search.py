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
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ccrawl.commoncrawl.news.months import Month
from ccrawl.commoncrawl.news.rows import response_host, row_of
from ccrawl.commoncrawl.news.schema import cdx_batch, cdx_row
from ccrawl.commoncrawl.news.stream import WarcStream
from ccrawl.jsontypes import Record
from ccrawl.net.rangefile import RangeFile

if TYPE_CHECKING:
    from pyarrow import RecordBatch
    from pyarrow.parquet import ColumnChunkMetaData

    from ccrawl.hub.repo import DatasetRepo, HubFile
    from ccrawl.net.client import CCClient

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


def _open_shard(repo: DatasetRepo, path: str, size: int, counter: Callable[[int], None]) -> RangeFile:
    """A shard over ``repo.read_range``, its tail fetched on opening; every byte read goes to ``counter``."""
    return RangeFile(lambda start, length: repo.read_range(path, start, length), size, name=path, tail=TAIL,
                     on_bytes=counter)


def _search_shard(
    repo: DatasetRepo, path: str, size: int, query: str, counter: Callable[[int], None]
) -> tuple[RecordBatch | None, bool]:
    """The matching rows of one shard as CDX columns (:func:`cdx_batch`), sorted by archive and offset, and
    whether any row group had to be read whole."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    raw = _open_shard(repo, path, size, counter)
    tables: list[pa.Table] = []
    opened = False
    prefix = surt_prefix(query)
    # The reader reads Python bytes (the RangeFile): it is closed here, before the next shard, and reads
    # on this thread only (use_threads=False): an Arrow worker thread left holding a buffer of it when
    # the interpreter finalises aborts the process (docs/news.md, "Arrow readers over Python bytes").
    # The CDX columns are computed (new buffers) before it closes.
    with raw, pq.ParquetFile(raw, metadata=raw.parquet_metadata()) as pf:
        key_col = pf.schema_arrow.get_field_index("url_surtkey")
        for rg in range(pf.metadata.num_row_groups):
            if prefix and key_col >= 0 and not _may_hold(pf.metadata.row_group(rg).column(key_col), prefix):
                continue  # the row group's SURT range cannot hold the host: not even its host column is read
            hosts = pf.read_row_group(rg, columns=["url_host_name"], use_threads=False).column(0)
            mask = pc.or_(pc.equal(hosts, query), pc.ends_with(hosts, "." + query))
            mask = pc.fill_null(mask, False)
            if not pc.any(mask).as_py():
                continue
            opened = True
            tables.append(pf.read_row_group(rg, use_threads=False).filter(mask))
        if not tables:
            return None, opened
        table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        order = pc.sort_indices(table, sort_keys=[("warc_filename", "ascending"), ("warc_record_offset", "ascending")])
        return cdx_batch(table.take(order)), opened


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


def _may_hold(column: ColumnChunkMetaData, prefix: str) -> bool:
    """Whether a row group's ``url_surtkey`` statistics allow a key starting with ``prefix``."""
    stats = column.statistics
    if stats is None or not stats.has_min_max or stats.null_count:
        return True
    return not (str(stats.max) < prefix or str(stats.min) > prefix + "\uffff")


def search_index_batches(
    repo: DatasetRepo, month: Month, query: str, *, files: list[HubFile], limit: int = 0, workers: int = 4,
    report: SearchReport,
) -> Iterator[RecordBatch]:
    """CDX rows of ``query`` from the month's shards ``files`` (HubFile from one listing), in file order, as
    record batches of :data:`~ccrawl.commoncrawl.news.schema.CDX_COLUMNS` (text), one a shard that matched."""
    lock = threading.Lock()

    def count(n: int) -> None:
        with lock:
            report.bytes_read += n

    def one(f: HubFile) -> tuple[RecordBatch | None, bool]:
        try:
            return _search_shard(repo, f.path, f.size, query, count)
        except Exception as exc:  # a broken shard is reported and skipped: the answer says it is partial
            from ccrawl.errors import TemporaryFailure, Unreachable

            if isinstance(exc, TemporaryFailure | Unreachable):
                raise
            with lock:
                report.unreadable.append(f"{f.path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            return None, False

    report.path = "index"
    report.shards = len(files)
    report.index_bytes = sum(f.size for f in files)
    emitted = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = pool.map(one, sorted(files, key=lambda f: f.path))
        for batch, opened in results:
            report.shards_opened += int(opened)
            if batch is None or not batch.num_rows:
                continue
            if limit and emitted + batch.num_rows >= limit:
                batch = batch.slice(0, limit - emitted)
            emitted += batch.num_rows
            report.matches = emitted
            yield batch
            if limit and emitted >= limit:
                return


def search_index(
    repo: Any, month: Month, query: str, *, files: list[HubFile], limit: int = 0, workers: int = 4,
    report: SearchReport,
) -> Iterator[Record]:
    """The rows of :func:`search_index_batches`, a dict each."""
    for batch in search_index_batches(repo, month, query, files=files, limit=limit, workers=workers, report=report):
        yield from batch.to_pylist()


async def scan_archives(
    cc: CCClient, paths: list[str], query: str, *, limit: int = 0, workers: int = 4, report: SearchReport,
    notice: Callable[[str], None] | None = None,
) -> AsyncIterator[list[Record]]:
    """CDX rows of ``query`` by streaming every archive in ``paths`` (``workers`` at once), in path order: an
    archive's rows an item (the synchronous side steps the event loop once an archive, not once a row)."""
    report.path = "scan"
    sem = asyncio.Semaphore(max(1, workers))

    async def one(path: str) -> list[Record]:
        async with sem:
            stream = WarcStream(cc, path)
            out: list[Record] = []
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
            if limit:
                rows = rows[: limit - emitted]
            if rows:
                emitted += len(rows)
                report.matches = emitted
                yield [cdx_row(row) for row in rows]
            if limit and emitted >= limit:
                return
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
