"""The resolver: lookups in flight capped, answers and failures cached with a bound, overrides matched."""

from __future__ import annotations

import asyncio

import pytest

from ccrawl.errors import UsageError
from ccrawl.fetch import FetchConfig, Fetcher, run
from ccrawl.fetch.dns import CachingResolver, match_override
from ccrawl.testing.synthweb import SynthWeb


@pytest.fixture
def slow_dns(synth: SynthWeb):  # type: ignore[no-untyped-def]
    """The synthetic DNS server answering after 50 ms, its peak counter reset."""
    synth.dns_delay = 0.05
    synth.stats.dns_peak_in_flight = 0
    yield synth
    synth.dns_delay = 0.0


def _dns_config(synth: SynthWeb, **kw: object) -> FetchConfig:
    # No override: every name goes to the synthetic web's DNS server, which answers .test names with
    # loopback, so the loopback block is lifted explicitly (it is tested in test_private_addresses.py).
    return FetchConfig(nameservers=synth.nameservers, delay=0.0, timeout=10.0, allow_private_addresses=True,
                       **kw)  # type: ignore[arg-type]


def test_dns_lookups_in_flight_never_exceed_the_cap(slow_dns: SynthWeb, fetch_many, fresh_host) -> None:
    urls = [slow_dns.url(fresh_host(), "/p/0") for _ in range(24)]
    stats: dict = {}
    results = fetch_many(_dns_config(slow_dns, dns_lookups=4), urls, stats=stats)
    assert all(r.status == 200 for r in results), {r.error_detail for r in results}
    assert stats["dns"]["peak_in_flight"] == 4
    assert slow_dns.stats.dns_peak_in_flight <= 4  # what the server saw, not just what we counted
    assert stats["dns"]["lookups"] == 24
    # 24 lookups of 50 ms, four at a time: at least six rounds of waiting, charged to the dns phase.
    assert stats["phases_s"]["dns"] >= 24 * 0.05 * 0.9


def test_a_host_is_looked_up_once_however_many_fetches_want_it(slow_dns: SynthWeb, fetch_many, fresh_host) -> None:
    host = fresh_host()
    before = slow_dns.stats.dns_queries
    stats: dict = {}
    results = fetch_many(_dns_config(slow_dns), [slow_dns.url(host, f"/p/{n}") for n in range(5)], stats=stats)
    assert all(r.status == 200 for r in results)
    assert slow_dns.stats.dns_queries - before == 1
    assert stats["dns"]["lookups"] == 1 and stats["dns"]["cache_hits"] == 4


def test_failures_are_cached_too(synth: SynthWeb, fetch_many) -> None:
    before = synth.stats.dns_queries
    stats: dict = {}
    results = fetch_many(_dns_config(synth), ["http://gone.invalid/a", "http://gone.invalid/b"], stats=stats)
    assert [r.error for r in results] == ["dns", "dns"]
    assert synth.stats.dns_queries - before == 1
    assert stats["dns"]["failures"] == 1


def test_cache_is_bounded(synth: SynthWeb, fetch_many, fresh_host) -> None:
    stats: dict = {}
    fetch_many(_dns_config(synth, dns_cache_size=5), [synth.url(fresh_host(), "/") for _ in range(12)], stats=stats)
    assert stats["dns"]["cache_entries"] == 5


def test_ip_address_is_the_peer_the_request_went_to(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site3.test", "/p/0"))
    assert r.ip_address == "127.0.0.1"


def test_override_patterns_exact_then_longest_suffix_then_star() -> None:
    table = {"a.test": "127.0.0.2", "*.test": "127.0.0.3", "*.deep.test": "127.0.0.4", "*": "127.0.0.5"}
    assert match_override("a.test", table) == "127.0.0.2"
    assert match_override("B.Test.", table) == "127.0.0.3"
    assert match_override("x.deep.test", table) == "127.0.0.4"
    assert match_override("example.com", table) == "127.0.0.5"
    assert match_override("example.com", {"*.test": "127.0.0.1"}) is None
    assert match_override("test", {"*.test": "127.0.0.1"}) is None


def test_overridden_names_never_reach_the_dns_server(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    before = synth.stats.dns_queries
    assert fetch_one(config(), synth.url(fresh_host(), "/")).status == 200
    assert synth.stats.dns_queries == before


def test_a_bad_override_address_is_refused_at_start() -> None:
    async def main() -> None:
        CachingResolver(override={"*.test": "not-an-ip"})

    with pytest.raises(ValueError):
        run(main())


def test_cancelled_caller_does_not_fail_others_waiting_for_the_same_lookup(slow_dns: SynthWeb, fresh_host) -> None:
    host = fresh_host()

    async def main() -> list[str]:
        resolver = CachingResolver(nameservers=slow_dns.nameservers, allow_private=True)
        first = asyncio.ensure_future(resolver.lookup(host))
        second = asyncio.ensure_future(resolver.lookup(host))
        await asyncio.sleep(0.01)
        first.cancel()
        ips = await second
        await resolver.close()
        return ips

    assert run(main()) == ["127.0.0.1"]


def test_fetcher_rejects_a_config_that_cannot_work() -> None:
    with pytest.raises(UsageError, match="dns_lookups"):
        Fetcher(FetchConfig(dns_lookups=0))
