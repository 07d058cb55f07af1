"""Renders Arrow record batches as CSV, TSV and JSON lines at Arrow speed, byte for byte as ``ccrawl.output``.

A command that has its rows as ``pyarrow.RecordBatch``es hands them to :func:`emit_batches` rather
than turning each row into a dict. CSV, TSV and JSONL are written a batch at a time by the compiled
writer (``csrc/textout.pyx``; the twins ``delimited_rows_py`` and ``jsonl_rows_py`` below) straight
from the batch's buffers: text and integer columns as they are, any other column rendered value by
value with the very functions the per-record renderer uses (``cell``, ``json.dumps``), so the bytes
are the same whichever path wrote them. A batch holding a value CSV must quote is written by
``csv.writer``, as before. Every other format (table, json, url, raw, parquet, ``--template``) goes
through the per-record renderer: those outputs are small, or (Parquet) keep their exact bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING

from ccrawl import accel
from ccrawl.errors import UsageError
from ccrawl.output import OutputOptions, cell, emit, json_default, resolve_format, to_json
from ccrawl.rowbatch import batch_rows, json_columns
from ccrawl.rowbatch import string_array as _string_array
from ccrawl.rowbatch import string_array_py as string_array_py  # the twin the URL commands use too

if TYPE_CHECKING:
    from pyarrow import Array, RecordBatch
    from pyarrow.parquet import ParquetWriter

STR, INT, RAW = 0, 1, 2  # column kinds of the writers: text, integer, JSON text written as it is


# --------------------------------------------------------------------------------------------------
# the pure-Python twins of csrc/textout.pyx


def _values(kind: int, array: Array) -> list[object]:
    values: list[object] = array.to_pylist()
    return values


def delimited_rows_py(columns: list[tuple[int, Array]], delimiter: int) -> bytes | None:
    """``a<delimiter>b\\n`` lines, or None when a value would need CSV quoting (see the native one)."""
    if not columns:
        return b""
    sep = chr(delimiter)
    cols = [_values(kind, array) for kind, array in columns]
    lines = []
    for row in zip(*cols, strict=True):
        cells = []
        for value in row:
            text = "" if value is None else str(value)
            if sep in text or '"' in text or "\n" in text or "\r" in text:
                return None
            cells.append(text)
        if len(cells) == 1 and not cells[0]:
            return None
        lines.append(sep.join(cells) + "\n")
    return "".join(lines).encode("utf-8")


def jsonl_rows_py(keys: list[bytes], columns: list[tuple[int, Array]]) -> bytes:
    """JSON lines with ``json.dumps``' separators, nulls left out (see the native one)."""
    if len(keys) != len(columns):
        raise ValueError("one key per column")
    if not columns:
        return b""
    names = [k.decode("utf-8") for k in keys]
    cols = [_values(kind, array) for kind, array in columns]
    kinds = [kind for kind, _ in columns]
    lines = []
    for row in zip(*cols, strict=True):
        parts = []
        for name, kind, value in zip(names, kinds, row, strict=True):
            if value is None:
                continue
            text = json.dumps(value, ensure_ascii=False) if kind == STR else str(value)
            parts.append(f"{name}: {text}")
        lines.append("{" + ", ".join(parts) + "}\n")
    return "".join(lines).encode("utf-8")


_native = accel.native("textout")
delimited_rows = _native.delimited_rows if _native is not None else delimited_rows_py
jsonl_rows = _native.jsonl_rows if _native is not None else jsonl_rows_py


# --------------------------------------------------------------------------------------------------
# columns of a batch as the writers take them


def _column(batch: RecordBatch, name: str) -> Array:
    import pyarrow as pa

    index = batch.schema.get_field_index(name)
    if index < 0:
        return pa.nulls(batch.num_rows, pa.string())
    array = batch.column(index)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _is_text(array: Array) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(array.type) or pa.types.is_large_string(array.type) or pa.types.is_null(array.type))


def _null_as_text(array: Array) -> Array:
    import pyarrow as pa

    return pa.nulls(len(array), pa.string()) if pa.types.is_null(array.type) else array


def _delimited_column(array: Array) -> tuple[int, Array]:
    """A column as CSV cells: text and integers as they are, anything else through :func:`cell`."""
    import pyarrow as pa

    if _is_text(array):
        return STR, _null_as_text(array)
    if pa.types.is_integer(array.type):
        return INT, array
    return STR, _string_array([None if v is None else cell(v) for v in array.to_pylist()])


def _json_column(array: Array) -> tuple[int, Array]:
    """A column as JSON values: text escaped by the writer, integers as they are, anything else through
    ``json.dumps`` with the per-record renderer's options."""
    import pyarrow as pa

    if _is_text(array):
        return STR, _null_as_text(array)
    if pa.types.is_integer(array.type):
        return INT, array
    return RAW, _string_array([
        None if v is None else json.dumps(v, ensure_ascii=False, default=json_default) for v in array.to_pylist()
    ])


