"""The columns of Common Crawl's cc-index-table, as published (``cc-index-schema-flat.json``).

Types map Spark's to Arrow's: string, integer (int32), short (int16), binary, timestamp
(microseconds, UTC). ``crawl`` and ``subset`` are partition columns: directory names
(``crawl=CC-MAIN-2024-10/subset=warc``), not stored in the part files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

#: (name, arrow type name, nullable) of the published flat schema, in order; crawl and subset are
#: the partition columns (directory names), not stored in the files.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("url_surtkey", "string", False),
    ("url", "string", False),
    ("url_host_name", "string", False),
    ("url_host_tld", "string", True),
    ("url_host_2nd_last_part", "string", True),
    ("url_host_3rd_last_part", "string", True),
    ("url_host_4th_last_part", "string", True),
    ("url_host_5th_last_part", "string", True),
    ("url_host_registry_suffix", "string", True),
    ("url_host_registered_domain", "string", True),
    ("url_host_private_suffix", "string", True),
    ("url_host_private_domain", "string", True),
    ("url_host_name_reversed", "string", True),
    ("url_protocol", "string", False),
    ("url_port", "int32", True),
    ("url_path", "string", False),
    ("url_query", "string", True),
    ("fetch_time", "timestamp", False),
    ("fetch_status", "int16", False),
    ("fetch_redirect", "string", True),
    ("content_digest", "string", True),
    ("content_mime_type", "string", True),
    ("content_mime_detected", "string", True),
    ("content_charset", "string", True),
    ("content_languages", "string", True),
    ("content_truncated", "string", True),
    ("warc_record_id", "binary", False),
    ("warc_filename", "string", False),
    ("warc_record_offset", "int32", False),
    ("warc_record_length", "int32", False),
    ("warc_segment", "string", False),
)


def arrow_schema() -> pa.Schema:
    """The published columns as a pyarrow schema (partition columns excluded)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int32": pa.int32(),
        "int16": pa.int16(),
        "binary": pa.binary(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([pa.field(n, types[t], nullable=null) for n, t, null in COLUMNS])


PARTITIONS = ("crawl", "subset")


def with_partitions() -> pa.Schema:
    """The published columns plus the two partition columns, as DuckDB and Athena see the table."""
    import pyarrow as pa

    return arrow_schema().append(pa.field("crawl", pa.string(), False)).append(pa.field("subset", pa.string(), False))
