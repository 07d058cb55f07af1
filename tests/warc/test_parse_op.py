"""parse: filters, content flags, WET/WAT shapes, and broken input through the CLI (exit 1, records first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.errors import InputError, NothingMatched, UsageError
from ccrawl.ops.context import OpContext
from ccrawl.ops.parse import detect_format, warc_parse


def _record(wtype: str, url: str, block: bytes, extra: str = "") -> bytes:
    head = (
        f"WARC/1.0\r\nWARC-Type: {wtype}\r\nWARC-Target-URI: {url}\r\nWARC-Date: 2024-03-01T00:00:00Z\r\n"
        f"WARC-Record-ID: <urn:uuid:{abs(hash((wtype, url))):032x}>\r\n{extra}"
        f"Content-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def _response(url: str, html: str, status: int = 200) -> bytes:
    body = html.encode()
    http = f"HTTP/1.1 {status} OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n"
    return _record("response", url, http.encode() + body, "Content-Type: application/http; msgtype=response\r\n")


PAGE = ('<html lang="en"><head><title>Budget 2024</title><meta name="description" content="the budget">'
        '<link rel="canonical" href="https://example.com/budget"></head><body><h1>Budget</h1>'
        '<p>The senate budget for the year, with a long paragraph of plain English words in it so that '
        'language detection has something to work with across several sentences of text.</p>'
        '<a href="/next">next</a> <a href="https://other.org/x">x</a></body></html>')


@pytest.fixture
def warc(tmp_path: Path) -> Path:
    path = tmp_path / "pages.warc"
    path.write_bytes(_response("https://example.com/budget", PAGE)
                     + _response("https://example.com/gone", "<p>no</p>", 404)
                     + _record("request", "https://example.com/budget", b"GET /budget HTTP/1.1\r\n\r\n"))
    return path


@pytest.fixture
def wet(tmp_path: Path) -> Path:
    path = tmp_path / "x.warc.wet"
    path.write_bytes(
        _record("conversion", "https://example.com/a", b"Hello world", "WARC-Identified-Content-Language: eng\r\n")
        + _record("conversion", "https://example.de/b", b"Hallo Welt", "WARC-Identified-Content-Language: deu,eng\r\n")
        + _record("conversion", "https://example.fr/c", b"Bonjour", "WARC-Identified-Content-Language: fra\r\n")
    )
    return path


def test_filters_by_type_status_mime_and_url(warc: Path) -> None:
    assert [r["type"] for r in warc_parse([str(warc)])] == ["response", "response", "request"]
    assert [r["url"] for r in warc_parse([str(warc)], types=["response"], status=404)] == ["https://example.com/gone"]
    assert len(list(warc_parse([str(warc)], mime="text/"))) == 2
    assert [r["url"] for r in warc_parse([str(warc)], url="*/budget", types=["request,response"])] == [
        "https://example.com/budget", "https://example.com/budget"]


def test_content_flags(warc: Path) -> None:
    (text,) = warc_parse([str(warc)], status=200, content="text")
    assert text["title"] == "Budget 2024" and "senate budget" in text["text"]
    (links,) = warc_parse([str(warc)], status=200, content="links")
    assert "https://example.com/next" in links["links"] and "https://other.org/x" in links["links"]
    (meta,) = warc_parse([str(warc)], status=200, content="meta")
    assert meta["description"] == "the budget" and meta["canonical"] == "https://example.com/budget"
    (md,) = warc_parse([str(warc)], status=200, content="markdown")
    assert "Budget" in md["markdown"]


def test_lang_detects_the_language_of_html_pages(warc: Path) -> None:
    rows = list(warc_parse([str(warc)], lang="eng"))
    assert [r["url"] for r in rows] == ["https://example.com/budget"] and rows[0]["content_language"] == "eng"


def test_wet_records_carry_text_and_language_and_filter_by_it(wet: Path) -> None:
    rows = list(warc_parse([str(wet)], lang="eng"))
    assert [(r["url"], r["content_language"], r["text"]) for r in rows] == [
        ("https://example.com/a", "eng", "Hello world"), ("https://example.de/b", "deu,eng", "Hallo Welt")]
    assert detect_format("CC-MAIN-x.warc.wet.gz") == "wet" and detect_format("a.warc.wat.gz") == "wat"


def test_bad_arguments_are_usage_errors(warc: Path) -> None:
    with pytest.raises(UsageError):
        list(warc_parse([str(warc)], format="arc"))
    with pytest.raises(UsageError):
        list(warc_parse([]))


def test_the_op_raises_nothing_matched_after_reading_everything(warc: Path) -> None:
    with pytest.raises(NothingMatched, match="3 records read"):
        list(warc_parse([str(warc)], url="nowhere.example"))


def test_truncated_input_yields_whole_records_then_raises(corpus_dir: Path) -> None:
    got = []
    with pytest.raises(InputError, match="offset 1197"):
        for row in warc_parse([str(corpus_dir / "warc" / "example-trunc.warc")]):
            got.append(row)
    assert len(got) == 2  # the record at 1197 has a Content-Length 2 bytes short of its block


def test_cli_prints_whole_records_then_one_line_and_exits_1(
    corpus_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["parse", str(corpus_dir / "warc" / "example-trunc.warc"), "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 1
    assert [json.loads(line)["offset"] for line in out.splitlines()] == [0, 488]
    assert err.count("\n") == 1 and "offset 1197" in err and "Traceback" not in err


def test_cli_skip_bad_records_goes_on_to_the_next_file(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(corpus_dir / "warc" / "example-trunc.warc"), str(corpus_dir / "warc" / "example.warc.gz")]
    code = main(["parse", *files, "--skip-bad-records", "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 3 + 6  # the request after the bad response is read
    assert "skipped" in err and "offset 1197" in err and "skipped 1 record (1369 bytes)" in err


def test_cli_names_an_arc_file(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(corpus_dir / "warc" / "example.arc"), "-o", "jsonl"]) == 1
    assert "ARC file, not WARC" in capsys.readouterr().err


def test_cli_reads_stdin_and_names_the_offset_of_a_cut_gzip(corpus_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    data = (corpus_dir / "warc" / "example.warc.gz").read_bytes()[:2500]  # cut inside the 4th member
    env = {"CCRAWL_CONFIG_DIR": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin"}
    import os

    done = subprocess.run([sys.executable, "-m", "ccrawl", "parse", "-", "-o", "jsonl"], input=data,
                          capture_output=True, env={**os.environ, **env})
    assert done.returncode == 1
    assert [json.loads(line)["offset"] for line in done.stdout.splitlines()] == [0, 353, 784]
    err = done.stderr.decode()
    assert err.count("\n") == 1 and "<stdin>" in err and "offset 2012" in err


def test_filters_that_match_nothing_exit_3_with_the_count_read(
    warc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["parse", str(warc), "--status", "500", "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.count("\n") == 1 and "no record matched the filters (3 records read)" in err


def test_an_empty_input_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    assert main(["parse", str(empty)]) == 3
    assert "holds no records" in capsys.readouterr().err


def test_cli_content_flags_print_their_columns(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The record columns alone used to be printed: --text produced no text.
    path = str(corpus_dir / "warc" / "example.warc.gz")
    assert main(["parse", path, "--type", "response", "--text", "-o", "jsonl"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["title"] == "Example Domain" and "illustrative examples" in row["text"]
    assert main(["parse", path, "--type", "response", "--links", "-o", "jsonl"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["links"] == ["http://www.iana.org/domains/example"]


SECRET = b"SECRET-TOKEN-1234567890abcdef"


@pytest.mark.parametrize(("name", "compress"), [("secret.txt", False), ("secret.warc.gz", True)])
def test_a_file_that_is_not_a_warc_is_named_and_never_quoted(tmp_path: Path, name: str, compress: bool) -> None:
    import gzip

    from ccrawl import ops

    path = tmp_path / name
    data = SECRET + b"\nline two of a private file\n"
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(InputError) as caught:
        list(ops.get("warc.parse")(files=[str(path)]))
    message = str(caught.value)
    assert str(path) in message and "no WARC/1.x header at offset 0" in message
    assert "SECRET" not in message and "TOKEN" not in message and "1234" not in message


def test_bad_records_inside_a_warc_are_reported_without_their_bytes(tmp_path: Path) -> None:
    from ccrawl import ops

    good = _record("request", "https://example.com/", b"GET / HTTP/1.1\r\n\r\n")
    # a record whose Content-Length stops short, then the secret where a record should start
    block = b"GET /s HTTP/1.1\r\n\r\n"
    short = _record("request", "https://example.com/s", block).replace(
        b"Content-Length: %d" % len(block), b"Content-Length: %d" % (len(block) - 5)
    )
    cases = {"after.warc": good + SECRET + b"\r\n\r\n" + good, "short.warc": good + short + SECRET}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError) as caught:
            list(ops.get("warc.parse")(files=[str(path)]))
        assert name in str(caught.value) and "SECRET" not in str(caught.value)
        notes: list[str] = []
        list(ops.get("warc.parse")(files=[str(path)], skip_bad_records=True, ctx=OpContext.of(notice=notes.append)))
        assert notes and not any("SECRET" in n or "TOKEN" in n for n in notes), notes


# --- content flags combine (issue #37 item 7): each flag adds its fields; none hides another's ---

_FLAG_FIELDS = {
    "--text": {"title": "Budget 2024", "text": "senate budget"},
    "--markdown": {"title": "Budget 2024", "markdown": "# Budget"},
    "--links": {"links": "https://other.org/x"},
    "--meta": {"title": "Budget 2024", "description": "the budget", "canonical": "https://example.com/budget",
               "declared_language": "en"},
}
_COMBINATIONS = [combo for n in range(1, 5) for combo in __import__("itertools").combinations(_FLAG_FIELDS, n)]


@pytest.mark.parametrize("flags", _COMBINATIONS, ids=["+".join(f[2:] for f in c) for c in _COMBINATIONS])
def test_every_combination_of_content_flags_prints_the_fields_of_each(
    warc: Path, flags: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    # `--markdown --meta` used to print the meta fields alone, `--markdown --text` the text alone.
    want: dict[str, str] = {}
    for flag in flags:
        want.update(_FLAG_FIELDS[flag])
    others = {k for f, fields in _FLAG_FIELDS.items() if f not in flags for k in fields} - set(want)
    assert main(["parse", str(warc), "--status", "200", *flags, "-o", "jsonl"]) == 0
    out, err = capsys.readouterr()
    (row,) = [json.loads(line) for line in out.splitlines()]
    for key, part in want.items():
        value = row[key]
        assert part in (value if isinstance(value, str) else " ".join(value)), (key, value)
    assert not others & set(row), sorted(others & set(row))
    assert err == ""
    # the columns of a table output name every field asked for, in the flags' fixed order
    assert main(["parse", str(warc), "--status", "200", *flags, "-o", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert set(want) <= set(header) and not others & set(header)
    assert header.index(next(iter(want))) < header.index("info")


def test_content_flags_combine_in_any_order_into_the_same_record(
    warc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["parse", str(warc), "--status", "200", "--meta", "--markdown", "-o", "jsonl"]) == 0
    one = capsys.readouterr().out
    assert main(["parse", str(warc), "--status", "200", "--markdown", "--meta", "-o", "jsonl"]) == 0
    assert capsys.readouterr().out == one


def test_the_op_takes_content_as_a_list_or_a_comma_list_and_names_an_unknown_kind(warc: Path) -> None:
    (a,) = warc_parse([str(warc)], status=200, content=["markdown", "meta"])
    (b,) = warc_parse([str(warc)], status=200, content="meta,markdown")
    assert a == b and "Budget" in a["markdown"] and a["description"] == "the budget"
    with pytest.raises(UsageError, match=r"'html'.*text, markdown, links, meta"):
        list(warc_parse([str(warc)], content=["text", "html"]))


def test_wat_metadata_records_take_links_and_meta_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    envelope = {"Envelope": {"Payload-Metadata": {"HTTP-Response-Metadata": {"HTML-Metadata": {
        "Head": {"Title": "Budget 2024"}, "Links": [{"url": "/next"}, {"url": "https://other.org/x"}]}}}}}
    path = tmp_path / "x.warc.wat"
    path.write_bytes(_record("metadata", "https://example.com/budget", json.dumps(envelope).encode()))
    assert main(["parse", str(path), "--links", "--meta", "--text", "-o", "jsonl"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["title"] == "Budget 2024" and row["links"] == ["https://example.com/next", "https://other.org/x"]