# --------------------------------------------------------------------------------------------------
# the renderer


class _ByteSink:
    """Writes UTF-8 bytes to a text stream: to its binary buffer when it has one and encodes UTF-8."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        buffer = getattr(stream, "buffer", None)
        self.buffer = buffer if buffer is not None and encoding in ("utf-8", "utf8") else None

    def write(self, data: bytes) -> None:
        if self.buffer is not None:
            self.buffer.write(data)
        else:
            self.stream.write(data.decode("utf-8"))

    def write_text(self, text: str) -> None:
        """Text, encoded as the stream itself would encode it (its ``errors`` handler included)."""
        if self.buffer is not None:
            self.buffer.write(text.encode("utf-8", getattr(self.stream, "errors", None) or "strict"))
        else:
            self.stream.write(text)

    def start(self) -> None:
        if self.buffer is not None:
            self.stream.flush()  # anything written as text before the bytes goes out first

    def close(self) -> None:
        if self.buffer is not None:
            self.buffer.flush()
        self.stream.flush()


def _csv_text(rows: Iterable[Sequence[str]], delimiter: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _fix_columns(names: Sequence[str], declared: Sequence[str], fields: Sequence[str]) -> list[str]:
    """The output columns, as :class:`ccrawl.output.Renderer` fixes them at its first record."""
    base = list(declared) or list(names)
    if fields:
        known = set(base) | set(names)
        unknown = [f for f in fields if f not in known]
        if unknown:
            raise UsageError(f"--fields: unknown field {unknown[0]!r}; this command's fields are {', '.join(base)}")
        return list(fields)
    return base


def batch_records(batches: Iterable[RecordBatch | list[Mapping[str, object]]]) -> Iterator[Mapping[str, object]]:
    """The rows of ``batches`` as dicts (the per-record renderer's input); a list in the stream is records."""
    for batch in batches:
        yield from batch if isinstance(batch, list) else batch_rows(batch)


def _limited(batches: Iterable[RecordBatch], limit: int) -> Iterator[RecordBatch]:
    left = limit
    for batch in batches:
        if limit <= 0:
            yield batch
            continue
        if batch.num_rows >= left:
            yield batch.slice(0, left)
            return
        left -= batch.num_rows
        yield batch


def emit_batches(
    batches: Iterable[RecordBatch],
    options: OutputOptions,
    *,
    columns: Sequence[str] = (),
    stream: IO[str] | None = None,
    single: bool = False,
) -> int:
    """Render record batches to ``stream`` (stdout) as :func:`ccrawl.output.emit` renders their rows.

    Returns how many rows were written.
    """
    import sys

    stream = sys.stdout if stream is None else stream
    fmt = resolve_format(options.fmt, stream)
    try:
        if fmt == "parquet" and options.template is None:
            return _write_parquet(_limited(batches, options.limit), list(options.fields or columns), stream)
        if options.template is not None or fmt not in ("jsonl", "csv", "tsv"):
            return emit(batch_records(_limited(batches, options.limit)), options, columns=columns, stream=stream,
                        single=single)
        return _write_text(_limited(batches, options.limit), fmt, options, columns, stream)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def _write_text(batches: Iterable[RecordBatch | list[Mapping[str, object]]], fmt: str, options: OutputOptions,
                declared: Sequence[str], stream: IO[str]) -> int:
    sink = _ByteSink(stream)
    sink.start()
    delimiter = "," if fmt == "csv" else "\t"
    chosen: list[str] | None = None
    keys: list[bytes] = []
    count = 0
    for batch in batches:
        rows = len(batch) if isinstance(batch, list) else batch.num_rows
        if not rows:
            continue
        if chosen is None:
            names = list(batch[0].keys()) if isinstance(batch, list) else batch.schema.names
            chosen = _fix_columns(names, declared, options.fields)
            keys = [json.dumps(c, ensure_ascii=False).encode("utf-8") for c in dict.fromkeys(chosen)]
            if fmt != "jsonl" and not options.no_header:
                sink.write(_csv_text([chosen], delimiter))
        if not isinstance(batch, list) and json_columns(batch):
            batch = batch_rows(batch)  # values no Arrow column holds exactly: written record by record
        if isinstance(batch, list):  # records no batch holds exactly: rendered as the per-record renderer does
            sink.write_text(_records_text(batch, chosen, fmt, projected=bool(options.fields or declared)))
        elif fmt == "jsonl":  # a record is a dict: a column named twice is one key
            named = list(dict.fromkeys(chosen))
            sink.write(jsonl_rows(keys[: len(named)], [_json_column(_column(batch, c)) for c in named]))
        else:
            cells = [_delimited_column(_column(batch, c)) for c in chosen]
            data = delimited_rows(cells, ord(delimiter))
            if data is None:  # a value to quote: csv.writer writes this batch, as it always did
                lists = [a.to_pylist() for _, a in cells]
                data = _csv_text(
                    ([("" if v is None else str(v)) for v in row] for row in zip(*lists, strict=True)), delimiter
                )
            sink.write(data)
        count += rows
    if chosen is None and fmt != "jsonl" and declared and not options.no_header:
        sink.write(_csv_text([list(options.fields or declared)], delimiter))  # no rows: the header still says
    sink.close()
    return count


def _records_text(records: Sequence[Mapping[str, object]], columns: list[str], fmt: str, *, projected: bool) -> str:
    """``records`` as :class:`ccrawl.output.Renderer` writes them in ``fmt`` (jsonl, csv or tsv), no header."""
    if fmt == "jsonl":
        rows = ({c: r.get(c) for c in columns} if projected else dict(r) for r in records)
        return "".join(to_json(row) + "\n" for row in rows)
    out = io.StringIO()
    csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n").writerows(
        [cell(r.get(c)) for c in columns] for r in records)
    return out.getvalue()


