"""Input a command cannot use is named in one line, exit 1, not an "internal error" (#36)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_dedup_names_a_markdown_column_that_is_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"url": ["http://a.test/"], "markdown": [3]}), path)
    code, out, err = _run(capsys, ["dedup", str(path)])
    assert code == 1 and out == ""
    assert err.strip() == f"ccrawl: {path}: the markdown column holds int64, not text; is this a dataset markdown " \
        "export or refetch wrote?"


def test_columnar_count_names_the_missing_column_and_the_part(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    part = tmp_path / "cc-index/table/cc-main/warc/crawl=CC-MAIN-2024-10/subset=warc/part-0.parquet"
    part.parent.mkdir(parents=True)
    pq.write_table(pa.table({"foo": [1, 2]}), part)
    code, out, err = _run(capsys, ["columnar", "count", "--local", str(tmp_path), "--domain", "example.com"])
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert f"{part}: no url_host_registered_domain, url_surtkey columns: not a cc-index table part" in err


def test_db_on_a_full_device_names_the_target_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    code, _, err = _run(capsys, ["--db", "/dev/full", "url", "surt", "http://a.test/x"])
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert err.startswith("ccrawl: --db /dev/full: cannot write the records there (") and "No space left" in err


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("fmt", ["json", "table", "jsonl"])
def test_a_failed_content_run_prints_nothing_on_stdout(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    code, out, err = _run(capsys, ["content", "outlinks", "--allow-private-addresses", url, "-o", fmt])
    assert code == 1
    assert out == ""  # not "[\n]": a failed run has no result to print
    assert "every URL failed (1)" in err and f"{url}: refused" in err


def test_an_empty_list_still_prints_its_empty_result(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, out, err = _run(capsys, ["content", "outlinks", "-", "-o", "json"])
    assert code == 3 and out == "[\n]\n" and "stdin was empty" in err
