"""Batch URL commands over files: ``ccrawl url surt|canon|key|domain|shard --from FILE``.

The input is read as a stream of chunks: a text file (plain, ``.gz`` or ``.zst``, recognised by its
first bytes, ``-`` for stdin) in blocks of whole lines, one row per line; or a Parquet file batch by
batch, the URLs in ``column``. Each chunk goes to a worker process (one per core by default) as a
:class:`UrlChunk`; the worker computes the new columns with the batch kernels of ``ccrawl.url`` and
answers a :class:`UrlChunkResult`: the input rows with the new columns and an ``error`` column. The
parent takes the answers back in input order (at most ``2 x workers`` chunks in flight, so memory
stays flat in the input's size) and writes them, a Parquet row group per chunk.

A bad row (empty line, NUL byte, not UTF-8, null, not a URL the command can read) keeps its place
with its reason in ``error`` and nulls in the new columns; with ``skip_bad`` it is dropped and
counted instead. The output is never silently shorter than the input (``url shard --shard k``
filters on purpose: it prints the rows shard k owns).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypedDict

from ccrawl.errors import InputError, UsageError
from ccrawl.ordered import ordered_map
from ccrawl.url.lineblocks import StreamBroken, line_blocks

if TYPE_CHECKING:
    import pyarrow as pa
    from _typeshed import WriteableBuffer

__all__ = ["BatchReport", "InputBroken", "UrlChunk", "UrlChunkResult", "new_columns", "read_chunks", "run_batch"]



class BatchParams(TypedDict, total=False):
    """The batch form's parameters: ``url domain``'s suffix list choice, ``url shard``'s count and kept shard."""

    include_private: bool
    shards: int
    only: int | None


TEXT_BLOCK = 4 << 20  # bytes of text per chunk
PARQUET_BATCH = 65_536  # rows per chunk from Parquet

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_PARQUET_MAGIC = b"PAR1"

# the new columns of each command, in output order
NEW_COLUMNS: dict[str, tuple[str, ...]] = {
    "surt": ("surt",),
    "canon": ("canonical",),
    "key": ("url_key", "canonical"),
    "domain": ("host", "registered_domain", "shard_key"),
    "shard": ("shard", "shard_key"),
}


@dataclass(frozen=True, slots=True)
class UrlChunk:
    """Parent -> worker: one chunk of input, either a block of text lines or a Parquet record batch."""

    seq: int
    command: str
    text: bytes | None = None
    first_line: int = 1
    batch: pa.RecordBatch | None = None
    column: str = "url"
    params: BatchParams = field(default_factory=lambda: BatchParams())
    skip_bad: bool = False


@dataclass(frozen=True, slots=True)
class UrlChunkResult:
    """Worker -> parent: the chunk's rows with the new columns, and how many rows were bad."""

    seq: int
    batch: pa.RecordBatch
    rows_in: int
    bad: int


@dataclass(slots=True)
class BatchReport:
    """What a batch run did: rows read, rows written, bad rows (kept with an error, or skipped)."""

    rows_in: int = 0
    rows_out: int = 0
    bad: int = 0
    chunks: int = 0
    #: The input stopped being readable part-way (a cut or damaged compressed file): every row before
    #: the break was processed and written; the caller raises this once its output is finished.
    broken: InputBroken | None = None


class InputBroken(InputError):
    """The input broke part-way (a compressed stream cut short or damaged, a damaged Parquet file).

    Raised by :func:`read_chunks` after the last whole chunk before the break was yielded; the batch
    run keeps it in :attr:`BatchReport.broken` so the rows before the break are written first.
    """


# --------------------------------------------------------------------------------------------------
# reading


class _Prefixed(io.RawIOBase):
    """A byte stream with some already-read bytes put back in front."""

    def __init__(self, prefix: bytes, rest: IO[bytes]) -> None:
        self._prefix = prefix
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        if self._prefix:
            n = min(len(view), len(self._prefix))
            view[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)


