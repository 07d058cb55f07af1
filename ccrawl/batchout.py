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
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, Any

from ccrawl import accel
from ccrawl.errors import UsageError
from ccrawl.output import OutputOptions, cell, emit, json_default, resolve_format

STR, INT, RAW = 0, 1, 2  # column kinds of the writers: text, integer, JSON text written as it is


# --------------------------------------------------------------------------------------------------
# the pure-Python twins of csrc/textout.pyx


def _values(kind: int, array: Any) -> list[Any]:
    values: list[Any] = array.to_pylist()
    return values


def delimited_rows_py(columns: list[tuple[int, Any]], delimiter: int) -> bytes | None:
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


def jsonl_rows_py(keys: list[bytes], columns: list[tuple[int, Any]]) -> bytes:
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


def string_array_py(values: list[str | None]) -> Any:
    """A pyarrow string array of ``values`` built from its buffers (``pyarrow.array``'s first call imports
    pandas, half a second of a command's start-up)."""
    import array
    import itertools

    import pyarrow as pa

    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    data = b"".join(encoded)
    large = len(data) >= 2**31 - 1
    offsets = array.array("q" if large else "i", [0])
    offsets.extend(itertools.accumulate(len(e) for e in encoded))
    nulls = sum(1 for v in values if v is None)
    validity = None
    if nulls:
        bits = bytearray((len(values) + 7) // 8)
        for i, v in enumerate(values):
            if v is not None:
                bits[i >> 3] |= 1 << (i & 7)
        validity = pa.py_buffer(bytes(bits))
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(values),
                                 [validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)], null_count=nulls)


def _string_array(values: list[str | None]) -> Any:
    surt = accel.native("surt")
    if surt is not None:
        built = surt.as_string_array(values)
        if built is not None:
            return built
    return string_array_py(values)


def _column(batch: Any, name: str) -> Any:
    import pyarrow as pa

    index = batch.schema.get_field_index(name)
    if index < 0:
        return pa.nulls(batch.num_rows, pa.string())
    array = batch.column(index)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _is_text(array: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(array.type) or pa.types.is_large_string(array.type) or pa.types.is_null(array.type))


def _null_as_text(array: Any) -> Any:
    import pyarrow as pa

    return pa.nulls(len(array), pa.string()) if pa.types.is_null(array.type) else array


def _delimited_column(array: Any) -> tuple[int, Any]:
    """A column as CSV cells: text and integers as they are, anything else through :func:`cell`."""
    import pyarrow as pa

    if _is_text(array):
        return STR, _null_as_text(array)
    if pa.types.is_integer(array.type):
        return INT, array
    return STR, _string_array([None if v is None else cell(v) for v in array.to_pylist()])


def _json_column(array: Any) -> tuple[int, Any]:
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

    def __init__(self, stream: IO[Any]) -> None:
        self.stream = stream
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        buffer = getattr(stream, "buffer", None)
        self.buffer = buffer if buffer is not None and encoding in ("utf-8", "utf8") else None

    def write(self, data: bytes) -> None:
        if self.buffer is not None:
            self.buffer.write(data)
        else:
            self.stream.write(data.decode("utf-8"))

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


def batch_records(batches: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """The rows of ``batches`` as dicts (the per-record renderer's input)."""
    for batch in batches:
        yield from batch.to_pylist()


def _limited(batches: Iterable[Any], limit: int) -> Iterator[Any]:
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
    batches: Iterable[Any],
    options: OutputOptions,
    *,
    columns: Sequence[str] = (),
    stream: IO[Any] | None = None,
    single: bool = False,
) -> int:
    """Render record batches to ``stream`` (stdout) as :func:`ccrawl.output.emit` renders their rows.

    Returns how many rows were written.
    """
    import sys

    stream = sys.stdout if stream is None else stream
    fmt = resolve_format(options.fmt, stream)
    if options.template is not None or fmt not in ("jsonl", "csv", "tsv"):
        return emit(batch_records(_limited(batches, options.limit)), options, columns=columns, stream=stream,
                    single=single)
    try:
        return _write_text(_limited(batches, options.limit), fmt, options, columns, stream)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def _write_text(batches: Iterable[Any], fmt: str, options: OutputOptions, declared: Sequence[str],
                stream: IO[Any]) -> int:
    sink = _ByteSink(stream)
    sink.start()
    delimiter = "," if fmt == "csv" else "\t"
    chosen: list[str] | None = None
    keys: list[bytes] = []
    count = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        if chosen is None:
            chosen = _fix_columns(batch.schema.names, declared, options.fields)
            keys = [json.dumps(c, ensure_ascii=False).encode("utf-8") for c in dict.fromkeys(chosen)]
            if fmt != "jsonl" and not options.no_header:
                sink.write(_csv_text([chosen], delimiter))
        if fmt == "jsonl":  # a record is a dict: a column named twice is one key
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
        count += batch.num_rows
    if chosen is None and fmt != "jsonl" and declared and not options.no_header:
        sink.write(_csv_text([list(options.fields or declared)], delimiter))  # no rows: the header still says
    sink.close()
    return count


def batch_jsonl(batch: Any) -> bytes:
    """A record batch as the JSON lines ``to_json`` writes for its rows (every column, nulls left out)."""
    names = list(dict.fromkeys(batch.schema.names))
    keys = [json.dumps(n, ensure_ascii=False).encode("utf-8") for n in names]
    return jsonl_rows(keys, [_json_column(_column(batch, n)) for n in names]) if batch.num_rows else b""


def emit_any(items: Iterable[Any], options: OutputOptions, *, columns: Sequence[str] = (),
             stream: IO[Any] | None = None, single: bool = False) -> int:
    """Render a stream whose items are records (mappings) or record batches, as they come."""
    iterator = iter(items)
    first = next(iterator, None)
    if first is None or isinstance(first, Mapping):
        import itertools

        records: Iterable[Mapping[str, Any]] = iter(()) if first is None else itertools.chain([first], iterator)
        return emit(records, options, columns=columns, stream=stream, single=single)
    import itertools

    return emit_batches(itertools.chain([first], iterator), options, columns=columns, stream=stream, single=single)
