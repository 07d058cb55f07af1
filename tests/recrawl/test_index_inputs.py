"""``index build --input`` takes what ccrawl writes (issue #37, item 5): the Parquet captures of
``recrawl run``, the Parquet of ``markdown export``, WARC files (a recrawl's, or any with request and
warcinfo records, which are counted as ``other_records`` and never warned about one by one)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.recrawl import run_recrawl
from ccrawl.store.textindex import Searcher
from ccrawl.testing.synthweb import SynthWeb

FAST = {"delay": 0, "workers": 8, "timeout": 5, "tick_seconds": 0.2}
REPO = Path(__file__).resolve().parents[2]


def _build(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["index", "build", *args, "-o", "json"]) or 0
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out.strip() else {}), captured.err


@pytest.mark.parametrize("fmt", ["parquet", "warc"])
def test_index_build_reads_the_output_directory_of_a_recrawl(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    urls = web.page_urls()[:8]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    out = tmp_path / "out"
    run_recrawl(str(wl), column="url", out=str(out), format=fmt, resolve=web.resolve, **FAST)
    code, record, err = _build(capsys, "--dir", str(tmp_path / "idx"), "--input", str(out))
    assert code == 0, err
    assert record["documents"] == 8 and record["skipped"] == 0 and record["no_text"] == 0
    if fmt == "warc":  # a request record per response, and a warcinfo per file: counted, not warned about
        assert record["other_records"] >= 8
    assert err == ""
    searcher = Searcher.open(tmp_path / "idx")
    assert searcher.documents == 8
    page = pq.read_table(next(out.glob("*.parquet")), columns=["url", "text"]).to_pylist()[0] \
        if fmt == "parquet" else None
    if page is not None:
        word = max(page["text"].split(), key=len)
        assert page["url"] in [r["url"] for r in searcher.search(word, 20)]


def test_a_fetch_only_recrawl_has_no_text_and_says_why_it_indexed_nothing(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:3], parts=1)
    run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), no_extract=True, resolve=web.resolve, **FAST)
    code, _, err = _build(capsys, "--dir", str(tmp_path / "idx"), "--input", str(tmp_path / "out"))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert "3 documents had no text" in lines[0] and "not --no-extract" in lines[0]


def test_index_build_reads_markdown_export_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the columns docs/markdown.md gives for data/crawl=<id>/NNNNNN.parquet (no title, no text: markdown)
    data = tmp_path / "md" / "data" / "crawl=CC-MAIN-2099-01"
    data.mkdir(parents=True)
    pq.write_table(pa.table({
        "doc_id": ["a", "b", "c"],
        "url": ["http://a.test/", "http://b.test/", "http://c.test/"],
        "host": ["a.test", "b.test", "c.test"],
        "markdown": ["# Rivers\\n\\nThe **north** river floods", "Harbour towns by the sea", ""],
        "markdown_length": [30, 24, 0],
        "language": ["eng", "eng", ""],
    }), data / "000000.parquet")
    code, record, err = _build(capsys, "--dir", str(tmp_path / "idx"), "--input", str(tmp_path / "md"))
    assert code == 0 and err == ""
    assert record["documents"] == 2 and record["no_text"] == 1 and record["skipped"] == 0
    rows = Searcher.open(tmp_path / "idx").search("harbour")
    assert [r["url"] for r in rows] == ["http://b.test/"] and rows[0]["language"] == "eng"


def _warc_with_requests(path: Path) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        pages = [("http://a.test/", "text/html", b"<html><head><title>A</title></head><body>quiet lakes</body></html>"),
                 ("http://b.test/", "text/html", b"<html><body>loud waterfalls and lakes</body></html>"),
                 ("http://c.test/logo.png", "image/png", b"\x89PNG\r\n\x1a\n")]
        for url, mime, body in pages:
            req = StatusAndHeaders("GET / HTTP/1.1", [("Host", url.split("/")[2])], is_http_request=True)
            writer.write_record(writer.create_warc_record(url, "request", http_headers=req))
            head = StatusAndHeaders("200 OK", [("Content-Type", mime)], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          http_headers=head))


def test_index_build_over_a_warc_counts_request_and_warcinfo_records_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warc = tmp_path / "x.warc.gz"
    _warc_with_requests(warc)
    code, record, err = _build(capsys, "--dir", str(tmp_path / "idx"), "--input", str(warc))
    assert code == 0 and err == ""  # no per-record warning for request/warcinfo records, nor for the PNG
    assert (record["documents"], record["other_records"], record["no_text"], record["skipped"]) == (2, 4, 1, 0)
    assert {r["url"] for r in Searcher.open(tmp_path / "idx").search("lakes")} == {"http://a.test/",
                                                                                  "http://b.test/"}


def test_parse_piped_into_index_build_warns_only_for_bad_lines(tmp_path: Path) -> None:
    warc = tmp_path / "x.warc.gz"
    _warc_with_requests(warc)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": "/nonexistent-ccrawl-config"}
    parsed = subprocess.run([sys.executable, "-m", "ccrawl", "parse", str(warc), "--text", "-o", "jsonl"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert parsed.returncode == 0, parsed.stderr
    r = subprocess.run([sys.executable, "-m", "ccrawl", "index", "build", "--dir", str(tmp_path / "idx"),
                        "--input", "-", "-o", "json"], input=parsed.stdout + "not json\n", capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines() == [
        "ccrawl: warning: stdin line 8: not a JSON object (Expecting value: line 1 column 1 (char 0)); skipped"]
    record = json.loads(r.stdout)
    assert (record["documents"], record["other_records"], record["no_text"], record["skipped"]) == (2, 4, 1, 1)