#: values a column of record batches holds exactly as the renderers print them: text, or integers (not bools)
_INT64 = (-(2**63), 2**63 - 1)
RECORD_CHUNK = 4096  # records per batch


def _records_chunk(chunk: list[Mapping[str, object]], names: Sequence[str]) -> RecordBatch | None:
    """``chunk`` as one record batch of ``names`` (missing keys null), or None when a column holds anything but
    text and None, or anything but integers and None (a float, a bool, a list...: the batch would not print it
    as the per-record renderer does)."""
    import pyarrow as pa

    arrays = []
    for name in names:
        kind = ""  # "str" or "int" once the column has a value
        texts: list[str | None] = []
        numbers: list[int | None] = []
        for record in chunk:
            value = record.get(name)
            if value is None:
                texts.append(None)
                numbers.append(None)
            elif type(value) is str and kind != "int":  # exactly: a subclass may print otherwise
                kind = "str"
                texts.append(value)
                numbers.append(None)
            elif type(value) is int and kind != "str" and _INT64[0] <= value <= _INT64[1]:
                kind = "int"
                texts.append(None)
                numbers.append(value)
            else:
                return None
        if kind == "int":
            arrays.append(pa.array(numbers, pa.int64()))
            continue
        try:
            arrays.append(_string_array(texts))
        except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800"): UTF-8 cannot hold it, Python text can
            return None
    return pa.RecordBatch.from_arrays(arrays, names=list(names))


def record_batches(records: Iterable[Mapping[str, object]], columns: Sequence[str],
                   size: int = RECORD_CHUNK) -> Iterator[RecordBatch | list[Mapping[str, object]]]:
    """``records`` a chunk of ``size`` at a time: a record batch where one holds the chunk exactly (see
    :func:`_records_chunk`), else the chunk's records as they are. The batch's columns are ``columns`` and
    then the first record's other keys, which is what ``--fields`` may name."""
    names: list[str] | None = None
    chunk: list[Mapping[str, object]] = []
    try:
        for record in records:
            chunk.append(record)
            if len(chunk) == size:
                names = names or list(dict.fromkeys([*columns, *chunk[0].keys()]))
                yield _batch_or_records(chunk, names)
                chunk = []
    except Exception:
        if chunk:  # the records before an error are written before it is raised, as one at a time would be
            yield chunk
        raise
    if chunk:
        yield _batch_or_records(chunk, names or list(dict.fromkeys([*columns, *chunk[0].keys()])))


def _batch_or_records(chunk: list[Mapping[str, object]],
                      names: Sequence[str]) -> RecordBatch | list[Mapping[str, object]]:
    batch = _records_chunk(chunk, names)
    return chunk if batch is None else batch


def emit_records(records: Iterable[Mapping[str, object]], options: OutputOptions, *, columns: Sequence[str] = (),
                 stream: IO[str] | None = None, single: bool = False) -> int:
    """Render ``records`` as :func:`ccrawl.output.emit` does; JSONL, CSV and TSV (with declared ``columns``, no
    ``--template``) a batch of records at a time through the batch writers."""
    import sys

    stream = sys.stdout if stream is None else stream
    fmt = resolve_format(options.fmt, stream)
    if options.template is not None or fmt not in ("jsonl", "csv", "tsv") or not columns:
        return emit(records, options, columns=columns, stream=stream, single=single)
    limited = itertools.islice(records, options.limit) if options.limit > 0 else records
    try:
        return _write_text(record_batches(limited, columns, RECORD_CHUNK), fmt, options, columns, stream)
    finally:
        close = getattr(records, "close", None)
        if close is not None:
            close()


