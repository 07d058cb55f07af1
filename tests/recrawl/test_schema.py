"""The capture schema against the recrawl datasets seed's table: names, types and order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from ccrawl.recrawl import schema
from ccrawl.recrawl.schema import (
    CAPTURE_SCHEMA,
    COLUMN_NAMES,
    CaptureColumns,
    capture_row,
    payload_bytes,
    rows_to_table,
)

# the recrawl datasets seed's table of the capture columns, kept in the repo so this test never skips
SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "capture-schema.tsv"
ARROW = {"VARCHAR": pa.string(), "INTEGER": pa.int32(), "BIGINT": pa.int64(), "BOOLEAN": pa.bool_(),
         "BLOB": pa.binary(), "DOUBLE": pa.float64()}


def seed_table() -> list[tuple[str, str]]:
    lines = SCHEMA_DOC.read_text(encoding="utf-8").splitlines()
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


def _varied_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(21):  # more than 8 rows, so booleans span several bytes of the bit buffer
        rows.append(capture_row(
            {"url": f"https://h{i}.test/é/{i}", "host": f"h{i}.test", "status": 200 + i,
             "fetched_at": 1_700_000_000_000 + i, "unchanged": i % 3 == 0, "body_length": i,
             "error": "" if i % 4 else "dns", "meta_json": "{}",
             "resp_headers": '{"X":["\\u2028 ü"]}', "body": None},
            {"simhash": (1 << 64) - i, "markdown": "ü" * i, "language_confidence": i / 7, "text": "t" * (i % 2)},
        ))
        rows[-1]["body"] = bytes(range(i % 256)) + b"\x00"
    return rows


def test_tables_built_from_buffers_equal_what_pyarrow_converts_from_the_same_values() -> None:
    rows = _varied_rows()
    expected = pa.Table.from_pydict({n: [r[n] for r in rows] for n in COLUMN_NAMES}, schema=CAPTURE_SCHEMA)
    built = rows_to_table(rows)
    built.validate(full=True)
    assert built.equals(expected)
    assert rows_to_table([]).num_rows == 0


def test_capture_columns_apply_capture_row_rules_and_count_the_payload() -> None:
    rows = _varied_rows()
    columns = CaptureColumns()
    sizes = []
    for row in rows:
        fields = {k: v for k, v in row.items() if k not in ("body", "markdown_length", "text_length")}
        fields["simhash"] = fields["simhash"] % (1 << 64)  # given unsigned, stored signed
        fields["_seq"] = 7  # routing keys are no column
        sizes.append(columns.append(fields, row["body"]))
    assert sizes == [payload_bytes(r) for r in rows]
    assert len(columns) == len(rows)
    assert columns.take_table().equals(rows_to_table(rows))
    assert len(columns) == 0 and columns.take_table().num_rows == 0, "taking the table empties the buffer"


def test_markdown_and_text_given_as_utf8_bytes_make_the_same_table() -> None:
    """The extract processes send Markdown and text encoded (with or without their lengths)."""
    rows = _varied_rows()
    as_str, as_bytes = CaptureColumns(), CaptureColumns()
    for row in rows:
        fields = {k: v for k, v in row.items() if k not in ("body", "markdown_length", "text_length")}
        as_str.append(fields, row["body"])
        encoded = {**fields, "markdown": row["markdown"].encode("utf-8"), "text": row["text"].encode("utf-8")}
        if row["markdown"]:
            encoded["markdown_length"] = len(encoded["markdown"])  # sent by the extract process
        size = as_bytes.append(encoded, row["body"])
        # the payload counts the encoded bytes of Markdown and text
        assert size == payload_bytes(row) - len(row["markdown"]) - len(row["text"]) + len(
            encoded["markdown"]) + len(encoded["text"])
    table = as_bytes.take_table()
    table.validate(full=True)
    assert table.equals(as_str.take_table())
    assert table.equals(rows_to_table(rows))


def test_binary_columns_past_the_offset_limit_become_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "_OFFSET_LIMIT", 10)
    values = [b"abc", b"defgh", b"ij", b"klmnop", b"", b"q"]
    built = schema._bytes_array(pa.binary(), values)
    assert isinstance(built, pa.ChunkedArray) and built.num_chunks == 2
    assert built.to_pylist() == values
    with pytest.raises(ValueError, match="does not fit"):
        schema._bytes_array(pa.binary(), [b"x" * 11])


def test_writing_a_table_does_not_import_pandas() -> None:
    code = ("import sys; from ccrawl.recrawl.schema import capture_row, rows_to_table; "
            "rows_to_table([capture_row({'url': 'u', 'body': b'x'})]); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_large_bodies_are_arrays_over_their_own_bytes_and_read_back_the_same(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    big = [bytes([65 + i]) * (schema.ZERO_COPY_MIN + i) for i in range(3)]
    values = [b"small", big[0], big[1], b"", b"tiny", big[2], b"end"]
    built = schema._binary_array(values)
    assert isinstance(built, pa.ChunkedArray) and built.to_pylist() == values
    # small runs joined, each large body alone, in row order
    assert [len(c) for c in built.chunks] == [1, 1, 1, 2, 1, 1]
    assert schema._binary_array([b"a", b"b"]).to_pylist() == [b"a", b"b"], "all small: one joined array"
    rows = [capture_row({"url": f"u{i}", "body": v, "body_length": len(v)}) for i, v in enumerate(values)]
    table = rows_to_table(rows)
    table.validate(full=True)
    pq.write_table(table, tmp_path / "t.parquet", compression="zstd")
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.schema.equals(CAPTURE_SCHEMA) and back.column("body").to_pylist() == values
