"""The batch renderer writes the bytes the per-record renderer writes, for every format and tricky value.

Run with and without ``CCRAWL_NO_EXTENSIONS=1``: ``emit_batches`` uses whichever writer the run has,
and the parity tests below hold the compiled writer to its twin directly (skipped on the twins' run).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import batchout
from ccrawl.cli.urlstdin import plain_lines_py
from ccrawl.errors import InputError, UsageError
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


class _ParquetSink(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.buffer = io.BytesIO()


def _parquet_both(batches: list[pa.RecordBatch], options: OutputOptions, columns: tuple[str, ...] = ()) -> tuple[
        bytes, bytes]:
    """The per-record file and the batch one (or, where the per-record writer fails, the same error from both)."""
    want, got = _ParquetSink(), _ParquetSink()
    rows = [r for b in batches for r in b.to_pylist()]
    try:
        n_want = emit(rows, options, columns=columns, stream=want)
    except Exception as exc:
        with pytest.raises(type(exc)):
            batchout.emit_batches(batches, options, columns=columns, stream=got)
        raise
    n_got = batchout.emit_batches(batches, options, columns=columns, stream=got)
    assert n_got == n_want
    return want.buffer.getvalue(), got.buffer.getvalue()


@pytest.mark.parametrize("column", _batch().schema.names)
def test_parquet_of_each_column_type_is_the_per_record_file(column: str) -> None:
    """Arrow-typed columns (from_pylist's types) and the rest (lists, structs, binary: the per-record writer)."""
    batch = _batch()
    for rows in (batch, batch.slice(1, 1), batch.slice(0, 3)):
        for fields in ([column], ["s", column], [column, "absent", column]):
            try:
                want, got = _parquet_both([rows], OutputOptions(fmt="parquet", fields=fields))
            except OverflowError:  # 2**64 - 1 in a uint64 column: from_pylist refuses it, on both paths
                assert column == "big" and rows.num_rows != 1
                continue
            assert got == want, (column, fields)


def test_parquet_of_many_batches_cut_across_the_writers_runs_is_the_per_record_file() -> None:
    """25,000 rows in uneven batches (a run of 10,000 rows spans several), a first run whose text column is
    all null, int32 / float32 / uint32 / dictionary columns, declared columns, a limit."""
    n = 25_000
    texts = [None if i < 10_000 or i % 7 == 0 else TRICKY[i % N] for i in range(n)]
    table = pa.table({
        "url": pa.array([f"https://h{i}.test/{TRICKY[i % N]}" for i in range(n)]),
        "late": pa.array(texts, pa.string()),
        "offset": pa.array([None if i % 11 == 0 else i * 7 for i in range(n)], pa.int32()),
        "length": pa.array(list(range(n)), pa.uint32()),
        "ratio": pa.array([i / 3 for i in range(n)], pa.float32()),
        "mime": pa.array([TRICKY[i % 5] for i in range(n)]).dictionary_encode(),
        "ok": pa.array([i % 3 == 0 for i in range(n)]),
    })
    sizes = [1, 4999, 5000, 3, 9997, 0, 5000]
    whole = table.combine_chunks().to_batches()[0]
    batches, at = [], 0
    for size in sizes:
        batches.append(whole.slice(at, size))
        at += size
    batches += table.slice(at).to_batches(max_chunksize=777)
    for options, columns in (
        (OutputOptions(fmt="parquet"), ()),
        (OutputOptions(fmt="parquet", limit=12_345), ()),
    ):  # the first run's column of nulls is typed null, and the second run's text will not cast to it: both refuse
        with pytest.raises(pa.ArrowNotImplementedError):
            _parquet_both(batches, options, columns)
    for options, columns in (
        (OutputOptions(fmt="parquet", limit=9_999), ()),
        (OutputOptions(fmt="parquet"), ("url", "missing", "offset")),
        (OutputOptions(fmt="parquet", fields=["mime", "ok", "mime"]), ("url",)),
    ):
        want, got = _parquet_both(batches, options, columns)
        assert got == want and got[:4] == b"PAR1"
    no_late = [b.drop_columns(["late"]) for b in batches]
    want, got = _parquet_both(no_late, OutputOptions(fmt="parquet"))
    assert got == want
    assert _parquet_both([whole.slice(0, 0)], OutputOptions(fmt="parquet")) == (b"", b"")


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


# --------------------------------------------------------------------------------------------------
# records rendered a chunk at a time (search, parse, news search): emit_records against emit

HOSTILE_TEXT = [*TRICKY, "lone\ud800surrogate", "\udfff", "quote\"and,comma\ttab\nnewline"]


def _hostile_records(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        record: dict[str, object] = {"url": HOSTILE_TEXT[i % len(HOSTILE_TEXT)], "status": None if i % 4 == 1 else i,
                                     "mime": None if i % 3 else "text/html"}
        if i % 5 == 0:
            record["extra"] = f"only some {i}"  # a key not declared, and missing from most records
        if 40 <= i < 48:  # a chunk with a float, a bool, a list, a dict, a big int: no batch holds it exactly
            odd: list[object] = [1.5, True, ["a", "\u2028"], {"k": None, "n": [1]}, 2**64, -(2**63) - 1, 0.0, False]
            record["status"] = odd[i - 40]
        if 60 <= i < 70:
            record["mime"] = 7  # a column that was text is a number in this chunk
        out.append(record)
    return out


def _render_both(records: list[dict[str, object]], options: OutputOptions, columns: tuple[str, ...],
                 monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, int, int]:
    monkeypatch.setattr(batchout, "RECORD_CHUNK", 8)
    want, got = io.StringIO(), io.StringIO()
    n_want = emit(iter(records), options, columns=columns, stream=want)
    n_got = batchout.emit_records(iter(records), options, columns=columns, stream=got)
    return want.getvalue(), got.getvalue(), n_want, n_got


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "json", "table"])
def test_records_in_chunks_render_as_one_at_a_time(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _hostile_records(100)
    columns = ("url", "status", "mime")
    for options in (OutputOptions(fmt=fmt), OutputOptions(fmt=fmt, limit=13), OutputOptions(fmt=fmt, no_header=True),
                    OutputOptions(fmt=fmt, fields=["extra", "url"]), OutputOptions(fmt=fmt, fields=["mime", "mime"]),
                    OutputOptions(fmt=fmt, template="{{.url}}|{{.status}}")):
        want, got, n_want, n_got = _render_both(records, options, columns, monkeypatch)
        assert got == want and n_got == n_want, options
    assert "\ud800" in got or fmt in ("table",)
    # the batch path was taken for the chunks that fit (a chunk of text and integers is a record batch)
    kinds = [type(b).__name__ for b in batchout.record_batches(records, columns, 8)]
    assert kinds.count("RecordBatch") >= 8 and kinds.count("list") >= 3


def test_records_in_chunks_errors_and_empty_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    records = _hostile_records(30)

    def failing() -> Iterator[dict[str, object]]:
        yield from records[:21]
        raise InputError("truncated at offset 99")

    for fmt in ("jsonl", "csv", "tsv"):
        want, got = io.StringIO(), io.StringIO()
        monkeypatch.setattr(batchout, "RECORD_CHUNK", 8)
        with pytest.raises(InputError):
            emit(failing(), OutputOptions(fmt=fmt), columns=("url", "status"), stream=want)
        with pytest.raises(InputError):
            batchout.emit_records(failing(), OutputOptions(fmt=fmt), columns=("url", "status"), stream=got)
        assert got.getvalue() == want.getvalue() and got.getvalue().count("\n") >= 21  # the rows before the error
        want_e, got_e, n_want, n_got = _render_both([], OutputOptions(fmt=fmt), ("url", "status"), monkeypatch)
        assert got_e == want_e and n_got == n_want == 0
        with pytest.raises(UsageError, match="unknown field 'nope'"):
            batchout.emit_records(iter(records), OutputOptions(fmt=fmt, fields=["nope"]), columns=("url",),
                                  stream=io.StringIO())
