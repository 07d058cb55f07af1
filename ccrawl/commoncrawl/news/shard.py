"""Index one CC-NEWS archive into one Parquet shard, streaming it (the archive never touches the disk).

:func:`index_file` is what a publish worker process runs per archive: it opens its own client, streams
the file (:mod:`.stream`), turns each response record into a row (:mod:`.rows`), writes row groups as
they fill, and renames ``<shard>.tmp`` to ``<shard>`` only when the footer is written, so a shard under
its final name is always whole. It returns a :class:`ShardResult`, the typed message a worker sends back.
The shard's footer carries the same counts under ``ccrawl.news`` so a ledger can be rebuilt from shards.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ccrawl import __version__, durable
from ccrawl.commoncrawl.news.rows import row_of
from ccrawl.commoncrawl.news.schema import arrow_schema
from ccrawl.commoncrawl.news.stream import MAX_RECORD, WarcStream

#: Rows per Parquet row group: small enough that a host search skips most of a shard by statistics.
ROW_GROUP = 4096
METADATA_KEY = b"ccrawl.news"


@dataclass(slots=True)
class ShardResult:
    """What indexing one archive produced (the message a worker process returns)."""

    warc_path: str
    local: str
    rows: int = 0
    articles: int = 0
    bytes_read: int = 0
    size: int = 0
    records: int = 0
    oversized: int = 0
    resumes: int = 0
    truncated_at: int | None = None
    languages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    #: Set when the archive could not be indexed: the message, and the exit code of the error class.
    error: str = ""
    error_code: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_article(row: Mapping[str, object]) -> bool:
    """A 200 answer whose bytes are HTML: what the ledger counts as an article."""
    return row["fetch_status"] == 200 and row["content_mime_detected"] in ("text/html", "application/xhtml+xml")


class ShardWriter:
    """Rows in; ``close`` sorts them by SURT key (as cc-index is sorted), writes row groups, seals the file.

    Sorting clusters a host's rows into one row group, whose ``url_surtkey`` statistics let a search skip
    every other row group. It costs holding one shard's rows until the archive is read: one shard per
    worker, which is the whole of what a publish run keeps.
    """

    def __init__(self, dest: Path, *, row_group: int = ROW_GROUP) -> None:
        self.dest = dest
        self.tmp = durable.in_progress(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.schema = arrow_schema()
        self.row_group = row_group
        # One list per column, filled as rows arrive: the Arrow arrays are built from these at close,
        # never by looking each value up again in a dict per row.
        self._names = tuple(self.schema.names)
        self._cols: list[list[Any]] = [[] for _ in self._names]

    def add(self, row: Mapping[str, object]) -> None:
        for col, name in zip(self._cols, self._names, strict=True):
            col.append(row[name])

    def _table(self) -> Any:
        """The rows as one Arrow table sorted by (SURT key, None as "", then record offset)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        cols, self._cols = self._cols, [[] for _ in self._names]
        arrays = [pa.array(c, f.type) for c, f in zip(cols, self.schema, strict=True)]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        if table.num_rows < 2:
            return table
        # Arrow compares strings bytewise, which for UTF-8 is Python's code-point order.
        keys = pa.table({"k": pc.fill_null(table["url_surtkey"], ""), "o": table["warc_record_offset"]})
        return table.take(pc.sort_indices(keys, sort_keys=[("k", "ascending"), ("o", "ascending")]))

    def close(self, metadata: Mapping[str, object]) -> int:
        import pyarrow.parquet as pq

        try:
            table = self._table()
            with pq.ParquetWriter(self.tmp, self.schema, compression="zstd", write_statistics=True) as writer:
                for i in range(0, max(table.num_rows, 1), self.row_group):
                    writer.write_table(table.slice(i, self.row_group))
                writer.add_key_value_metadata(
                    {METADATA_KEY: json.dumps(dict(metadata), sort_keys=True).encode()})
            durable.replace(self.tmp, self.dest)
        except BaseException:
            self.abort()
            raise
        return self.dest.stat().st_size

    def abort(self) -> None:
        self._cols = [[] for _ in self._names]
        self.tmp.unlink(missing_ok=True)


async def index_stream(cc: Any, warc_path: str, dest: Path, *, languages: bool = True,
                       max_record: int = MAX_RECORD) -> ShardResult:
    """Stream ``warc_path`` through ``cc`` into the shard ``dest``."""
    started = time.monotonic()
    result = ShardResult(warc_path, str(dest))
    langs: Counter[str] = Counter()
    writer = ShardWriter(dest)
    stream = WarcStream(cc, warc_path, max_record=max_record)
    try:
        try:
            async for member in stream.members():
                result.records += 1
                if member.oversized:
                    result.oversized += 1
                    continue
                row = row_of(warc_path, member.offset, member.length, member.data, languages=languages)
                if row is None:
                    continue
                writer.add(row)
                result.rows += 1
                if is_article(row):
                    result.articles += 1
                    langs[row["content_languages"] or ""] += 1
        except ValueError as exc:  # corrupt gzip: the whole records before it stand
            result.truncated_at = int(str(exc).split("offset ", 1)[1].split(":", 1)[0]) if "offset " in str(exc) else -1
        result.truncated_at = stream.stats.truncated_at if result.truncated_at is None else result.truncated_at
        result.bytes_read = stream.stats.bytes_read
        result.resumes = stream.stats.resumes
        result.languages = dict(sorted(langs.items()))
        result.seconds = round(time.monotonic() - started, 3)
        meta = {k: v for k, v in result.as_dict().items() if k not in ("local", "seconds", "error", "error_code")}
        meta["tool"] = f"ccrawl/{__version__}"
        result.size = writer.close(meta)
    except BaseException:
        writer.abort()
        raise
    return result


def index_file(warc_path: str, dest: str, client_options: Mapping[str, Any], languages: bool = True) -> ShardResult:
    """Index one archive in this process (a worker's entry point): own client, own event loop."""
    from ccrawl.errors import CcrawlError
    from ccrawl.net.client import CCClient

    async def main() -> ShardResult:
        async with CCClient(**dict(client_options)) as cc:
            return await index_stream(cc, warc_path, Path(dest), languages=languages)

    try:
        return asyncio.run(main())
    except CcrawlError as exc:
        # Errors cross the process boundary as data: not every exception class survives pickling.
        return ShardResult(warc_path, dest, error=str(exc) or type(exc).__name__, error_code=exc.exit_code)


def shard_metadata(path: Path | str) -> dict[str, Any]:
    """The counts a shard was sealed with (empty for a file without them)."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path).metadata or {}
    raw = meta.get(METADATA_KEY)
    return dict(json.loads(raw)) if raw else {}
