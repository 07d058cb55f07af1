"""Live fetching and extraction of URL lists against real servers on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from ccrawl.content.live import (
    fetch_pages,
    live_config,
)
from ccrawl.errors import UsageError
from ccrawl.fetch import FetchConfig
from ccrawl.fetch.config import parse_resolve
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread
from tests.content.server import FixtureServer


@pytest.fixture(scope="module")
def synth() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=12, pages=3, page_bytes=6_000) as web:
        yield web


@pytest.fixture(scope="module")
def fixtures() -> Iterator[FixtureServer]:
    with FixtureServer() as srv:
        yield srv


def cfg(resolve: dict[str, str], **kw: object) -> FetchConfig:
    return live_config(resolve=resolve, delay=0.0, timeout=5.0, **kw)  # type: ignore[arg-type]


def test_pages_come_back_in_input_order_with_their_extraction(synth: SynthWeb) -> None:
    urls = [synth.url(f"site{i}.test", "/p/1") for i in range(10)]
    got = list(fetch_pages(urls, config=cfg(synth.resolve), concurrency=4))
    assert [p.url for p in got] == urls
    for page in got:
        assert page.ok and page.status == 200
        assert page.extraction is not None and page.extraction.title and page.extraction.word_count > 100
        assert page.extraction.charset == "utf-8" and page.extraction.charset_source == "header"
        assert page.html.startswith("<!DOCTYPE html>")


def test_urls_are_fetched_concurrently_up_to_the_bound(fixtures: FixtureServer) -> None:
    fixtures.peak_in_flight = 0
    urls = [fixtures.url(f"h{i}.example", f"/slow/{i}") for i in range(9)]
    got = list(fetch_pages(urls, config=cfg(fixtures.resolve, concurrency=3), concurrency=3))
    assert [p.extraction.title for p in got if p.extraction] == [f"slow {i}" for i in range(9)]
    assert fixtures.peak_in_flight == 3


def test_a_slow_head_of_line_does_not_reorder_the_output(synth: SynthWeb) -> None:
    urls = [synth.url("site1.test", "/fault/slow-ttfb?s=0.3")] + [synth.url(f"site{i}.test", "/") for i in range(2, 6)]
    got = list(fetch_pages(urls, config=cfg(synth.resolve), concurrency=5))
    assert [p.url for p in got] == urls and all(p.ok for p in got)


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate", "zstd"])
def test_every_content_coding_the_crawler_offers_is_decoded(synth: SynthWeb, coding: str) -> None:
    (page,) = fetch_pages([synth.url("site3.test", f"/fault/encoding/{coding}")], config=cfg(synth.resolve))
    assert page.ok, page.error
    assert page.extraction is not None and page.extraction.word_count > 100
    assert "<html" in page.html


def test_failures_are_pages_with_an_error_that_says_what_happened(synth: SynthWeb, fixtures: FixtureServer) -> None:
    urls = {
        "status": synth.url("site1.test", "/fault/status/404"),
        "pdf": synth.url("site1.test", "/fault/pdf"),
        "dns": "http://nowhere.invalid/",
        "refused": f"http://site1.test:{synth.refused_port}/",
        "scheme": "ftp://site1.test/file",
        "coding": fixtures.url("a.example", "/corrupt-gzip"),
        "text": fixtures.url("a.example", "/text"),
    }
    resolve = {**synth.resolve, **fixtures.resolve}
    got = {p.url: p for p in fetch_pages(list(urls.values()), config=cfg(resolve))}
    assert got[urls["status"]].error == "HTTP 404 Not Found"
    assert got[urls["pdf"]].error == "not HTML (application/pdf)"
    assert got[urls["dns"]].error.startswith("dns:")
    assert got[urls["refused"]].error.startswith("refused:")
    assert got[urls["scheme"]].error.startswith("other:")
    assert got[urls["coding"]].error.startswith("gzip body does not decode")
    assert got[urls["text"]].error == "not HTML (text/plain)"
    assert all(p.extraction is None and p.html == "" for p in got.values())


def test_redirects_are_followed_and_links_resolve_against_the_final_url(fixtures: FixtureServer) -> None:
    url = fixtures.url("moved.example", "/redirect")
    (page,) = fetch_pages([url], config=cfg(fixtures.resolve))
    assert page.url == url and page.final_url == fixtures.url("moved.example", "/page/ARTICLE")
    assert page.extraction is not None
    assert fixtures.url("moved.example", "/visit") in page.extraction.outlinks


def test_a_gzip_page_is_decoded_before_extraction(fixtures: FixtureServer) -> None:
    (page,) = fetch_pages([fixtures.url("a.example", "/gzip/ARTICLE")], config=cfg(fixtures.resolve))
    assert page.extraction is not None and page.extraction.title == "A River Town"


def test_the_body_cap_cuts_the_page_and_notes_it(synth: SynthWeb) -> None:
    (page,) = fetch_pages([synth.url("site2.test", "/p/0")], config=cfg(synth.resolve, max_body=2_000))
    assert page.extraction is not None and page.extraction.truncated
    assert any(n.startswith("size: body cut at 2000 bytes") for n in page.extraction.notes)


def test_a_consumer_that_stops_early_stops_the_fetching(fixtures: FixtureServer) -> None:
    before = sum(n for p, n in fixtures.requests.items() if p.startswith("/slow/"))
    urls = [fixtures.url(f"e{i}.example", f"/slow/{i}") for i in range(40)]
    pages_iter = fetch_pages(urls, config=cfg(fixtures.resolve, concurrency=2), concurrency=2)
    first = next(pages_iter)
    pages_iter.close()
    assert first.ok
    after = sum(n for p, n in fixtures.requests.items() if p.startswith("/slow/"))
    assert after - before <= 4


def test_an_input_that_fails_midway_raises_in_the_caller(synth: SynthWeb) -> None:
    def urls() -> Iterator[str]:
        yield synth.url("site1.test", "/")
        raise UsageError("'-' (read stdin) cannot be mixed with other arguments")

    with pytest.raises(UsageError, match="cannot be mixed"):
        list(fetch_pages(urls(), config=cfg(synth.resolve)))


def test_input_is_read_off_the_event_loop(synth: SynthWeb) -> None:
    # A producer that blocks (stdin waiting on `search`) must not hold back pages already fetched.
    gate = threading.Event()

    def urls() -> Iterator[str]:
        yield synth.url("site4.test", "/")
        assert gate.wait(10)
        yield synth.url("site5.test", "/")

    it = fetch_pages(urls(), config=cfg(synth.resolve))
    first = next(it)
    gate.set()
    assert first.ok and [p.ok for p in it] == [True]


def test_an_unknown_extractor_is_a_usage_error_before_any_fetch() -> None:
    with pytest.raises(UsageError, match="unknown extractor"):
        list(fetch_pages(["http://a.example/"], extractor="nope"))


def test_parse_resolve_reads_pattern_ip_pairs_and_rejects_others() -> None:
    assert parse_resolve(["*.Test=127.0.0.1", "a.example = 10.0.0.2"]) == {
        "*.test": "127.0.0.1",
        "a.example": "10.0.0.2",
    }
    with pytest.raises(UsageError, match="PATTERN=IP"):
        parse_resolve(["127.0.0.1"])


def test_live_config_is_the_crawlers_with_the_given_limits() -> None:
    c = live_config(timeout=0, delay=0.5, user_agent="me/1", concurrency=3)
    assert c.max_body == 10 * 1024 * 1024 and c.timeout == 30.0 and c.delay == 0.5
    assert c.user_agent == "me/1" and c.concurrency == 3 and "br" in c.accept_encoding
    assert live_config().user_agent.startswith("ccrawl/")
