"""The one output module: every format, fields, template, limit, unmeasured values."""

from __future__ import annotations

import csv
import io
import json

import pyarrow.parquet as pq
import pytest

from ccrawl.errors import UsageError
from ccrawl.output import OutputOptions, emit, render_to_string

RECORDS = [
    {"host": "a.example", "rank": 1, "degree": None},
    {"host": "b.example", "rank": 2, "degree": 0},
]
COLUMNS = ("host", "rank", "degree")


def render(fmt: str, records=RECORDS, **kw) -> str:  # type: ignore[no-untyped-def]
    buf = io.StringIO()
    emit(records, OutputOptions(fmt=fmt, **kw), columns=COLUMNS, stream=buf)
    return buf.getvalue()


def test_unmeasured_value_is_left_out_of_json_but_zero_is_kept() -> None:
    lines = [json.loads(x) for x in render("jsonl").splitlines()]
    assert "degree" not in lines[0]
    assert lines[1]["degree"] == 0


def test_unmeasured_value_is_a_blank_cell_and_the_column_stays() -> None:
    rows = list(csv.reader(io.StringIO(render("csv"))))
    assert rows == [["host", "rank", "degree"], ["a.example", "1", ""], ["b.example", "2", "0"]]
    table = render("table").splitlines()
    assert table[0].split() == ["host", "rank", "degree"]
    assert table[1].split() == ["a.example", "1"]


def test_json_is_an_array_and_single_is_an_object() -> None:
    assert [r["host"] for r in json.loads(render("json"))] == ["a.example", "b.example"]
    buf = io.StringIO()
    emit(RECORDS[:1], OutputOptions(fmt="json"), columns=COLUMNS, stream=buf, single=True)
    assert json.loads(buf.getvalue())["host"] == "a.example"


def test_tsv_and_no_header() -> None:
    assert render("tsv", no_header=True).splitlines() == ["a.example\t1\t", "b.example\t2\t0"]


def test_fields_pick_and_order_columns() -> None:
    assert render("csv", fields=["rank", "host"]).splitlines()[0] == "rank,host"
    with pytest.raises(UsageError, match="unknown field 'nope'"):
        render("csv", fields=["nope"])


def test_template_substitutes_fields() -> None:
    assert render("jsonl", template="{{.host}}\\t{{ .rank }}").splitlines() == ["a.example\t1", "b.example\t2"]


def test_template_with_go_control_flow_is_refused() -> None:
    with pytest.raises(UsageError, match="--template"):
        OutputOptions(template="{{if .x}}y{{end}}")


def test_limit_stops_the_stream_and_closes_the_generator() -> None:
    closed = []

    def gen():  # type: ignore[no-untyped-def]
        try:
            for i in range(100):
                yield {"url": f"http://x/{i}"}
        finally:
            closed.append(True)

    out = render_to_string(gen(), "url", limit=3)
    assert out.splitlines() == ["http://x/0", "http://x/1", "http://x/2"]
    assert closed == [True]


def test_url_format_needs_a_url_field() -> None:
    with pytest.raises(UsageError, match="url field"):
        render("url")


def test_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown format 'yaml'"):
        OutputOptions(fmt="yaml")


def test_auto_is_jsonl_when_not_a_terminal() -> None:
    assert json.loads(render("auto").splitlines()[0])["host"] == "a.example"


def test_bytes_are_base64_in_json_and_sized_in_tables() -> None:
    recs = [{"body": b"\x00\xffhi"}]
    assert json.loads(render_to_string(recs, "jsonl"))["body"] == "AP9oaQ=="
    assert "<4 bytes>" in render_to_string(recs, "table")


def test_raw_writes_body_bytes_unchanged() -> None:
    class Out(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.buffer = io.BytesIO()

    out = Out()
    emit([{"url": "u", "body": b"\x00\x01"}], OutputOptions(fmt="raw"), stream=out)
    assert out.buffer.getvalue() == b"\x00\x01"


def test_parquet_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "out.parquet"
    with open(path, "wb") as fh:
        n = emit(RECORDS, OutputOptions(fmt="parquet"), columns=COLUMNS, stream=fh)
    assert n == 2
    table = pq.read_table(path)
    assert table.column_names == list(COLUMNS)
    assert table.column("degree").to_pylist() == [None, 0]


def test_empty_csv_still_has_its_header() -> None:
    assert render("csv", records=[]).splitlines() == ["host,rank,degree"]


def test_single_target_json_with_no_record_prints_nothing_but_a_list_prints_an_empty_array() -> None:
    buf = io.StringIO()
    emit([], OutputOptions(fmt="json"), columns=COLUMNS, stream=buf, single=True)
    assert buf.getvalue() == ""
    assert json.loads(render("json", records=[])) == []
