"""The export's Arrow tables built from buffers: equal to pyarrow's own conversion, byte for byte in Parquet."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.markdown.schema import EXPORT_COLUMNS, arrow_schema, column_array, columns_to_table, rows_to_table
from tests.markdown.conftest import VIE


def _row(i: int, markdown: str, *, date: int | None = 4_102_444_800_000, simhash: int | None = -5) -> dict[str, Any]:
    return {"doc_id": f"d{i}", "url": f"https://example.com/{i}", "host": "example.com", "crawl_date": date,
            "warc_record_id": f"<urn:uuid:{i}>", "html_length": 10 * i, "markdown_length": len(markdown.encode()),
            "markdown": markdown, "language": "vie", "language_confidence": 0.75, "extractor": "h2m@5",
            "simhash": simhash}


def _reference(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pydict({n: [r.get(n) for r in rows] for n, _ in EXPORT_COLUMNS}, schema=arrow_schema())


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def test_rows_with_nulls_and_non_ascii_match_pyarrow_and_write_the_same_bytes() -> None:
    rows = [_row(0, VIE), _row(1, "", date=None, simhash=None), _row(2, "# T\n\nplain", simhash=(1 << 63) - 1),
            _row(3, "emoji \U0001f600 and NUL \x00", simhash=-(1 << 63))]
    ours, ref = rows_to_table(rows), _reference(rows)
    assert ours.equals(ref) and ours.schema == ref.schema
    assert ours.column("crawl_date").null_count == 1 and ours.column("simhash").null_count == 1
    assert _parquet(ours) == _parquet(ref)
    assert rows_to_table([]).equals(_reference([]))


def test_missing_keys_are_null_and_columns_to_table_takes_lists() -> None:
    rows: list[dict[str, Any]] = [{"url": "u"}]
    assert rows_to_table(rows).to_pylist()[0] == {n: ("u" if n == "url" else None) for n, _ in EXPORT_COLUMNS}
    data = {n: [r.get(n) for r in [_row(0, "x")]] for n, _ in EXPORT_COLUMNS}
    assert columns_to_table(data).equals(_reference([_row(0, "x")]))


@pytest.mark.parametrize(("kind", "values"), [
    ("DOUBLE", [1, 2.5, None]),
    ("INTEGER", [1, None, -3]),
    ("BLOB", [b"\x00\xff", None, b""]),
    ("BOOLEAN", [True, None]),
    ("TIMESTAMP", [0, None]),
])
def test_other_values_and_kinds_equal_pa_array(kind: str, values: list[Any]) -> None:
    kind_type = arrow_schema((("v", kind),)).field("v").type
    assert column_array(kind, values).equals(pa.array(values, type=kind_type))


def test_errors_are_pyarrows() -> None:
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate: what pa.array raises too
        column_array("VARCHAR", ["a\ud800"])
    with pytest.raises(OverflowError):
        column_array("BIGINT", [1 << 64])
    with pytest.raises(pa.ArrowTypeError):
        column_array("BIGINT", [True, 2])  # a bool is not taken for an int: pa.array decides, and refuses it
    with pytest.raises(pa.ArrowInvalid):
        column_array("VARCHAR", ["ok", b"\xff"])  # bytes in a string column go through pa.array, which refuses them


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(), st.one_of(st.none(), st.integers(-(1 << 63), (1 << 63) - 1)),
                          st.floats(allow_nan=False)), max_size=40))
def test_any_text_and_numbers_match_pyarrow(values: list[tuple[str, int | None, float]]) -> None:
    text = [t.encode("utf-8", "replace").decode("utf-8") for t, _, _ in values]  # pyarrow refuses lone surrogates too
    numbers, floats = [v for _, v, _ in values], [f for _, _, f in values]
    for kind, column in (("VARCHAR", text), ("BIGINT", numbers), ("DOUBLE", floats)):
        kind_type = arrow_schema((("v", kind),)).field("v").type
        assert column_array(kind, column).equals(pa.array(column, type=kind_type))
