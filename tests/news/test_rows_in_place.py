"""The row reads the body in place (bounds into the whole record, no copy): the bounded helpers answer
what they answer on the copied slice, nothing past the block's declared end leaks into a row, and the
shard writer's Arrow sort keeps the (SURT key with None as "", offset) order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.news.rows import declared_language, row_of, sniff_mime, text_sample
from ccrawl.commoncrawl.news.schema import NAMES
from ccrawl.commoncrawl.news.shard import ShardWriter

BODIES = [
    b"",
    b"   \xef\xbb\xbf<!doctype html><html lang='pt_BR'><title>Ol\xc3\xa1</title><p>Bom dia &amp; boa noite</p>",
    b"%PDF-1.7 binary",
    b"<?xml version='1.0'?><rss><channel/></rss>",
    b"<html><body><script>x()</script><p>" + b"plain words " * 400 + b"</p>",
    b"just text, no markup at all",
]


@pytest.mark.parametrize("body", BODIES)
def test_bounded_helpers_equal_the_copied_slice(body: bytes) -> None:
    data = b"HEAD" * 7 + body + b'\r\n\r\n<html lang="de"><p>after the block</p>'
    s, e = 28, 28 + len(body)
    assert sniff_mime(data, s, e) == sniff_mime(body)
    assert declared_language(data, s, e) == declared_language(body)
    assert text_sample(data, "", s, e) == text_sample(body)
    assert text_sample(data, "windows-1252", s, e) == text_sample(body, "windows-1252")


def _record(body: bytes, trailer: bytes) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2026-07-01T02:25:01Z\r\n"
            f"WARC-Record-ID: <urn:uuid:2>\r\nWARC-Target-URI: https://example.com/a\r\n"
            f"Content-Length: {len(http)}\r\n\r\n").encode()
    return head + http + trailer


def test_nothing_past_the_declared_block_enters_the_row() -> None:
    body = b"<html><body><p>" + b"Short English text about the weather today. " * 20 + b"</p></body></html>"
    clean = row_of("f", 0, 1, _record(body, b"\r\n\r\n"))
    dirty = row_of("f", 0, 1, _record(body, b'\r\n\r\n<html lang="de"><p>Guten Tag, das ist Deutsch.</p>' * 50))
    assert clean is not None and dirty is not None
    assert dirty == clean
    assert clean["content_length"] == len(body) and clean["content_language_declared"] is None
    assert clean["content_languages"] == "eng"


def _row(key: str | None, offset: int) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(NAMES)
    row.update(url_surtkey=key, warc_record_offset=offset, warc_record_length=10, warc_filename="f")
    return row


def test_shard_rows_sorted_by_surt_then_offset(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    rows = [_row("com,b)/", 5), _row(None, 9), _row("com,a)/x", 7), _row("", 3), _row("com,a)/x", 1),
            _row("org,\u00e9)/", 2), _row("org,z)/", 4), _row(None, 0)]
    w = ShardWriter(tmp_path / "s.parquet", row_group=3)
    for r in rows:
        w.add(r)
    w.close({"warc_path": "f"})
    got = pq.read_table(tmp_path / "s.parquet").to_pylist()
    want = sorted(rows, key=lambda r: (r["url_surtkey"] or "", r["warc_record_offset"]))
    assert [(r["url_surtkey"], r["warc_record_offset"]) for r in got] == [
        (r["url_surtkey"], r["warc_record_offset"]) for r in want]
    assert pq.ParquetFile(tmp_path / "s.parquet").metadata.num_row_groups == 3


def test_an_empty_shard_is_written_with_the_schema(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    w = ShardWriter(tmp_path / "e.parquet")
    w.close({"warc_path": "f"})
    table = pq.read_table(tmp_path / "e.parquet")
    assert table.num_rows == 0 and tuple(table.schema.names) == NAMES
