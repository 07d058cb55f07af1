"""Records as record batches of declared fields and back, exactly (ccrawl.rowbatch); run both ways
(``CCRAWL_NO_EXTENSIONS=1`` builds text columns with the pure-Python twin)."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import pytest

from ccrawl import batchout, rowbatch
from ccrawl.output import OutputOptions, emit, to_json

FIELDS = (("url", "string"), ("status", "int64"), ("links", "list<string>"), ("title", "string"))


def _same(rows: list[dict[str, object]], fields: tuple[tuple[str, str], ...] = FIELDS) -> None:
    batch = rowbatch.rows_batch(rows, fields)
    back = rowbatch.batch_rows(batch)
    assert len(back) == len(rows)
    for got, want in zip(back, rows, strict=True):
        assert {k: v for k, v in got.items() if k in want} == want  # every value, its type included
        assert all(v is None for k, v in got.items() if k not in want)
        assert [type(got[k]) for k in want] == [type(v) for v in want.values()]
        assert to_json(got) == to_json(want)  # the key order a record's JSON line has
    for fmt in ("jsonl", "csv", "tsv", "table", "json"):
        columns = [name for name, _ in fields]
        want_text, got_text = io.StringIO(), io.StringIO()
        emit(rows, OutputOptions(fmt=fmt), columns=columns, stream=want_text)
        batchout.emit_batches([batch], OutputOptions(fmt=fmt), columns=columns, stream=got_text)
        assert got_text.getvalue() == want_text.getvalue(), fmt


def test_declared_kinds_hold_their_values_as_typed_columns() -> None:
    rows: list[dict[str, object]] = [
        {"url": "https://a.test/é,\"x\"\t\n\u2028", "status": 200, "links": ["a", "", "b\tc"], "title": None},
        {"url": None, "status": None, "links": None, "title": "中文 😀"},
        {"url": "", "status": -(2**63), "links": [], "title": ""},
        {"url": "x", "status": 2**63 - 1},
    ]
    batch = rowbatch.rows_batch(rows, FIELDS)
    assert [str(t) for t in batch.schema.types] == ["string", "int64", "list<item: string>", "string"]
    assert not rowbatch.json_columns(batch)
    _same(rows)


@pytest.mark.parametrize("odd", [
    {"status": 2**63}, {"status": -(2**63) - 1}, {"status": True}, {"status": 200.0}, {"status": "-"},
    {"url": 7}, {"url": "lone \ud800 surrogate"}, {"url": ["a"]}, {"links": ["a", None]}, {"links": "x"},
    {"title": {"k": [1, None, 2.5, False]}}, {"title": float("inf")},
])
def test_a_value_its_kind_cannot_hold_makes_that_column_json_text_and_comes_back_exactly(odd: dict[str, object]
                                                                                        ) -> None:
    rows: list[dict[str, object]] = [{"url": "a", "status": 1, "links": ["x"], "title": "t"}, {**odd}]
    batch = rowbatch.rows_batch(rows, FIELDS)
    tagged = [batch.schema.names[i] for i in rowbatch.json_columns(batch)]
    assert tagged == list(odd)
    (key, value), = odd.items()
    got = rowbatch.batch_rows(batch)[1][key]
    assert type(got) is type(value) and got == value
    if "\ud800" not in str(odd.get("url")):
        _same(rows)


def test_a_value_json_cannot_carry_is_an_error_not_a_silent_change() -> None:
    with pytest.raises(TypeError, match="'url': a tuple"):
        rowbatch.rows_batch([{"url": ("a", "b")}], FIELDS)
    with pytest.raises(TypeError, match="bytes"):
        rowbatch.rows_batch([{"extra": b"x"}], FIELDS)


def test_keys_no_field_declares_are_columns_in_the_order_their_records_have_them() -> None:
    rows: list[dict[str, object]] = [
        {"url": "a", "status": 1, "title": "t"},
        {"url": "b", "status": 2, "truncated": "length", "title": "u"},
        {"fuzzy": 3, "url": "c"},
        {"url": "d", "big": 2**70, "mixed": "x"},
        {"url": "e", "mixed": 5},
    ]
    batch = rowbatch.rows_batch(rows, FIELDS)
    names = batch.schema.names
    assert names.index("fuzzy") < names.index("url") < names.index("status") < names.index("truncated") < \
        names.index("title")
    assert [names[i] for i in rowbatch.json_columns(batch)] == ["big", "mixed"]
    assert str(batch.schema.field("fuzzy").type) == "int64"
    _same(rows)


def test_no_rows_is_a_batch_of_the_declared_fields() -> None:
    batch = rowbatch.empty_batch(FIELDS)
    assert batch.num_rows == 0 and batch.schema.names == [n for n, _ in FIELDS]


def test_chunks_by_size_by_age_and_the_records_before_an_error_first(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"url": str(i), "status": i} for i in range(10)]
    assert [b.num_rows for b in rowbatch.chunked(rows, FIELDS, size=4)] == [4, 4, 2]
    monkeypatch.setattr(rowbatch, "CHUNK", 3)
    assert [b.num_rows for b in rowbatch.chunked(rows, FIELDS)] == [3, 3, 3, 1]

    def slow() -> Iterator[dict[str, object]]:
        yield from rows[:2]
        time.sleep(0.05)
        yield from rows[2:4]

    assert [b.num_rows for b in rowbatch.chunked(slow(), FIELDS, size=100, seconds=0.02)] == [3, 1]

    def broken() -> Iterator[dict[str, object]]:
        yield from rows[:5]
        raise ValueError("cut")

    got = []
    with pytest.raises(ValueError, match="cut"):
        for batch in rowbatch.chunked(broken(), FIELDS, size=4):
            got.append(batch.num_rows)
    assert got == [4, 1]


def test_rows_of_gives_a_batch_function_records_with_its_signature() -> None:
    def batches(n: int, *, title: str = "t") -> Iterator[object]:
        yield rowbatch.rows_batch([{"url": str(i), "title": title} for i in range(n)], FIELDS)

    rows = rowbatch.rows_of(batches)  # type: ignore[arg-type]
    assert [r["url"] for r in rows(3, title="x")] == ["0", "1", "2"]
    import inspect

    assert list(inspect.signature(rows).parameters) == ["n", "title"]
