"""robots.txt per RFC 9309 against the synthetic web's robots variants."""

from __future__ import annotations

import asyncio
import itertools
import time

from protego import Protego

from ccrawl.fetch import Fetcher, run
from ccrawl.fetch.robots import RobotsVerdict, product_token, robots_key
from ccrawl.testing.synthweb import SynthWeb


def _paths(synth: SynthWeb, host: str) -> list[str]:
    return [path for _, name, path, _ in list(synth.stats.log) if name == host]


def test_disallowed_url_is_a_skip_row_and_the_page_is_never_requested(
    synth: SynthWeb, config, fetch_one, fresh_host
) -> None:
    host = fresh_host("rdeny")
    r = fetch_one(config(robots=True), synth.url(host, "/p/0"))
    assert (r.status, r.error) == (0, "skip")
    assert "robots.txt" in r.error_detail
    assert r.fetched_at > 1_600_000_000_000  # a skip row is still stamped with when it was decided
    assert _paths(synth, host) == ["/robots.txt"]


def test_rules_are_per_path(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    host = fresh_host()
    stats: dict = {}
    ok, private = fetch_many(config(robots=True), [synth.url(host, "/p/0"), synth.url(host, "/private/x")], stats=stats)
    assert (ok.status, ok.error) == (200, "")
    assert (private.status, private.error) == (0, "skip")
    assert stats["robots"]["disallowed_urls"] == 1


def test_robots_txt_is_fetched_once_per_host_however_many_fetches_ask_at_once(
    synth: SynthWeb, config, fetch_many, fresh_host
) -> None:
    host = fresh_host()
    results = fetch_many(config(robots=True), [synth.url(host, f"/p/{n}") for n in range(5)])
    assert all(r.status == 200 for r in results)
    assert _paths(synth, host).count("/robots.txt") == 1


def test_robots_4xx_allows_everything(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    host = fresh_host("r404")
    r = fetch_one(config(robots=True), synth.url(host, "/private/x"))
    assert (r.status, r.error) == (200, "")


def test_robots_5xx_disallows_the_host_after_retrying_within_the_budget_and_is_cached(
    synth: SynthWeb, config, fetch_many, fresh_host
) -> None:
    host = fresh_host("r5xx")
    cfg = config(robots=True, robots_retries=1, robots_timeout=3.0)
    first, second = fetch_many(cfg, [synth.url(host, "/p/0"), synth.url(host, "/p/1")])
    assert [(r.status, r.error) for r in (first, second)] == [(0, "skip"), (0, "skip")]
    assert "503" in first.error_detail
    assert _paths(synth, host) == ["/robots.txt", "/robots.txt"]  # one try + one retry, then cached


def test_robots_that_never_answers_costs_one_budget_and_is_a_timeout_row(
    synth: SynthWeb, config, fetch_one, fresh_host
) -> None:
    host = fresh_host("rslow")
    start = time.monotonic()
    r = fetch_one(config(robots=True, robots_timeout=0.5, robots_retries=3), synth.url(host, "/p/0"))
    elapsed = time.monotonic() - start
    assert (r.status, r.error) == (0, "timeout")
    assert 0.45 < elapsed < 1.2  # the retries share the one budget
    assert r.phases.robots >= 0.45
    assert "/p/0" not in _paths(synth, host)


def test_robots_on_an_unresolvable_host_gives_a_dns_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(robots=True), "http://gone-robots.invalid/")
    assert (r.status, r.error) == (0, "dns")
    assert r.error_detail.startswith("robots.txt:")


def test_crawl_delay_spaces_requests_when_longer_than_the_delay(
    synth: SynthWeb, config, fetch_many, fresh_host
) -> None:
    host = fresh_host("rdelay")  # serves Crawl-delay: 0.4
    results = fetch_many(config(robots=True, delay=0.05), [synth.url(host, f"/p/{n}") for n in range(3)])
    assert all(r.status == 200 for r in results)
    pages = sorted(t for t, name, path, _ in list(synth.stats.log) if name == host and path != "/robots.txt")
    gaps = [b - a for a, b in itertools.pairwise(pages)]
    assert len(gaps) == 2 and min(gaps) >= 0.39, gaps


def test_crawl_delay_above_the_maximum_makes_skip_rows(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    r = fetch_one(config(robots=True, max_crawl_delay=0.1), synth.url(fresh_host("rdelay"), "/p/0"))
    assert (r.status, r.error) == (0, "skip")
    assert "Crawl-delay" in r.error_detail


def test_robots_redirect_is_followed(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    host = fresh_host("rredirect")
    ok, private = fetch_many(config(robots=True), [synth.url(host, "/p/0"), synth.url(host, "/private/y")])
    assert ok.status == 200 and private.error == "skip"
    assert "/robots-real.txt" in _paths(synth, host)


def test_robots_off_sends_no_robots_request(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    host = fresh_host("rdeny")
    r = fetch_one(config(robots=False), synth.url(host, "/p/0"))
    assert r.status == 200
    assert _paths(synth, host) == ["/p/0"]


def test_redirect_into_a_disallowed_path_is_a_skip_row_that_records_where_it_went(
    synth: SynthWeb, config, fetch_one, fresh_host
) -> None:
    host = fresh_host()
    r = fetch_one(config(robots=True), synth.url(host, "/fault/redirect-private"))
    assert (r.status, r.error) == (0, "skip")
    assert r.final_url == synth.url(host, "/private/landing")
    assert "/private/landing" not in _paths(synth, host)


def test_product_token_and_origin_key() -> None:
    assert product_token("ccrawl/0.1.0 (recrawler)") == "ccrawl"
    assert product_token("MyBot") == "MyBot"
    assert robots_key("https://Example.COM/a?b") == "https://example.com:443"
    assert robots_key("http://example.com:8080/") == "http://example.com:8080"


def test_group_for_our_product_token_wins_over_the_star_group() -> None:
    rules = Protego.parse("User-agent: *\nDisallow: /\n\nUser-agent: ccrawl\nDisallow: /secret\nCrawl-delay: 2\n")
    verdict = RobotsVerdict(200, rules, False, float("inf"))
    assert verdict.can_fetch("http://a.test/page", "ccrawl")
    assert not verdict.can_fetch("http://a.test/secret/x", "ccrawl")
    assert not verdict.can_fetch("http://a.test/page", "otherbot")
    assert verdict.crawl_delay("ccrawl") == 2.0


def test_robots_429_is_treated_as_unreachable_not_as_a_4xx(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    r = fetch_one(config(robots=True, robots_retries=0), synth.url(fresh_host("r429"), "/p/0"))
    assert (r.status, r.error) == (0, "skip")
    assert "429" in r.error_detail


def test_unreachable_verdict_expires_and_the_host_is_asked_again(synth: SynthWeb, config, fresh_host) -> None:
    host = fresh_host("r5xx")
    cfg = config(robots=True, robots_retries=0, robots_unreachable_ttl=0.3)

    async def main() -> list[str]:
        async with Fetcher(cfg) as fetcher:
            first = await fetcher.fetch(synth.url(host, "/p/0"))
            cached = await fetcher.fetch(synth.url(host, "/p/1"))
            await asyncio.sleep(0.35)
            later = await fetcher.fetch(synth.url(host, "/p/2"))
            return [first.error, cached.error, later.error]

    assert run(main()) == ["skip", "skip", "skip"]
    assert _paths(synth, host) == ["/robots.txt", "/robots.txt"]  # once, cached, then asked again


def test_robots_stats_say_what_happened(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    stats: dict = {}
    urls = [synth.url(fresh_host(), "/p/0"), synth.url(fresh_host("r404"), "/"), synth.url(fresh_host("r5xx"), "/")]
    fetch_many(config(robots=True, robots_retries=0), urls, stats=stats)
    robots = stats["robots"]
    assert robots["enabled"] is True
    assert (robots["fetched"], robots["allowed_all"], robots["unreachable"]) == (3, 1, 1)
    assert robots["cache_entries"] == 3
    assert stats["phases_s"]["robots"] > 0


def test_robots_cache_is_bounded(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    stats: dict = {}
    urls = [synth.url(fresh_host(), "/p/0") for _ in range(5)]
    results = fetch_many(config(robots=True, robots_cache_size=2), urls, stats=stats)
    assert all(r.status == 200 for r in results)
    assert stats["robots"]["fetched"] == 5 and stats["robots"]["cache_entries"] == 2


def test_robots_redirect_loop_counts_as_unavailable_and_allows(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    host = fresh_host("rloop")
    r = fetch_one(config(robots=True), synth.url(host, "/private/x"))
    assert (r.status, r.error) == (200, "")
    assert 2 <= _paths(synth, host).count("/robots.txt") <= 6
