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

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


def arrow_schema(columns: Sequence[tuple[str, str]] = EXPORT_COLUMNS) -> Any:
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


def rows_to_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]] = EXPORT_COLUMNS) -> Any:
    """An Arrow table of ``rows`` in the schema of ``columns`` (missing keys are NULL)."""
    import pyarrow as pa

    schema = arrow_schema(columns)
    data = {name: [row.get(name) for row in rows] for name, _ in columns}
    return pa.Table.from_pydict(data, schema=schema)


def write_parquet(table: Any, path: Path, provenance: Mapping[str, str]) -> int:
    """Write ``table`` to ``path`` atomically (``.tmp``, fsync, rename); returns the file size.

    zstd-compressed, with ``provenance`` merged into the schema metadata. A reader never sees a
    half-written file at ``path``: the rename happens after the footer is on disk.
    """
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(table.schema.metadata or {})
    meta.update({k.encode(): v.encode() for k, v in provenance.items()})
    table = table.replace_schema_metadata(meta)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path.stat().st_size


def provenance_of(path: Path | str) -> dict[str, str]:
    """The ``ccrawl.*`` key-value metadata of a Parquet file."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"ccrawl.")}