# --------------------------------------------------------------------------------------------------
# Parquet: the per-record renderer's file (``ccrawl.output.write_parquet_records``), from the batches' buffers

#: what ``pyarrow.Table.from_pylist`` makes of the Python values of a column of this type; a type not here
#: (timestamps, lists, structs, binary, uint64...) sends the stream through the per-record writer
_PYLIST_TYPE = {"string": "string", "large_string": "string", "null": "null", "bool": "bool", "double": "double",
                "float": "double", "int8": "int64", "int16": "int64", "int32": "int64", "int64": "int64",
                "uint8": "int64", "uint16": "int64", "uint32": "int64"}
_PARQUET_ROWS = 10_000  # rows per write_table, as the per-record writer flushes


def _pylist_array(array: Array) -> Array:
    """``array`` typed as ``Table.from_pylist`` types its values (its type is in :data:`_PYLIST_TYPE`)."""
    import pyarrow as pa

    if array.null_count == len(array):
        return pa.nulls(len(array))  # every value None: from_pylist types the column null
    name = _PYLIST_TYPE[str(array.type)]
    return array if str(array.type) == name else array.cast(name)


def _rechunked(batches: Iterable[RecordBatch], rows: int) -> Iterator[list[RecordBatch]]:
    """The batches cut and joined into runs of ``rows`` rows (the last may be shorter)."""
    held: list[RecordBatch] = []
    have = 0
    for batch in batches:
        start = 0
        while start < batch.num_rows:
            take = min(rows - have, batch.num_rows - start)
            held.append(batch.slice(start, take))
            have += take
            start += take
            if have == rows:
                yield held
                held, have = [], 0
    if held:
        yield held


def _write_parquet(batches: Iterable[RecordBatch], columns: Sequence[str], stream: IO[str]) -> int:
    """The rows of ``batches`` as the per-record renderer writes them to Parquet, byte for byte: runs of
    10,000 rows, each column typed as ``Table.from_pylist`` types its values, the writer's schema the first
    run's. A run with a column of a type not in :data:`_PYLIST_TYPE` (or of JSON text) is typed by
    ``Table.from_pylist`` itself, from its records."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        raise UsageError("-o parquet writes binary data; redirect stdout to a file")
    runs = _rechunked(batches, _PARQUET_ROWS)
    first = next(runs, None)
    if first is None:
        return 0
    names = list(dict.fromkeys(columns or first[0].schema.names))  # a dict per row: a name once
    target = getattr(stream, "buffer", stream)
    writer: ParquetWriter | None = None
    count = 0
    try:
        for run in itertools.chain([first], runs):
            if any(json_columns(b) or any(str(_column(b, n).type) not in _PYLIST_TYPE for n in names) for b in run):
                table = pa.Table.from_pylist([{c: r.get(c) for c in names} for r in batch_records(run)])
            else:
                arrays = []
                for name in names:
                    pieces = [_column(b, name) for b in run]
                    joined = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
                    arrays.append(_pylist_array(joined))
                table = pa.Table.from_arrays(arrays, names=names)
            if writer is None:
                writer = pq.ParquetWriter(target, table.schema, compression="zstd")
            writer.write_table(table.cast(writer.schema))
            count += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    return count


def batch_jsonl(batch: RecordBatch) -> bytes:
    """A record batch as the JSON lines ``to_json`` writes for its rows (every column, nulls left out)."""
    if not batch.num_rows:
        return b""
    if json_columns(batch):  # values no Arrow column holds exactly: a record at a time
        return "".join(to_json(row) + "\n" for row in batch_rows(batch)).encode("utf-8")
    names = list(dict.fromkeys(batch.schema.names))
    keys = [json.dumps(n, ensure_ascii=False).encode("utf-8") for n in names]
    return jsonl_rows(keys, [_json_column(_column(batch, n)) for n in names])


def emit_any(items: Iterable[Mapping[str, object] | RecordBatch], options: OutputOptions, *,
             columns: Sequence[str] = (), stream: IO[str] | None = None, single: bool = False) -> int:
    """Render a stream whose items are records (mappings) or record batches, as they come."""
    iterator = iter(items)
    first = next(iterator, None)
    if first is None or isinstance(first, Mapping):
        import itertools

        records: Iterable[Mapping[str, object]] = iter(()) if first is None else itertools.chain([first], iterator)
        return emit(records, options, columns=columns, stream=stream, single=single)
    import itertools

    return emit_batches(itertools.chain([first], iterator), options, columns=columns, stream=stream, single=single)
