"""The capture schema against the recrawl datasets seed's table: names, types and order."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ccrawl.recrawl.schema import CAPTURE_SCHEMA, capture_row, rows_to_table

SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_ba9a5c46f2cfb834.txt"
ARROW = {"VARCHAR": pa.string(), "INTEGER": pa.int32(), "BIGINT": pa.int64(), "BOOLEAN": pa.bool_(),
         "BLOB": pa.binary(), "DOUBLE": pa.float64()}


def seed_table() -> list[tuple[str, str]]:
    if not SEED.exists():
        pytest.skip(f"seed document not found at {SEED}")
    lines = SEED.read_text().splitlines()
    start = lines.index("Column\tType\tFrom\tDescription") + 1
    out = []
    for line in lines[start:]:
        cells = line.split("\t")
        if len(cells) != 4:
            break
        out.append((cells[0], cells[1]))
    return out


def test_schema_matches_seed_table_in_names_types_and_order() -> None:
    table = seed_table()
    assert len(table) == 32
    assert [(f.name, f.type) for f in CAPTURE_SCHEMA] == [(n, ARROW[t]) for n, t in table]


def test_failure_row_has_empty_body_digest_and_headers() -> None:
    row = capture_row({"url": "https://a.test/", "host": "a.test", "error": "dns", "status": 0,
                       "meta_json": '{"error_detail": "no such host"}', "body": None})
    assert row["body"] == b"" and row["digest"] == "" and row["resp_headers"] == ""
    assert row["extractor"] == "" and row["error"] == "dns"


def test_unsigned_simhash_is_stored_as_signed_bigint_of_same_bits() -> None:
    row = capture_row({"url": "u"}, {"simhash": (1 << 64) - 1, "markdown": "héllo"})
    assert row["simhash"] == -1
    assert row["markdown_length"] == len("héllo".encode())
    t = rows_to_table([row])
    assert t.schema == CAPTURE_SCHEMA and t.num_rows == 1
