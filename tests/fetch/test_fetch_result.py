"""FetchResult's helpers: headers as JSON, the heads a WARC writer needs, meta_json keys."""

from __future__ import annotations

import json

from ccrawl.fetch import FetchResult, headers_to_json
from ccrawl.fetch.result import canonical_header_name, request_headers_json
from ccrawl.testing.synthweb import SynthWeb


def test_headers_json_groups_repeated_names_under_the_canonical_key_in_order() -> None:
    text = headers_to_json([("content-type", "text/html"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
    assert json.loads(text) == {"Content-Type": ["text/html"], "Set-Cookie": ["a=1", "b=2"]}


def test_utf8_header_values_show_as_text_and_latin1_ones_survive() -> None:
    raw_utf8 = "café".encode().decode("latin-1")  # how the served bytes are held
    text = headers_to_json([("X-A", raw_utf8), ("X-B", "\xe9t\xe9")])
    assert json.loads(text) == {"X-A": ["café"], "X-B": ["été"]}


def test_canonical_header_name_matches_go() -> None:
    assert canonical_header_name("x-forwarded-FOR") == "X-Forwarded-For"
    assert canonical_header_name("etag") == "Etag"


def test_failure_row_has_no_header_json_and_empty_meta_but_the_detail() -> None:
    r = FetchResult(url="http://a.test/", host="a.test", error="dns", error_detail="no such host")
    assert r.headers_json() == "" and r.meta() == {"error_detail": "no such host"}


def test_stored_head_describes_the_stored_body(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_body=1000), synth.url("site0.test", "/fault/big-chunked?mb=0.01"))
    served = r.response_head().decode("latin-1")
    stored = r.stored_response_head().decode("latin-1")
    assert served.startswith("HTTP/1.1 200 OK\r\n") and "Transfer-Encoding: chunked" in served
    assert "Transfer-Encoding" not in stored and "Content-Length: 1000\r\n" in stored
    assert stored.endswith("\r\n\r\n")


def test_stored_head_keeps_content_encoding_and_records_the_served_length(synth: SynthWeb, config, fetch_many) -> None:
    coded, big = fetch_many(
        config(max_body=5000),
        [synth.url("site0.test", "/fault/encoding/gzip"), synth.url("site0.test", "/fault/big?mb=0.01")],
    )
    assert b"Content-Encoding: gzip\r\n" in coded.stored_response_head()
    assert f"Content-Length: {len(coded.body)}\r\n".encode() in coded.stored_response_head()
    head = big.stored_response_head()
    assert b"X-Crawler-Content-Length: 10485\r\n" in head and b"Content-Length: 5000\r\n" in head


def test_request_head_is_what_was_sent(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/p/1?x=1"), etag='"e"')
    head = r.request_head().decode()
    assert head.startswith("GET /p/1?x=1 HTTP/1.1\r\n")
    assert f"Host: site0.test:{synth.port}\r\n" in head and 'If-None-Match: "e"\r\n' in head
    assert json.loads(r.req_headers_json())["User-Agent"][0].startswith("ccrawl/")


def test_success_row_carries_the_measured_columns(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/slow-ttfb?s=0.2"))
    assert r.status == 200 and r.ok
    assert 190 <= r.ttfb_ms <= r.fetch_duration_ms < 2000
    assert r.fetched_at > 1_600_000_000_000  # unix ms
    assert r.http_version == "1.1" and r.reason == "OK"
    assert r.phases.ttfb >= 0.19 and r.phases.body >= 0
    assert r.content_type.startswith("text/html")


def test_request_head_carries_the_target_as_sent_for_idn_hosts_and_non_ascii_queries(
    synth: SynthWeb, config, fetch_one
) -> None:
    r = fetch_one(config(), f"http://bücher.test:{synth.port}/p/1?q=ä b")
    assert (r.status, r.host) == (200, "bücher.test")
    head = r.request_head()
    assert head.startswith(b"GET /p/1?q=%C3%A4+b HTTP/1.1\r\n")
    assert f"Host: xn--bcher-kva.test:{synth.port}\r\n".encode() in head
    assert synth.stats.requests[("xn--bcher-kva.test", "/p/1")] >= 1


def test_request_headers_json_is_the_same_text_as_headers_to_json_and_is_remembered() -> None:
    headers = [("Host", "a.test:8080"), ("User-Agent", "ccrawl/1"), ("Accept-Encoding", "gzip")]
    first = request_headers_json(headers)
    assert first == headers_to_json(headers)
    assert request_headers_json(list(headers)) is first, "the same headers give the remembered text"
    other = request_headers_json([("Host", "b.test:8080"), *headers[1:]])
    assert json.loads(other)["Host"] == ["b.test:8080"]


def test_header_json_text_matches_json_dumps_of_the_grouped_values() -> None:
    headers = [("content-type", "text/html"), ("X-Ctl", "a\x01b\"c"), ("x-ctl", "caf\xc3\xa9"), ("X-L", "\xe9")]
    grouped = {"Content-Type": ["text/html"], "X-Ctl": ["a\x01b\"c", "café"], "X-L": ["\xe9"]}
    assert headers_to_json(headers) == json.dumps(grouped, ensure_ascii=False, separators=(",", ":"))
    assert canonical_header_name("content-type") == canonical_header_name("content-type") == "Content-Type"
