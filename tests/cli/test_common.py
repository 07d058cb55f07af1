"""Reading values from stdin: plain lines, JSONL with a url field, and lines that are not text."""

from __future__ import annotations

import io

from ccrawl.cli.common import InputLineError, read_stdin_values


def test_plain_lines_and_jsonl_are_both_read_and_blanks_skipped() -> None:
    data = b'http://a/\n\n{"url": "http://b/", "status": 200}\n# comment\nhttp://c/\n'
    assert list(read_stdin_values(io.BytesIO(data))) == ["http://a/", "http://b/", "http://c/"]


def test_binary_and_broken_lines_are_named_and_the_stream_carries_on() -> None:
    data = b"http://a/\n\x00\x01\x02\n\xff\xfe\n{not json\n{\"x\": 1}\nhttp://z/\n"
    values = list(read_stdin_values(io.BytesIO(data)))
    assert values[0] == "http://a/" and values[-1] == "http://z/"
    errors = [v for v in values if isinstance(v, InputLineError)]
    assert [e.line for e in errors] == [2, 3, 4, 5]
    assert "NUL" in errors[0].reason and "UTF-8" in errors[1].reason
    assert "JSON" in errors[2].reason and "'url'" in errors[3].reason
    assert str(errors[0]).startswith("stdin line 2: ")
