"""The capture schema of a recrawl: one row per fetch attempt, column for column as the seed's table.

The order and the types are the contract with every reader of a published capture shard
(``open-index/ccrawl-recrawl-*``): the ami capture columns first, the rendered-text columns
appended after them. SQL types map to Arrow as VARCHAR->string, INTEGER->int32,
BIGINT->int64, BOOLEAN->bool, BLOB->binary, DOUBLE->float64.

:func:`capture_row` builds one row from the fetch side's fields and the extraction side's
fields, filling every column the two did not provide with the schema's empty value (``''``,
``0``, ``False``, ``b''``), so a failure row has no body, digest or headers and a row nobody
rendered has ``extractor == ''``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any

import numpy as np
import pyarrow as pa

#: (name, SQL type as the seed writes it) in the seed's order.
CAPTURE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("url", "VARCHAR"),
    ("host", "VARCHAR"),
    ("status", "INTEGER"),
    ("fetched_at", "BIGINT"),
    ("content_type", "VARCHAR"),
    ("body_length", "BIGINT"),
    ("digest", "VARCHAR"),
    ("unchanged", "BOOLEAN"),
    ("etag", "VARCHAR"),
    ("last_modified", "VARCHAR"),
    ("warc_file", "VARCHAR"),
    ("warc_offset", "BIGINT"),
    ("warc_length", "BIGINT"),
    ("error", "VARCHAR"),
    ("meta_json", "VARCHAR"),
    ("markdown", "VARCHAR"),
    ("markdown_length", "BIGINT"),
    ("ttfb_ms", "BIGINT"),
    ("fetch_duration_ms", "BIGINT"),
    ("final_url", "VARCHAR"),
    ("ip_address", "VARCHAR"),
    ("resp_headers", "VARCHAR"),
    ("req_headers", "VARCHAR"),
    ("body", "BLOB"),
    ("title", "VARCHAR"),
    ("text", "VARCHAR"),
    ("text_length", "BIGINT"),
    ("word_count", "BIGINT"),
    ("language", "VARCHAR"),
    ("language_confidence", "DOUBLE"),
    ("simhash", "BIGINT"),
    ("extractor", "VARCHAR"),
)

SQL_TO_ARROW: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "BLOB": pa.binary(),
    "DOUBLE": pa.float64(),
}

_EMPTY: dict[str, Any] = {
    "VARCHAR": "",
    "INTEGER": 0,
    "BIGINT": 0,
    "BOOLEAN": False,
    "BLOB": b"",
    "DOUBLE": 0.0,
}

#: Every column is declared non-null: an absent value is the type's empty value, so
#: ``WHERE error = ''`` works without a ``NULL`` branch, as the seed's queries assume.
CAPTURE_SCHEMA: pa.Schema = pa.schema(
    [pa.field(name, SQL_TO_ARROW[sql], nullable=False) for name, sql in CAPTURE_COLUMNS]
)

COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in CAPTURE_COLUMNS)

#: Columns the extraction stage fills; everything else comes from the fetch.
EXTRACTION_COLUMNS: tuple[str, ...] = (
    "markdown",
    "markdown_length",
    "title",
    "text",
    "text_length",
    "word_count",
    "language",
    "language_confidence",
    "simhash",
    "extractor",
)

#: The fixed vocabulary of the ``error`` column; ``''`` is success.
ERROR_CLASSES: tuple[str, ...] = ("dns", "timeout", "refused", "tls", "skip", "other")

_INT64_MAX = (1 << 63) - 1


def empty_row() -> dict[str, Any]:
    """A row holding every column's empty value."""
    return {name: _EMPTY[sql] for name, sql in CAPTURE_COLUMNS}


