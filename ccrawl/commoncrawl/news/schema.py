"""The CC-NEWS index schema: cc-index's column names, in the seed's order, with int64 record offsets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

#: (name, Arrow type name, DuckDB type) in file order. Offsets and lengths are int64, not cc-index's
#: int32: a 1 GB archive uses half of int32's range, one large month away from wrapping.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("url_surtkey", "string", "VARCHAR"),
    ("url", "string", "VARCHAR"),
    ("url_host_name", "string", "VARCHAR"),
    ("url_host_registered_domain", "string", "VARCHAR"),
    ("url_host_tld", "string", "VARCHAR"),
    ("url_protocol", "string", "VARCHAR"),
    ("fetch_time", "timestamp", "TIMESTAMP WITH TIME ZONE"),
    ("fetch_status", "int32", "INTEGER"),
    ("fetch_redirect", "string", "VARCHAR"),
    ("content_digest", "string", "VARCHAR"),
    ("content_mime_type", "string", "VARCHAR"),
    ("content_mime_detected", "string", "VARCHAR"),
    ("content_charset", "string", "VARCHAR"),
    ("content_languages", "string", "VARCHAR"),
    ("content_truncated", "string", "VARCHAR"),
    ("warc_filename", "string", "VARCHAR"),
    ("warc_record_offset", "int64", "BIGINT"),
    ("warc_record_length", "int64", "BIGINT"),
    ("content_language_confidence", "double", "DOUBLE"),
    ("content_language_declared", "string", "VARCHAR"),
    ("content_length", "int64", "BIGINT"),
    ("warc_record_id", "string", "VARCHAR"),
)

NAMES: tuple[str, ...] = tuple(c[0] for c in COLUMNS)

#: The CDX fields ``news search`` prints (cc-index names mapped to the CDX API's), so its JSONL pipes into
#: ``fetch -`` and reads like ``search`` output.
CDX_FIELDS: tuple[tuple[str, str], ...] = (
    ("urlkey", "url_surtkey"),
    ("timestamp", "fetch_time"),
    ("url", "url"),
    ("mime", "content_mime_type"),
    ("mime-detected", "content_mime_detected"),
    ("status", "fetch_status"),
    ("digest", "content_digest"),
    ("length", "warc_record_length"),
    ("offset", "warc_record_offset"),
    ("filename", "warc_filename"),
    ("charset", "content_charset"),
    ("languages", "content_languages"),
    ("redirect", "fetch_redirect"),
)
CDX_COLUMNS: tuple[str, ...] = tuple(c[0] for c in CDX_FIELDS)


def arrow_schema() -> pa.Schema:
    """The index as a ``pyarrow.Schema`` (fetch_time is UTC microseconds, as Spark writes cc-index)."""
    import pyarrow as pa

    types = {
        "string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "double": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([pa.field(name, types[kind]) for name, kind, _ in COLUMNS])


def cdx_row(row: dict[str, Any]) -> dict[str, Any]:
    """An index row as CDX fields (timestamp as ``YYYYMMDDhhmmss``; None stays None)."""
    out: dict[str, Any] = {}
    for cdx, col in CDX_FIELDS:
        value = row.get(col)
        if col == "fetch_time" and value is not None:
            value = value.strftime("%Y%m%d%H%M%S")
        elif col in ("fetch_status", "warc_record_length", "warc_record_offset") and value is not None:
            value = str(value)
        out[cdx] = value
    return out


def cdx_batch(table: pa.Table) -> pa.RecordBatch:
    """Index rows as :func:`cdx_row` gives them, a column at a time: a record batch of :data:`CDX_COLUMNS`, all
    text (the timestamp ``YYYYMMDDhhmmss`` in UTC, the numbers in decimal), a missing column null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = []
    for _, col in CDX_FIELDS:
        if col not in table.column_names:
            arrays.append(pa.nulls(table.num_rows, pa.string()))
            continue
        column = table.column(col).combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        if col == "fetch_time":
            seconds = column.cast(pa.timestamp("s", tz=column.type.tz), safe=False)
            column = pc.strftime(seconds, format="%Y%m%d%H%M%S")
        elif not pa.types.is_string(column.type):
            column = column.cast(pa.string())
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, names=list(CDX_COLUMNS))
