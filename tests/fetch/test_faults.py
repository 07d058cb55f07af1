"""Every network fault of the synthetic web becomes a row with the right error class, never an exception."""

from __future__ import annotations

import time

from ccrawl.testing.synthweb import SynthWeb


def test_unknown_host_is_a_dns_row_with_the_resolver_message(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), f"http://lapsed-domain.invalid:{synth.port}/")
    assert (r.status, r.error) == (0, "dns")
    assert "lapsed-domain.invalid" in r.error_detail
    assert r.body == b"" and r.digest == "" and r.resp_headers == []


def test_closed_port_is_a_refused_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), f"http://site0.test:{synth.refused_port}/")
    assert (r.status, r.error) == (0, "refused")
    assert r.error_detail


def test_slow_first_byte_past_the_timeout_is_a_timeout_row(synth: SynthWeb, config, fetch_one) -> None:
    start = time.monotonic()
    r = fetch_one(config(timeout=0.5), synth.url("site0.test", "/fault/slow-ttfb?s=10"))
    assert (r.status, r.error) == (0, "timeout")
    assert 0.4 < time.monotonic() - start < 3


def test_body_that_stalls_past_the_timeout_is_a_timeout_row_without_the_partial_body(
    synth: SynthWeb, config, fetch_one
) -> None:
    r = fetch_one(config(timeout=0.5), synth.url("site0.test", "/fault/slow-body?s=10"))
    assert (r.status, r.error, r.body) == (0, "timeout", b"")
    assert r.ttfb_ms < 500  # the head came quickly; the body is what timed out


def test_self_signed_certificate_is_a_tls_row_when_verifying(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/p/0", tls=True))
    assert (r.status, r.error) == (0, "tls")


def test_self_signed_certificate_is_fetched_when_verification_is_off(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(verify_tls=False), synth.url("site0.test", "/p/0", tls=True))
    assert (r.status, r.error) == (200, "")
    assert r.body.startswith(b"<!DOCTYPE html>")


def test_https_to_a_plain_http_port_is_a_tls_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), f"https://site0.test:{synth.port}/p/0")
    assert (r.status, r.error) == (0, "tls")


def test_connection_reset_before_the_answer_is_an_other_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/reset"))
    assert (r.status, r.error) == (0, "other")
    assert r.error_detail


def test_connection_reset_mid_body_is_an_other_row_without_the_partial_body(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/reset-mid-body"))
    assert (r.status, r.error, r.body) == (0, "other", b"")


def test_broken_chunked_encoding_is_an_other_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/broken-chunked"))
    assert (r.status, r.error) == (0, "other")
    assert "chunk" in r.error_detail.lower()


def test_body_shorter_than_its_content_length_is_an_other_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/short-body"))
    assert (r.status, r.error) == (0, "other")


def test_header_value_past_max_header_size_is_an_other_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_header_size=16 * 1024), synth.url("site0.test", "/fault/huge-header?kb=32"))
    assert (r.status, r.error) == (0, "other")


def test_header_value_within_max_header_size_is_kept_whole(synth: SynthWeb, config, fetch_one) -> None:
    # 32 KiB is four times aiohttp's default limit, and real sites send values that long.
    r = fetch_one(config(), synth.url("site0.test", "/fault/huge-header?kb=32"))
    assert (r.status, r.error) == (200, "")
    assert dict(r.resp_headers)["X-Huge"] == "h" * 32 * 1024


def test_three_hundred_headers_are_all_kept_in_served_order_with_duplicates(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/many-headers?n=300"))
    assert r.status == 200
    cookies = [v for n, v in r.resp_headers if n == "Set-Cookie"]
    assert len(cookies) == 150
    assert cookies[:2] == ["value-1", "value-3"]


def test_http_error_statuses_are_answers_not_errors(synth: SynthWeb, config, fetch_many) -> None:
    urls = [synth.url("site0.test", f"/fault/status/{c}") for c in (404, 410, 500, 503)]
    results = fetch_many(config(), urls)
    assert [(r.status, r.error) for r in results] == [(404, ""), (410, ""), (500, ""), (503, "")]
    assert all(r.body.startswith(b"<html>") and r.digest for r in results)


def test_non_http_url_is_an_other_row_and_nothing_is_sent(config, fetch_one) -> None:
    r = fetch_one(config(), "ftp://site0.test/file")
    assert (r.status, r.error) == (0, "other")
    assert "ftp://site0.test/file" in r.error_detail


def test_every_catalog_kind_gives_a_row_and_the_stats_count_each_class(synth: SynthWeb, config, fetch_many) -> None:
    catalog = synth.catalog()
    skip = {"page", "home", "big-body", "slow-ttfb", "slow-body", "robots-timeout", "robots-crawl-delay"}
    urls = [u for kind, us in catalog.items() if kind not in skip for u in us]
    stats: dict = {}
    results = fetch_many(config(robots=True, robots_timeout=2.0), urls, stats=stats)
    assert len(results) == len(urls)
    by_class = {c: sum(r.error == c for r in results) for c in ("dns", "refused", "tls", "skip", "other")}
    assert all(by_class[c] >= 1 for c in by_class), by_class
    assert stats["errors"]["dns"] == by_class["dns"] and stats["finished"] == len(urls)
