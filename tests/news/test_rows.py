"""Record -> row: the computed columns (hosts, detected MIME, languages) and the seed's 22 columns."""

from __future__ import annotations

import datetime as dt
import gzip

import pytest

from ccrawl.commoncrawl.news.months import Month, parse_month, parse_months, source_name
from ccrawl.commoncrawl.news.rows import declared_language, host_fields, row_of, sniff_mime, text_sample
from ccrawl.commoncrawl.news.schema import NAMES, cdx_row
from ccrawl.errors import UsageError


def _record(http: bytes, *, wtype: str = "response", extra: str = "") -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: {wtype}\r\nWARC-Date: 2026-07-01T02:25:01Z\r\n"
            f"WARC-Record-ID: <urn:uuid:1>\r\nWARC-Target-URI: https://www.bbc.co.uk/news/x\r\n{extra}"
            f"Content-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


def test_an_html_article() -> None:
    body = (b'<!doctype html><html lang="en_GB"><head><script>var x = "Fran\xc3\xa7ais";</script></head><body>'
            + b"<p>The quick brown fox jumps over the lazy dog and keeps running through the field.</p>" * 20
            + b"</body></html>")
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n" + body
    row = row_of("f.warc.gz", 10, 99, _record(http, extra="WARC-Payload-Digest: sha1:ABC\r\n"))
    assert row is not None and tuple(row) == NAMES
    assert row["url_host_name"] == "www.bbc.co.uk" and row["url_host_registered_domain"] == "bbc.co.uk"
    assert row["url_host_tld"] == "uk" and row["url_protocol"] == "https"
    assert row["url_surtkey"] == "uk,co,bbc)/news/x"
    assert row["fetch_time"] == dt.datetime(2026, 7, 1, 2, 25, 1, tzinfo=dt.UTC)
    assert row["fetch_status"] == 200 and row["fetch_redirect"] is None
    assert row["content_digest"] == "ABC" and row["content_mime_type"] == "text/html"
    assert row["content_charset"] == "UTF-8" and row["content_mime_detected"] == "text/html"
    assert row["content_languages"] == "eng" and row["content_language_confidence"] > 0.5
    assert row["content_language_declared"] == "en-GB"
    assert row["content_length"] == len(body) and row["warc_record_id"] == "<urn:uuid:1>"
    assert (row["warc_record_offset"], row["warc_record_length"]) == (10, 99)
    cdx = cdx_row(row)
    assert cdx["timestamp"] == "20260701022501" and cdx["offset"] == "10" and cdx["filename"] == "f.warc.gz"


def test_redirect_no_digest_and_non_html() -> None:
    http = b"HTTP/1.1 301 Moved\r\nLocation: https://www.bbc.co.uk/y\r\nContent-Type: text/html\r\n\r\n"
    row = row_of("f", 0, 1, _record(http))
    assert row is not None
    assert row["fetch_status"] == 301 and row["fetch_redirect"] == "https://www.bbc.co.uk/y"
    assert row["content_digest"] is None and row["content_length"] == 0 and row["content_mime_detected"] is None
    pdf = row_of("f", 0, 1, _record(b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7 ..."))
    assert pdf is not None and pdf["content_mime_detected"] == "application/pdf"
    assert pdf["content_languages"] is None and pdf["content_language_confidence"] is None


def test_gzip_content_encoding_is_undone_before_sniffing() -> None:
    body = gzip.compress(b"<html><body><p>" + b"Bonjour tout le monde, voici un article de presse. " * 30 + b"</p>")
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n" + body
    row = row_of("f", 0, 1, _record(http))
    assert row is not None and row["content_mime_detected"] == "text/html" and row["content_languages"] == "fra"
    assert row["content_length"] == len(body)  # the stored size


def test_only_responses_become_rows() -> None:
    assert row_of("f", 0, 1, _record(b"GET / HTTP/1.1\r\n\r\n", wtype="request")) is None
    assert row_of("f", 0, 1, b"") is None
    assert row_of("f", 0, 1, b"garbage\r\n\r\n") is None


@pytest.mark.parametrize(("body", "mime"), [
    (b"", None), (b"%PDF-1.4", "application/pdf"), (b"\xff\xd8\xff\xe0", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"), (b'<?xml version="1.0"?><rss>', "application/rss+xml"),
    (b"<?xml version='1.0'?><feed>", "application/atom+xml"), (b"  <!DOCTYPE html><html>", "text/html"),
    (b'{"a": 1}', "application/json"), (b"plain words", "text/plain"), (b"\x00\x01\x02", "application/octet-stream"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8", "image/webp"),
])
def test_sniff(body: bytes, mime: str | None) -> None:
    assert sniff_mime(body) == mime


def test_declared_language_and_hosts() -> None:
    assert declared_language(b'<html class="x" lang="pt-BR">') == "pt-BR"
    assert declared_language(b"<html><body lang=de>") is None
    assert host_fields("http://192.168.0.1/x") == ("192.168.0.1", None, None, "http")
    assert host_fields("not a url")[0] is None
    assert "alert" not in text_sample(b"<body><script>alert(1)</script><p>Hello &amp; welcome</p></body>")
    assert "Hello & welcome" in text_sample(b"<body><script>alert(1)</script><p>Hello &amp; welcome</p></body>")


def test_months() -> None:
    today = dt.date(2026, 12, 2)
    assert parse_months("2026/07, 2026-06,2026/7", today=today) == [Month(2026, 7), Month(2026, 6)]
    assert Month(2026, 7).shard_path("crawl-data/CC-NEWS/2026/07/CC-NEWS-20260701022501-08467.warc.gz") == (
        "data/2026/07/CC-NEWS-20260701022501-08467.parquet")
    assert source_name("x/CC-NEWS-1-2.warc.gz") == "CC-NEWS-1-2"
    for bad in ("2026", "2026/13", "2016/07", "2027/01", "x/y", ""):
        with pytest.raises(UsageError):
            parse_months(bad, today=today) if bad == "" else parse_month(bad, today=today)
