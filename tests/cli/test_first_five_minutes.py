"""The rough edges a newcomer meets in the first five minutes, each read from the command's output."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ccrawl.cli.main import main
from ccrawl.errors import UsageError

PAGE = (b"<html lang='en'><head><title>Hello page</title><meta name='description' content='A page'>"
        b"<link rel='canonical' href='http://example.test/canon'></head><body><h1>Greetings</h1>"
        b"<p>Some words of text here, and <a href='/next'>a link</a>.</p></body></html>")


@pytest.fixture
def warc(tmp_path: Path) -> Path:
    path = tmp_path / "sample.warc.gz"
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        writer.write_record(writer.create_warcinfo_record(
            "sample.warc.gz", {"software": "ccrawl-test 1.0", "isPartOf": "CC-MAIN-2099-01", "format": "WARC/1.0"}))
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record("http://example.test/", "response",
                                                      payload=io.BytesIO(PAGE), http_headers=headers))
    return path


def _out(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- --version ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_dash_dash_version_prints_what_version_prints(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    code, expected, _ = _out(capsys, ["version"])
    assert code == 0 and expected.startswith("ccrawl 0.1.0 (commit ")
    assert _out(capsys, [flag]) == (0, expected, "")
    code, out, _ = _out(capsys, ["-o", "json", flag])
    assert code == 0 and json.loads(out)["version"] == "0.1.0"
    assert _out(capsys, [flag, "--short"])[1].strip() == "0.1.0"


# -- --journal ---------------------------------------------------------------------------------------


def _events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_journal_is_written_by_every_command_that_takes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, warc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "events.jsonl"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"http://a.test/x\nhttp://b.test/y\n")))
    assert main(["url", "key", "--journal", str(journal)]) == 0
    assert main(["--journal", str(journal), "parse", str(warc), "-o", "jsonl"]) == 0
    assert main(["config", "show", "--journal", str(journal)]) == 0
    assert main(["parse", str(tmp_path / "missing.warc.gz"), "--journal", str(journal)]) == 1
    capsys.readouterr()
    events = _events(journal)
    assert [(e["event"], e["command"]) for e in events] == [
        ("start", "ccrawl url key"), ("end", "ccrawl url key"),
        ("start", "ccrawl parse"), ("end", "ccrawl parse"),
        ("start", "ccrawl config show"), ("end", "ccrawl config show"),
        ("start", "ccrawl parse"), ("end", "ccrawl parse"),
    ]
    assert events[1]["exit_code"] == 0 and events[1]["records"] == 2
    assert events[3]["records"] == 2  # the warcinfo and the response
    assert events[7]["exit_code"] == 1 and "missing.warc.gz" in str(events[7]["error"])
    assert all(isinstance(e["ts"], float) for e in events) and events[0]["version"] == "0.1.0"


def test_journal_that_cannot_be_written_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _out(capsys, ["version", "--journal", str(tmp_path / "no" / "such" / "dir" / "j.jsonl")])
    assert code == 2 and err.startswith("ccrawl: --journal ") and len(err.strip().splitlines()) == 1


# -- parse: content flags add their columns to every format, warcinfo says what it is -----------------

FLAG_COLUMNS = {
    "--text": ("title", "text"),
    "--markdown": ("title", "markdown"),
    "--links": ("links",),
    "--meta": ("title", "description", "canonical", "declared_language"),
}


@pytest.mark.parametrize("flag", list(FLAG_COLUMNS))
@pytest.mark.parametrize("fmt", ["table", "csv", "tsv", "json", "jsonl"])
def test_parse_content_flags_add_their_columns_to_every_format(
    capsys: pytest.CaptureFixture[str], warc: Path, flag: str, fmt: str
) -> None:
    code, out, err = _out(capsys, ["parse", str(warc), flag, "-o", fmt, "--type", "response"])
    assert code == 0, err
    wanted = FLAG_COLUMNS[flag]
    if fmt == "table":
        header = out.splitlines()[0].split()
        assert set(wanted) <= set(header), header
        assert "Hello page" in out or flag == "--links"
        return
    if fmt in ("csv", "tsv"):
        rows = list(csv.DictReader(io.StringIO(out), delimiter="," if fmt == "csv" else "\t"))
    else:
        rows = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
    (row,) = rows
    for column in wanted:
        assert row.get(column), (column, row)
    if flag == "--text":
        assert "Some words of text here" in row["text"]
    if flag == "--markdown":
        assert "# Greetings" in row["markdown"]
    if flag == "--links":
        assert "http://example.test/next" in str(row["links"])
    if flag == "--meta":
        assert row["canonical"] == "http://example.test/canon" and row["description"] == "A page"


def test_parse_table_says_what_a_warcinfo_record_is(capsys: pytest.CaptureFixture[str], warc: Path) -> None:
    code, out, _ = _out(capsys, ["parse", str(warc), "-o", "table"])
    assert code == 0
    header, info_row, response_row = out.splitlines()
    assert header.split()[-1] == "info"
    assert "warcinfo" in info_row
    assert "warcinfo of sample.warc.gz: isPartOf=CC-MAIN-2099-01, software=ccrawl-test 1.0" in info_row
    assert "http://example.test/" in response_row and "warcinfo of" not in response_row
    code, out, _ = _out(capsys, ["parse", str(warc), "-o", "jsonl", "--type", "warcinfo"])
    assert json.loads(out)["info"] == ("warcinfo of sample.warc.gz: isPartOf=CC-MAIN-2099-01, "
                                       "software=ccrawl-test 1.0, format=WARC/1.0")


# -- recrawl run --from a local path that is not there -------------------------------------------------


@pytest.mark.parametrize("where", ["/nonexistent/worklist", "./worklist-gone", "gone", "a/b/c"])
def test_recrawl_from_a_missing_local_path_says_it_does_not_exist(
    capsys: pytest.CaptureFixture[str], where: str
) -> None:
    code, _, err = _out(capsys, ["recrawl", "run", "--from", where, "--column", "url", "--out", "x"])
    assert code == 2
    assert err.strip() == (f"ccrawl: --from {where!r}: no such file or directory (a local work list is a text, "
                           "JSONL, CSV or Parquet file, or a directory of them; a Hub dataset is written owner/name)")
    assert "--repo" not in err


def test_recrawl_from_a_warc_file_says_it_is_not_a_list(capsys: pytest.CaptureFixture[str], warc: Path) -> None:
    code, _, err = _out(capsys, ["recrawl", "run", "--from", str(warc), "--column", "url", "--out", "x"])
    assert code == 2 and "is a web archive, not a list of URLs" in err and len(err.strip().splitlines()) == 1


# -- one size parser, one duration parser ------------------------------------------------------------


def test_one_size_parser_behind_every_size_flag() -> None:
    from ccrawl.cli.commoncrawl import parse_size as export_size
    from ccrawl.cli.recrawl_run import parse_size as shard_size
    from ccrawl.config import parse_size

    cases = {"1GB": 10**9, "1 GB": 10**9, "1g": 10**9, "1GiB": 1 << 30, "512MiB": 512 << 20, "1.5kB": 1500,
             "16MiB": 16 << 20, "65536": 65536, "2TB": 2 * 10**12}
    for text, expected in cases.items():
        assert parse_size(text) == expected, text
        assert export_size(text, "--size") == shard_size(text, "--shard-size") == expected, text
    with pytest.raises(UsageError, match=r"--shard-size: not a size: '12 parsecs' \(write it as"):
        shard_size("12 parsecs", "--shard-size")
    with pytest.raises(UsageError, match="--size"):
        export_size("1XB", "--size")


def test_size_help_documents_the_units(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recrawl", "run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "MB = 10^6 bytes, MiB = 2^20" in out and "[default: 512MiB]" in out


def test_one_duration_parser() -> None:
    from ccrawl.cli.recrawl_run import parse_seconds
    from ccrawl.config import parse_duration
    from ccrawl.net.client import seconds

    for text in ("2d", "1w", "90s", "1m30s", "250ms"):
        assert seconds(text) == parse_duration(text) == parse_seconds(text, "--delay")
    with pytest.raises(UsageError, match="--delay"):
        parse_seconds("soon", "--delay")


# -- the run summary's position line ------------------------------------------------------------------


def test_run_summary_says_where_the_work_list_stands_in_words() -> None:
    from ccrawl.recrawl.summary import RunSummary

    done = RunSummary(fetched=3, ok=3, files=["a"], part=1, row=0, done=True).lines()[0]
    assert done.endswith("1 file sealed; the whole work list is done") and "position part" not in done
    stopped = RunSummary(part=0, row=3000, stopped_by="max_pages", state="out/.ccrawl-state.json").lines()[0]
    assert ("stopped by max_pages at part 0 row 3000 of the work list; the same command resumes from there "
            "(checkpoint out/.ccrawl-state.json)") in stopped
    unkept = RunSummary(part=0, row=3000, stopped_by="max_pages").lines()[0]
    assert "nothing was checkpointed (no --out or --state), so a rerun starts from the beginning" in unkept
    nothing = RunSummary(stopped_by="nothing", done=True, state="s.json").lines()[0]
    assert "nothing to do: the checkpoint s.json says the whole work list is already done" in nothing
