"""The Markdown export schema and its Parquet writer (zstd, provenance in the file's metadata).

=====================  =========  ===========================================================
column                 type       what
=====================  =========  ===========================================================
doc_id                 VARCHAR    the WARC record's UUID (``WARC-Record-ID`` without ``urn:uuid:``)
url                    VARCHAR    ``WARC-Target-URI``
host                   VARCHAR    the URL's host name, lowercased
crawl_date             TIMESTAMP  ``WARC-Date`` (UTC, milliseconds)
warc_record_id         VARCHAR    ``WARC-Record-ID`` as written (``<urn:uuid:...>``)
html_length            BIGINT     bytes of the payload the row was made from (HTML; text for WET)
markdown_length        BIGINT     bytes of ``markdown`` in UTF-8
markdown               VARCHAR    the page as Markdown (plain text for the ``wet`` engine)
language               VARCHAR    ISO 639-3 detected in the extracted text, ``""`` when unknown
language_confidence    DOUBLE     0..1 (see :mod:`ccrawl.extract.lang`)
extractor              VARCHAR    ``name@version`` of the engine
simhash                BIGINT     64-bit fingerprint of ``markdown`` (signed), NULL under 512 bytes
=====================  =========  ===========================================================

Every file carries the run's provenance in its key-value metadata (``ccrawl.version``,
``ccrawl.extractor``, ``ccrawl.canon``, ``ccrawl.command``, ``ccrawl.crawl``, ``ccrawl.source``), so a
shard on its own says what made it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl import durable

if TYPE_CHECKING:
    import pyarrow as pa

EXPORT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("doc_id", "VARCHAR"),
    ("url", "VARCHAR"),
    ("host", "VARCHAR"),
    ("crawl_date", "TIMESTAMP"),
    ("warc_record_id", "VARCHAR"),
    ("html_length", "BIGINT"),
    ("markdown_length", "BIGINT"),
    ("markdown", "VARCHAR"),
    ("language", "VARCHAR"),
    ("language_confidence", "DOUBLE"),
    ("extractor", "VARCHAR"),
    ("simhash", "BIGINT"),
)
COLUMN_NAMES = tuple(name for name, _ in EXPORT_COLUMNS)

#: Rows per Parquet row group: small enough that a reader of one column stays light.
ROW_GROUP_ROWS = 5_000


def arrow_schema(columns: Sequence[tuple[str, str]] = EXPORT_COLUMNS) -> pa.Schema:
    """The pyarrow schema of ``columns`` (DuckDB type names)."""
    import pyarrow as pa

    kinds = {
        "VARCHAR": pa.string(),
        "BIGINT": pa.int64(),
        "INTEGER": pa.int32(),
        "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(),
        "BLOB": pa.binary(),
        "TIMESTAMP": pa.timestamp("ms", tz="UTC"),
    }
    return pa.schema([pa.field(name, kinds[kind]) for name, kind in columns])


def rows_to_table(rows: Sequence[Mapping[str, object]],
                  columns: Sequence[tuple[str, str]] = EXPORT_COLUMNS) -> pa.Table:
    """An Arrow table of ``rows`` in the schema of ``columns`` (missing keys are NULL)."""
    return columns_to_table({name: [row.get(name) for row in rows] for name, _ in columns}, columns)


def columns_to_table(data: Mapping[str, Sequence[object]],
                     columns: Sequence[tuple[str, str]] = EXPORT_COLUMNS) -> pa.Table:
    """An Arrow table from one list of values per column (``None`` is NULL), in the schema of ``columns``.

    The arrays are assembled from their buffers (:func:`column_array`) rather than with
    ``pa.array``/``Table.from_pydict``: pyarrow imports pandas the first time ``pa.array`` sees a
    Python list, which cost a one-shard ``markdown export`` 0.3-0.9 s of CPU (bench/README.md).
    """
    import pyarrow as pa

    schema = arrow_schema(columns)
    arrays = [column_array(kind, data[name]) for name, kind in columns]
    return pa.Table.from_arrays(arrays, schema=schema)


_FIXED = {"BIGINT": "q", "TIMESTAMP": "q", "INTEGER": "i", "DOUBLE": "d"}
_OFFSET_LIMIT = (1 << 31) - 1  # string and binary arrays have 32-bit offsets


def column_array(kind: str, values: Sequence[object]) -> pa.Array:
    """One Arrow array of DuckDB type ``kind`` from Python values, equal to what ``pa.array`` makes of them.

    Strings (``str``), bytes, integers, floats and ``None`` take the buffer path; a column holding
    anything else (a ``datetime``, a ``bool`` for a number, ...) goes through ``pa.array``, which
    knows every conversion.
    """
    import pyarrow as pa

    arrow_type = arrow_schema((("v", kind),)).field("v").type
    n = len(values)
    nulls = sum(1 for v in values if v is None)
    validity = _validity(values) if nulls else None
    try:
        if kind in ("VARCHAR", "BLOB"):
            want = str if kind == "VARCHAR" else bytes
            if not all(type(v) is want for v in values if v is not None):
                raise TypeError
            encoded = [v.encode("utf-8") if isinstance(v, str) else v if isinstance(v, bytes) else b"" for v in values]
            if sum(map(len, encoded)) > _OFFSET_LIMIT:
                raise OverflowError  # pa.array splits such a column into chunks: leave it to it
            offsets = array("i", accumulate(map(len, encoded), initial=0))
            buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
            return pa.Array.from_buffers(arrow_type, n, buffers, null_count=nulls)
        code = _FIXED.get(kind)
        if code is not None:
            want_types: tuple[type, ...] = (float, int) if code == "d" else (int,)
            if not all(type(v) in want_types for v in values if v is not None):
                raise TypeError
            data = array(code, [v if isinstance(v, (int, float)) else 0 for v in values])
            return pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(data)], null_count=nulls)
    except (TypeError, OverflowError):
        pass
    return pa.array(values, type=arrow_type)


def _validity(values: Sequence[object]) -> pa.Buffer:
    import pyarrow as pa

    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bits)


def write_parquet(table: pa.Table, path: Path, provenance: Mapping[str, str]) -> int:
    """Write ``table`` to ``path`` atomically (``.tmp``, fsync, rename); returns the file size.

    zstd-compressed, with ``provenance`` merged into the schema metadata. A reader never sees a
    half-written file at ``path``: the rename happens after the footer is on disk.
    """
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(table.schema.metadata or {})
    meta.update({k.encode(): v.encode() for k, v in provenance.items()})
    table = table.replace_schema_metadata(meta)
    with durable.writing(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    return path.stat().st_size


def provenance_of(path: Path | str) -> dict[str, str]:
    """The ``ccrawl.*`` key-value metadata of a Parquet file."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"ccrawl.")}
