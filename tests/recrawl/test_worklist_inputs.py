"""``recrawl run --from`` takes the lists users have (issue #37, item 5): a text file of URLs (one a
line, ``#`` comments and blank lines skipped), JSONL (a ``url`` field or ``--column``), CSV (a header
with ``url`` or ``--column``), Parquet, gzip of the text forms, and directories of any of them."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.errors import InputError, UsageError
from ccrawl.recrawl.worklist import LocalWorkList, open_worklist
from ccrawl.testing.synthweb import SynthWeb


def _text(path: Path, urls: list[str]) -> Path:
    lines = ["# seeds for the test", ""] + [u if i % 2 else f"  {u}  " for i, u in enumerate(urls)] + ["", "# end"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _jsonl(path: Path, urls: list[str], field: str = "url") -> Path:
    path.write_text("".join(json.dumps({field: u, "n": i}) + "\n" for i, u in enumerate(urls)) + "\n")
    return path


def _csv(path: Path, urls: list[str], field: str = "url") -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rank", field, "note"])
        w.writerows([i, u, "a, quoted\nnote"] for i, u in enumerate(urls))
    return path


def _every_form(tmp_path: Path, urls: list[str]) -> dict[str, tuple[Path, list[str]]]:
    """form -> (--from path, extra flags)."""
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _text(mixed / "a-1.txt", urls[:2])
    _jsonl(mixed / "b-2.jsonl", urls[2:4])
    _csv(mixed / "c-3.csv", urls[4:])
    (mixed / ".ccrawl-state.json").write_text("{}")  # hidden files are never parts
    gz = tmp_path / "urls.txt.gz"
    gz.write_bytes(gzip.compress("\n".join(urls).encode()))
    pdir = tmp_path / "pq"
    pdir.mkdir()
    pq.write_table(pa.table({"url": urls}), pdir / "part-0.parquet")
    return {
        "text": (_text(tmp_path / "urls.txt", urls), []),
        "text-no-suffix": (_text(tmp_path / "seeds", urls), []),
        "jsonl": (_jsonl(tmp_path / "x.jsonl", urls), []),
        "jsonl-column": (_jsonl(tmp_path / "y.jsonl", urls, field="link"), ["--column", "link"]),
        "csv": (_csv(tmp_path / "x.csv", urls), []),
        "csv-column": (_csv(tmp_path / "y.csv", urls, field="target"), ["--column", "target"]),
        "gzip": (gz, []),
        "parquet-file": (pdir / "part-0.parquet", []),
        "parquet-dir": (pdir, []),
        "mixed-dir": (mixed, []),
    }


FORMS = ["text", "text-no-suffix", "jsonl", "jsonl-column", "csv", "csv-column", "gzip", "parquet-file",
         "parquet-dir", "mixed-dir"]


@pytest.mark.parametrize("form", FORMS)
def test_every_input_form_reads_the_same_urls_in_order(tmp_path: Path, form: str) -> None:
    urls = [f"http://h{i}.test/p{i}" for i in range(6)]
    path, flags = _every_form(tmp_path, urls)[form]
    wl = open_worklist(str(path), column=flags[1] if flags else None)
    got = [v for p in range(len(wl.parts())) for _, v in wl.iter_rows(p)]
    assert got == urls
    assert sum(p.rows for p in wl.parts()) == 6
    # a resume seeks by row offset: row 1 of the first part onwards
    assert [v for _, v in wl.iter_rows(0, 1)] == got[1:len(list(wl.iter_rows(0)))]


@pytest.mark.parametrize("form", ["text", "jsonl", "csv", "mixed-dir"])
def test_recrawl_run_fetches_a_list_given_as(
    web: SynthWeb, tmp_path: Path, read_captures: Any, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    urls = web.page_urls()[:6]
    path, flags = _every_form(tmp_path, urls)[form]
    out = tmp_path / "out"
    code = main(["recrawl", "run", "--from", str(path), *flags, "--out", str(out), "--delay", "0", "--workers", "4",
                 "--resolve", "*.test=127.0.0.1", "--progress", "none", "--no-extract"])
    err = capsys.readouterr().err
    assert (code or 0) == 0, err
    assert "recrawl: 6 fetched (6 ok" in err and "the whole work list is done" in err
    assert Counter(read_captures(out).column("url").to_pylist()) == Counter(urls)


def test_a_list_without_the_column_names_what_it_has(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"x.jsonl \(line 1\) has no 'url' field; its fields are: link, n: name"):
        open_worklist(str(_jsonl(tmp_path / "x.jsonl", ["http://a.test/"], field="link")))
    with pytest.raises(UsageError, match=r"--column .href. is not in x\.csv; its columns are: rank, url, note"):
        open_worklist(str(_csv(tmp_path / "x.csv", ["http://a.test/"])), column="href")


def test_bad_list_files_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"url": "http://a.test/"}\nnot json\n')
    with pytest.raises(InputError, match=r"bad\.jsonl line 2 is not JSON"):
        LocalWorkList(bad)
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(InputError, match="is not UTF-8 text"):
        LocalWorkList(binary)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("not a list")
    code = main(["recrawl", "run", "--from", str(empty), "--out", str(tmp_path / "out"), "--progress", "none"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "holds no work-list files" in err[0]
    code = main(["recrawl", "run", "--from", str(bad), "--out", str(tmp_path / "out"), "--progress", "none"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "line 2 is not JSON" in err[0]