def _signed64(value: int) -> int:
    """A 64-bit fingerprint stored in BIGINT: the unsigned bits read as two's complement."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value > _INT64_MAX else value


def capture_row(fetched: Mapping[str, Any], extracted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One capture row from the fetch's fields and (optionally) the extraction's fields.

    Unknown keys are ignored; ``None`` becomes the column's empty value. ``simhash`` may be
    given unsigned (a 64-bit fingerprint) and is stored as the signed BIGINT of the same bits.
    """
    row = empty_row()
    for source in (fetched, extracted or {}):
        for name, value in source.items():
            if name in row and value is not None:
                row[name] = value
    row["simhash"] = _signed64(int(row["simhash"]))
    if not row["markdown_length"] and row["markdown"]:
        row["markdown_length"] = len(row["markdown"].encode("utf-8"))
    if not row["text_length"] and row["text"]:
        row["text_length"] = len(row["text"].encode("utf-8"))
    return row


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """An Arrow table in the capture schema from rows built by :func:`capture_row`."""
    return columns_to_table({name: [r[name] for r in rows] for name in COLUMN_NAMES})


def columns_to_table(columns: Mapping[str, list[Any]]) -> pa.Table:
    """An Arrow table in the capture schema from one list of values per column.

    The arrays are assembled from their buffers rather than with ``pa.array``: that function
    imports pandas the first time it sees a list (to ask whether the list is a pandas object),
    which cost a writer process a second of CPU at start-up, and the buffers are also cheaper
    to build than the per-value conversion.
    """
    arrays = [_ARRAY_OF[sql](columns[name]) for name, sql in CAPTURE_COLUMNS]
    return pa.Table.from_arrays(arrays, schema=CAPTURE_SCHEMA)


_OFFSET_LIMIT = (1 << 31) - 1  # string and binary arrays have 32-bit offsets


def _bytes_array(kind: pa.DataType, values: list[bytes]) -> pa.Array | pa.ChunkedArray:
    """One binary-like array from encoded values, chunked past 2 GiB as ``pa.array`` would."""
    if sum(map(len, values)) <= _OFFSET_LIMIT:
        return _one_bytes_array(kind, values)
    chunks: list[pa.Array] = []
    start = total = 0
    for end, value in enumerate(values):
        if len(value) > _OFFSET_LIMIT:
            raise ValueError(f"a {kind} value of {len(value)} bytes does not fit one array")
        if total + len(value) > _OFFSET_LIMIT:
            chunks.append(_one_bytes_array(kind, values[start:end]))
            start, total = end, 0
        total += len(value)
    chunks.append(_one_bytes_array(kind, values[start:]))
    return pa.chunked_array(chunks, type=kind)


def _one_bytes_array(kind: pa.DataType, values: list[bytes]) -> pa.Array:
    offsets = array("i", accumulate(map(len, values), initial=0))
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))])


def _string_array(values: list[str | bytes]) -> pa.Array | pa.ChunkedArray:
    # bytes are taken as the value's UTF-8 already: the extract processes hand Markdown and text
    # on encoded, so a writer neither decodes them from the ring nor encodes them again here.
    return _bytes_array(pa.string(), [v if isinstance(v, bytes) else v.encode("utf-8") for v in values])


#: A body at least this long becomes an array of its own over the ``bytes`` object (no copy);
#: shorter ones are joined into one buffer as before.
ZERO_COPY_MIN = 32 * 1024


def _binary_array(values: list[bytes]) -> pa.Array | pa.ChunkedArray:
    """The ``body`` column. Real pages (~150 KB) are not copied into a joined buffer: each large
    body is a one-value array over its own ``bytes`` (``pa.py_buffer`` keeps a reference), and the
    column is the chunked array of those and of the small ones joined. The joined copy cost a
    fetch process 9-27 ms per 170-page row group (0.05-0.16 ms a page); the Parquet writer copies
    each value into its pages either way, so the file holds the same values (its pages are cut
    at chunk boundaries, so it may differ in size by a fraction of a percent)."""
    if not any(len(v) >= ZERO_COPY_MIN for v in values):
        return _bytes_array(pa.binary(), values)
    chunks: list[pa.Array] = []
    run: list[bytes] = []

    def flush_run() -> None:
        if run:
            joined = _bytes_array(pa.binary(), run)
            chunks.extend(joined.chunks if isinstance(joined, pa.ChunkedArray) else [joined])
            run.clear()

    for value in values:
        if len(value) < ZERO_COPY_MIN:
            run.append(value)
            continue
        if len(value) > _OFFSET_LIMIT:
            raise ValueError(f"a {pa.binary()} value of {len(value)} bytes does not fit one array")
        flush_run()
        offsets = pa.py_buffer(array("i", (0, len(value))))
        chunks.append(pa.Array.from_buffers(pa.binary(), 1, [None, offsets, pa.py_buffer(value)]))
    flush_run()
    return pa.chunked_array(chunks, type=pa.binary())


