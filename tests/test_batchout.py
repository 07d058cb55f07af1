"""The batch renderer writes the bytes the per-record renderer writes, for every format and tricky value.

Run with and without ``CCRAWL_NO_EXTENSIONS=1``: ``emit_batches`` uses whichever writer the run has,
and the parity tests below hold the compiled writer to its twin directly (skipped on the twins' run).
"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import batchout
from ccrawl.cli.urlstdin import plain_lines_py
from ccrawl.errors import UsageError
from ccrawl.output import OutputOptions, emit
from tests.conftest import native_or_skip

TRICKY = [
    "plain", None, "", "nul\x00byte", "new\nline", "cr\rhere", "crlf\r\n", "tab\there", 'say "hi"', "a,b",
    "line\u2028sep", "para\u2029sep", "back\\slash", "\x01\x08\x0c\x1f\x7f", "é ü 中文 😀", " padded ", "#x", "{x",
    "x" * 300,
]
N = len(TRICKY)


def _batch() -> pa.RecordBatch:
    ints = [0, None, -1, 2**63 - 1, -(2**63), 7, 42, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13]
    return pa.RecordBatch.from_arrays(
        [
            pa.array(TRICKY, pa.string()),
            pa.array(ints, pa.int64()),
            pa.array([2 ** 64 - 1, None, *list(range(N - 2))], pa.uint64()),
            pa.array([i % 250 - 120 if i % 5 else None for i in range(N)], pa.int8()),
            pa.array([1.5, None, float("nan"), float("inf"), 1e-7, 0.1] + [float(i) for i in range(N - 6)]),
            pa.array([["a", "b\n"], None, [], [None], ["\u2028", '"']] + [[str(i)] for i in range(N - 5)]),
            pa.array([True, False, None] + [bool(i % 2) for i in range(N - 3)]),
            pa.array([b"\x00\xff", None] + [b"x" * i for i in range(N - 2)]),
            pa.array([{"k": "v\t", "n": 1}, None] + [{"k": str(i), "n": i} for i in range(N - 2)]),
            pa.array(TRICKY, pa.large_string()),
            pa.array(TRICKY, pa.string()).dictionary_encode(),
            pa.nulls(N),
        ],
        names=["s", "i", "big", "tiny", "f", "list", "b", "raw", "struct", "large", "dict", "nothing"],
    )


def _both(batch: pa.RecordBatch, options: OutputOptions, columns: tuple[str, ...] = ()) -> tuple[str, str]:
    want = io.StringIO()
    emit(batch.to_pylist(), options, columns=columns, stream=want)
    got = io.StringIO()
    batchout.emit_batches([batch], options, columns=columns, stream=got)
    return want.getvalue(), got.getvalue()


FORMATS = ("jsonl", "csv", "tsv", "json", "table", "parquet")


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "json", "table"])
@pytest.mark.parametrize("column", _batch().schema.names)
def test_each_column_type_renders_as_the_per_record_renderer_renders_it(fmt: str, column: str) -> None:
    batch = _batch()
    for rows in (batch, batch.slice(1, 1), batch.slice(2, 1), batch.slice(0, 1), batch.slice(4, 3)):
        want, got = _both(rows, OutputOptions(fmt=fmt, fields=[column]))
        assert got == want, (column, fmt)
        # the same column beside a text one (a one-column row quotes an empty value; two columns do not)
        want, got = _both(rows, OutputOptions(fmt=fmt, fields=["s", column]))
        assert got == want, (column, fmt)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_whole_batch_with_declared_columns_header_and_limit(fmt: str) -> None:
    batch = _batch()
    for options, columns in (
        (OutputOptions(fmt=fmt), ()),
        (OutputOptions(fmt=fmt, no_header=True), ()),
        (OutputOptions(fmt=fmt, limit=3), ()),
        (OutputOptions(fmt=fmt), ("i", "missing", "s")),  # a declared column the rows lack stays, blank
        (OutputOptions(fmt=fmt, template="{{.s}}|{{.i}}"), ()),
    ):
        want, got = _both(batch, options, columns)
        assert got == want
    # batches split anywhere render as one
    pieces = [batch.slice(0, 4), batch.slice(4, 0), batch.slice(4, 9), batch.slice(13)]
    got = io.StringIO()
    assert batchout.emit_batches(pieces, OutputOptions(fmt=fmt, limit=15), stream=got) == 15
    want = io.StringIO()
    emit(batch.to_pylist(), OutputOptions(fmt=fmt, limit=15), stream=want)
    assert got.getvalue() == want.getvalue()


def test_no_rows_writes_the_declared_header_and_unknown_fields_are_a_usage_error() -> None:
    empty = _batch().slice(0, 0)
    for fmt in ("csv", "tsv", "jsonl"):
        want = io.StringIO()
        emit([], OutputOptions(fmt=fmt), columns=("a", "b"), stream=want)
        got = io.StringIO()
        assert batchout.emit_batches([empty], OutputOptions(fmt=fmt), columns=("a", "b"), stream=got) == 0
        assert got.getvalue() == want.getvalue()
    with pytest.raises(UsageError, match="unknown field 'nope'"):
        batchout.emit_batches([_batch()], OutputOptions(fmt="csv", fields=["nope"]), stream=io.StringIO())


def test_parquet_from_batches_is_the_per_record_file(tmp_path: object) -> None:
    batch = _batch().select(["s", "i", "f", "b"])

    class Sink(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.buffer = io.BytesIO()

    want, got = Sink(), Sink()
    emit(batch.to_pylist(), OutputOptions(fmt="parquet"), stream=want)
    batchout.emit_batches([batch], OutputOptions(fmt="parquet"), stream=got)
    assert got.buffer.getvalue() == want.buffer.getvalue() and got.buffer.getvalue()[:4] == b"PAR1"


def test_a_stream_with_a_utf8_buffer_gets_the_same_bytes() -> None:
    batch = _batch().select(["s", "i"])
    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    text.write("before\n")  # text already written goes out ahead of the rows' bytes
    batchout.emit_batches([batch], OutputOptions(fmt="jsonl"), stream=text)
    want = io.StringIO()
    emit(batch.to_pylist(), OutputOptions(fmt="jsonl"), stream=want)
    assert raw.getvalue().decode("utf-8") == "before\n" + want.getvalue()
    lines = raw.getvalue().decode("utf-8").split("\n")[1:-1]
    assert [json.loads(x).get("s") for x in lines] == TRICKY


# --------------------------------------------------------------------------------------------------
# the compiled writer against its twin


def _columns(batch: pa.RecordBatch, names: list[str]) -> list[tuple[int, object]]:
    return [batchout._delimited_column(batchout._column(batch, n)) for n in names]


def test_native_writers_equal_the_twins_on_tricky_values() -> None:
    native = native_or_skip("textout")
    batch = _batch()
    for names in (["s"], ["s", "i"], ["big", "tiny", "i"], ["large", "s"], ["f", "b", "raw"]):
        for rows in (batch, batch.slice(2, 5), batch.slice(0, 1), batch.slice(2, 1)):
            for delimiter in (9, 44):
                cols = _columns(rows, names)
                assert native.delimited_rows(cols, delimiter) == batchout.delimited_rows_py(cols, delimiter)
            keys = [json.dumps(n).encode() for n in names]
            jcols = [batchout._json_column(batchout._column(rows, n)) for n in names]
            assert native.jsonl_rows(keys, jcols) == batchout.jsonl_rows_py(keys, jcols)
    plain = pa.array(["https://a.example/", "x"], pa.string())
    assert native.plain_lines(plain) is plain_lines_py(plain) is True
    for value in TRICKY:
        array = pa.array([value], pa.string())
        assert native.plain_lines(array) is plain_lines_py(array), value


@settings(max_examples=300, deadline=None, database=None)
@given(values=st.lists(st.one_of(st.none(), st.text()), min_size=1, max_size=8),
       ints=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=8, max_size=8))
def test_native_writers_equal_the_twins_on_any_text(values: list[str | None], ints: list[int | None]) -> None:
    native = native_or_skip("textout")
    try:
        strings = pa.array(values, pa.string())
    except (UnicodeEncodeError, pa.ArrowException):
        return  # a lone surrogate is no Arrow string
    numbers = pa.array(ints[: len(values)], pa.int64())
    for cols in ([(0, strings)], [(0, strings), (1, numbers)]):
        for delimiter in (9, 44):
            assert native.delimited_rows(cols, delimiter) == batchout.delimited_rows_py(cols, delimiter)
        keys = [b'"a"', b'"b\\n"'][: len(cols)]
        got = native.jsonl_rows(keys, cols)
        assert got == batchout.jsonl_rows_py(keys, cols)
        want = "".join(
            json.dumps({k: v for k, v in zip(["a", "b\n"], row, strict=False) if v is not None}, ensure_ascii=False)
            + "\n" for row in zip(*(c[1].to_pylist() for c in cols), strict=True)
        )
        assert got.decode("utf-8") == want
    assert native.plain_lines(strings) is plain_lines_py(strings)


def test_the_writer_in_use_is_the_compiled_one_unless_extensions_are_off() -> None:
    from ccrawl import accel

    expected = "python" if accel.extensions_disabled() else "native"
    assert accel.implementations()["textout"] == expected
    assert (batchout.jsonl_rows is batchout.jsonl_rows_py) is (expected == "python")