def _decompressed(raw: IO[bytes], head: bytes) -> IO[bytes] | pa.CompressedInputStream:
    import pyarrow as pa

    source = _Prefixed(head, raw)
    if head.startswith(_GZIP_MAGIC):
        import gzip  # not pyarrow's: Python's notices a truncated member instead of stopping short

        return gzip.GzipFile(fileobj=io.BufferedReader(source, buffer_size=1 << 20), mode="rb")
    if head.startswith(_ZSTD_MAGIC):
        return pa.CompressedInputStream(pa.PythonFile(source, mode="r"), "zstd")
    return io.BufferedReader(source, buffer_size=1 << 20)


def read_chunks(
    source: str, *, column: str = "url", block: int = TEXT_BLOCK, rows: int = PARQUET_BATCH,
    stdin: IO[bytes] | None = None, spool_dir: str | None = None,
) -> Iterator[tuple[bytes | None, int, pa.RecordBatch | None]]:
    """``(text block, first line number, None)`` or ``(None, 0, record batch)`` chunks of ``source``.

    ``source`` is a path or ``-`` (stdin). Parquet is recognised by its magic bytes; text may be gzip
    or zstd compressed. Parquet on stdin is spooled to a temporary file first (Parquet needs seeking).
    """
    if source == "-":
        raw: IO[bytes] = stdin if stdin is not None else sys.stdin.buffer
        what = "stdin"
    else:
        path = Path(source)
        if not path.is_file():
            raise UsageError(f"--from {source}: no such file")
        raw = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        what = source
    try:
        head = raw.read(4)
        if head == _PARQUET_MAGIC:
            yield from _parquet_chunks(raw, head, source, what, column, rows, spool_dir)
            return
        if source != "-" and not head.startswith((_GZIP_MAGIC, _ZSTD_MAGIC)):
            raw.seek(0)  # a plain file: read it as it is, no wrapper
            stream: IO[bytes] | pa.CompressedInputStream = raw
        else:
            stream = _decompressed(raw, head)
        line = 1
        try:
            for data in line_blocks(stream, block, fill=True):
                yield data, line, None
                line += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        except StreamBroken as exc:
            dropped = f", the cut line {line:,} after them was dropped" if exc.partial else ""
            raise InputBroken(
                f"--from {what}: cannot decompress past line {line - 1:,} ({exc}): the input breaks there; "
                f"the rows of the {line - 1:,} line(s) before it were written{dropped}"
            ) from None
    finally:
        if raw is not stdin and raw is not sys.stdin.buffer:
            raw.close()


def _parquet_chunks(
    raw: IO[bytes], head: bytes, source: str, what: str, column: str, rows: int, spool_dir: str | None
) -> Iterator[tuple[bytes | None, int, pa.RecordBatch | None]]:
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    spooled = None
    try:
        if source == "-":
            spooled = tempfile.NamedTemporaryFile(prefix="ccrawl-url-", suffix=".parquet", dir=spool_dir, delete=False)  # noqa: SIM115
            with spooled:
                spooled.write(head)
                while chunk := raw.read(1 << 20):
                    spooled.write(chunk)
            path = spooled.name
        else:
            path = source
        try:
            pf = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"--from {what}: not a readable Parquet file ({exc})") from None
        names = pf.schema_arrow.names
        if column not in names:
            raise UsageError(f"--column {column!r} is not in {what}; its columns are: {', '.join(names)}")
        read = 0
        try:
            for batch in pf.iter_batches(batch_size=rows, use_threads=True):
                yield None, 0, batch
                read += batch.num_rows
        except (OSError, pa.ArrowException) as exc:
            raise InputBroken(f"--from {what}: Parquet file is damaged after row {read:,} ({exc}); "
                              f"the {read:,} row(s) before the damage were written") from None
    finally:
        if spooled is not None:
            with contextlib.suppress(OSError):
                os.unlink(spooled.name)


# --------------------------------------------------------------------------------------------------
# the work of one chunk


