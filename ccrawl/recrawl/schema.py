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

from collections.abc import Mapping
from typing import Any

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
    columns = {name: [r[name] for r in rows] for name in COLUMN_NAMES}
    return pa.Table.from_pydict(columns, schema=CAPTURE_SCHEMA)


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