def _fixed_array(kind: pa.DataType, code: str) -> Callable[[list[Any]], pa.Array]:
    """A builder of ``kind`` arrays from Python numbers, through ``array.array`` (which refuses a
    float for an integer column and an int out of the column's range, as ``pa.array`` does)."""

    def build(values: list[Any]) -> pa.Array:
        return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(array(code, values))])

    return build


def _bool_array(values: list[bool]) -> pa.Array:
    bits = np.packbits(np.fromiter(values, dtype=np.bool_, count=len(values)), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


_ARRAY_OF: dict[str, Any] = {
    "VARCHAR": _string_array,
    "INTEGER": _fixed_array(pa.int32(), "i"),
    "BIGINT": _fixed_array(pa.int64(), "q"),
    "BOOLEAN": _bool_array,
    "BLOB": _binary_array,
    "DOUBLE": _fixed_array(pa.float64(), "d"),
}


class CaptureColumns:
    """Capture rows gathered column by column, for a writer that turns them into row groups.

    :meth:`append` applies :func:`capture_row`'s rules (unknown keys ignored, ``None`` is the
    empty value, an unsigned simhash stored signed, Markdown and text lengths filled in) straight
    into one list per column, without building a row dict per row and taking it apart again.
    A string column's value may also come as its UTF-8 ``bytes`` (the extract processes send
    Markdown and text that way, with their lengths); the payload then counts its bytes.
    """

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in COLUMN_NAMES}
        self._slots = [(name, _EMPTY[sql], self.columns[name]) for name, sql in CAPTURE_COLUMNS if name != "body"]
        self.rows = 0

    def append(self, fields: Mapping[str, Any], body: bytes) -> int:
        """Add one row from its fields and body; returns its :func:`payload_bytes`."""
        get = fields.get
        for name, empty, column in self._slots:
            value = get(name)
            column.append(empty if value is None else value)
        columns = self.columns
        columns["body"].append(body)
        simhash = columns["simhash"]
        simhash[-1] = _signed64(int(simhash[-1]))
        markdown, text = columns["markdown"][-1], columns["text"][-1]
        if markdown and not columns["markdown_length"][-1]:
            columns["markdown_length"][-1] = _utf8_length(markdown)
        if text and not columns["text_length"][-1]:
            columns["text_length"][-1] = _utf8_length(text)
        self.rows += 1
        return (len(body) + len(markdown) + len(text) + len(columns["resp_headers"][-1])
                + len(columns["req_headers"][-1]) + len(columns["meta_json"][-1]) + len(columns["url"][-1]))

    def __len__(self) -> int:
        return self.rows

    def take_table(self) -> pa.Table:
        """The gathered rows as a table in the capture schema; the buffer is empty afterwards."""
        table = columns_to_table(self.columns)
        for column in self.columns.values():
            column.clear()
        self.rows = 0
        return table


def _utf8_length(value: str | bytes) -> int:
    return len(value) if isinstance(value, bytes) else len(value.encode("utf-8"))


def payload_bytes(row: Mapping[str, Any]) -> int:
    """Uncompressed payload a row adds to a shard (what ``--shard-size`` counts)."""
    return (
        len(row["body"])
        + len(row["markdown"])
        + len(row["text"])
        + len(row["resp_headers"])
        + len(row["req_headers"])
        + len(row["meta_json"])
        + len(row["url"])
    )