def _url_strings(values: pa.Array | pa.ChunkedArray) -> tuple[pa.StringArray, pa.StringArray]:
    """A column as a string array plus an error array for rows that are not text."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    errors: list[str | None] = [None] * len(values)
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        pass
    elif pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        texts: list[str | None] = []
        for i, raw in enumerate(values.to_pylist()):
            if raw is None:
                texts.append(None)
                continue
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                texts.append(None)
                errors[i] = f"not UTF-8 text (byte {exc.start})"
        values = pa.array(texts, pa.string())
    else:
        raise UsageError(f"the URL column is of type {values.type}; it must hold strings")
    nulls: list[bool] = []
    if values.null_count:
        import pyarrow.compute as pc

        nulls = pc.is_null(values).to_pylist()
    for i, missing in enumerate(nulls):
        if missing and errors[i] is None:
            errors[i] = "null URL"
    if not any(errors):
        return values, pa.nulls(len(values), pa.string())
    return values, pa.array(errors, pa.string())


def new_columns(
    command: str, urls: pa.StringArray, params: BatchParams
) -> tuple[dict[str, pa.Array], pa.StringArray]:
    """The command's new columns for a string array of URLs, and the kernel's error array."""
    import pyarrow as pa

    if command == "surt":
        from ccrawl.url.surt import surt_array

        values, errors = surt_array(urls, with_errors=True)
        return {"surt": values}, errors
    if command in ("canon", "key"):
        from ccrawl.url.canon import canonical_array, url_key_array

        canonical, errors = canonical_array(urls, with_errors=True)
        if command == "canon":
            return {"canonical": canonical}, errors
        return {"url_key": url_key_array(canonical), "canonical": canonical}, errors
    if command == "domain":
        import pyarrow.compute as pc

        from ccrawl.url.domain import domain_columns

        host, registered, key = domain_columns(urls, params.get("include_private", True))
        no_host = pc.and_(pc.is_null(host), pc.is_valid(urls))
        message = "no host: give a URL such as https://example.com/ or a host name"
        errors = pc.if_else(no_host, pa.scalar(message, pa.string()), pa.scalar(None, pa.string()))
        key = pc.if_else(no_host, pa.scalar(None, pa.string()), key)
        return {"host": host, "registered_domain": registered, "shard_key": key}, errors
    if command == "shard":
        from ccrawl.url.domain import domain_columns, shard_array

        key = domain_columns(urls)[2]
        return {"shard": shard_array(urls, params["shards"]), "shard_key": key}, pa.nulls(len(urls), pa.string())
    raise UsageError(f"no batch form for url {command}")


def process_chunk(chunk: UrlChunk) -> UrlChunkResult:
    """The worker's job: read the chunk's URLs, add the new columns and ``error``, drop bad rows if asked.

    A chunk with no bad row and no filter never touches ``pyarrow.compute`` (its import alone is
    ~40 ms of a command's start-up).
    """
    import pyarrow as pa

    from ccrawl import accel

    if chunk.text is not None:
        native = accel.native("surt")
        if native is not None:
            urls, read_errors = native.lines_array(chunk.text, chunk.first_line)
        else:
            from ccrawl.url.batch import lines_array_py

            urls, read_errors = lines_array_py(chunk.text, chunk.first_line)
        base = pa.RecordBatch.from_arrays([urls], names=[chunk.column])
    else:
        base = chunk.batch
        assert base is not None  # a chunk holds text or a record batch
        urls, read_errors = _url_strings(base.column(chunk.column))
    columns, errors = new_columns(chunk.command, urls, chunk.params)
    if errors.null_count == len(errors):
        errors = read_errors
    elif read_errors.null_count != len(read_errors):
        import pyarrow.compute as pc

        errors = pc.coalesce(read_errors, errors)
    names = [n for n in base.schema.names if n not in columns and n != "error"]
    arrays = [base.column(n) for n in names]
    table = pa.RecordBatch.from_arrays([*arrays, *columns.values(), errors], names=[*names, *columns, "error"])
    rows_in = table.num_rows
    bad = rows_in - errors.null_count
    keep = None
    only = chunk.params.get("only")
    if (chunk.skip_bad and bad) or (chunk.command == "shard" and only is not None):
        import pyarrow.compute as pc

        if chunk.skip_bad and bad:
            keep = pc.is_null(errors)
        if chunk.command == "shard" and only is not None:
            mine = pc.fill_null(pc.equal(table.column("shard"), pa.scalar(only, pa.uint32())), False)
            keep = mine if keep is None else pc.and_(keep, mine)
    if keep is not None:
        table = table.filter(keep)
    if chunk.skip_bad:
        table = table.drop_columns(["error"])
    return UrlChunkResult(chunk.seq, table, rows_in, bad)


# --------------------------------------------------------------------------------------------------
# the run


def _ordered(chunks: Iterator[UrlChunk], workers: int, mode: str) -> Iterator[UrlChunkResult]:
    """Results in input order (:func:`ccrawl.ordered.ordered_map`): ``mode`` is ``thread`` (the compiled
    kernels release the GIL, so threads keep every core busy with no copy between processes) or
    ``process`` (the pure-Python twins hold the GIL: a process per core, each chunk pickled there and back).
    """
    return ordered_map(process_chunk, chunks, workers, mode, thread_name="ccrawl-url")


def run_batch(
    command: str,
    source: str,
    sink: Callable[[pa.RecordBatch], None],
    *,
    column: str = "url",
    params: BatchParams | None = None,
    skip_bad: bool = False,
    workers: int = 0,
    block: int = TEXT_BLOCK,
    rows: int = PARQUET_BATCH,
    stdin: IO[bytes] | None = None,
) -> BatchReport:
    """Run ``command`` over every row of ``source``, handing each result batch to ``sink`` in order."""
    report = BatchReport()
    for batch in iter_results(command, source, report, column=column, params=params, skip_bad=skip_bad,
                              workers=workers, block=block, rows=rows, stdin=stdin):
        sink(batch)
    return report


def iter_results(
    command: str,
    source: str,
    report: BatchReport,
    *,
    column: str = "url",
    params: BatchParams | None = None,
    skip_bad: bool = False,
    workers: int = 0,
    block: int = TEXT_BLOCK,
    rows: int = PARQUET_BATCH,
    stdin: IO[bytes] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The result batches of ``command`` over ``source`` in input order; ``report`` counts as they go."""
    if command not in NEW_COLUMNS:
        raise UsageError(f"no batch form for url {command}")
    workers = workers if workers > 0 else (os.cpu_count() or 1)
    given = BatchParams(**params) if params is not None else BatchParams()
    from ccrawl import accel

    mode = "process" if accel.extensions_disabled() or accel.native("surt") is None else "thread"

    def chunks() -> Iterator[UrlChunk]:
        try:
            for seq, (text, first_line, batch) in enumerate(
                read_chunks(source, column=column, block=block, rows=rows, stdin=stdin)
            ):
                yield UrlChunk(seq, command, text, first_line, batch, column, given, skip_bad)
        except InputBroken as exc:  # the chunks before the break still go through and out
            report.broken = exc

    for result in _ordered(chunks(), workers, mode):
        report.chunks += 1
        report.rows_in += result.rows_in
        report.bad += result.bad
        report.rows_out += result.batch.num_rows
        yield result.batch


def empty_schema(command: str, column: str, skip_bad: bool) -> pa.Schema:
    """The output schema of a run over empty text input (the header of an empty file)."""
    import pyarrow as pa

    types = {"shard": pa.uint32()}
    fields = [pa.field(column, pa.string())]
    fields += [pa.field(n, types.get(n, pa.string())) for n in NEW_COLUMNS[command]]
    if not skip_bad:
        fields.append(pa.field("error", pa.string()))
    return pa.schema(fields)
