"""Merging fetch counters: what ``a + b`` gives for every field, checked against a hand computation."""

from __future__ import annotations

import pickle

from ccrawl.fetch.result import ERROR_CLASSES, FetchResult, Phases
from ccrawl.fetch.stats import DnsStats, FetchStats, RecentTracker, RobotsStats


def _a() -> FetchStats:
    return FetchStats(started_fetches=10, finished=9, ok=7, failed=2, errors={**dict.fromkeys(ERROR_CLASSES, 0),
                      "dns": 1, "timeout": 1}, status_classes={"2xx": 6, "3xx": 1}, not_modified=2, truncated=1,
                      body_bytes=1000, redirects=3, in_flight=1, peak_in_flight=8,
                      phases=Phases(dns=0.5, connect=1.0, ttfb=2.0, body=0.25, robots=0.125, host_clock=4.0, slot=0.0),
                      elapsed_s=30.0, dns=DnsStats(lookups=5, cache_hits=4, overridden=1, failures=1, blocked=0,
                                                   in_flight=0, peak_in_flight=3, seconds=0.5, cache_entries=5),
                      robots=RobotsStats(fetched=2, cache_hits=7, allowed_all=1, unreachable=0, disallowed_urls=1,
                                         seconds=0.25, cache_entries=2), host_clock_entries=4)


def _b() -> FetchStats:
    return FetchStats(started_fetches=4, finished=4, ok=3, failed=1, errors={**dict.fromkeys(ERROR_CLASSES, 0),
                      "refused": 1}, status_classes={"4xx": 1, "2xx": 2}, not_modified=0, truncated=0,
                      body_bytes=24, redirects=0, in_flight=0, peak_in_flight=12,
                      phases=Phases(dns=0.25, connect=0.5, ttfb=1.0, body=0.5, robots=0.0, host_clock=0.0, slot=1.5),
                      elapsed_s=31.5, dns=DnsStats(lookups=1, cache_hits=0, overridden=0, failures=0, blocked=2,
                                                   in_flight=1, peak_in_flight=1, seconds=0.125, cache_entries=1),
                      robots=RobotsStats(fetched=1, cache_hits=0, allowed_all=0, unreachable=1, disallowed_urls=0,
                                         seconds=1.0, cache_entries=1), host_clock_entries=1)


def test_two_fetch_stats_merge_to_the_hand_computed_sums_and_maxima() -> None:
    total = _a() + _b()
    assert (total.started_fetches, total.finished, total.ok, total.failed) == (14, 13, 10, 3)
    assert (total.not_modified, total.truncated, total.body_bytes, total.redirects) == (2, 1, 1024, 3)
    assert total.in_flight == 1 and total.peak_in_flight == 12  # in flight adds up; a peak is the larger
    assert total.errors == {"dns": 1, "timeout": 1, "refused": 1, "tls": 0, "skip": 0, "other": 0}
    assert list(total.errors) == list(ERROR_CLASSES)
    # a histogram adds key by key, the first operand's keys first
    assert total.status_classes == {"2xx": 8, "3xx": 1, "4xx": 1}
    assert list(total.status_classes) == ["2xx", "3xx", "4xx"]
    assert total.phases == Phases(dns=0.75, connect=1.5, ttfb=3.0, body=0.75, robots=0.125, host_clock=4.0, slot=1.5)
    assert total.elapsed_s == 31.5  # side by side: the longer
    assert total.dns == DnsStats(lookups=6, cache_hits=4, overridden=1, failures=1, blocked=2, in_flight=1,
                                 peak_in_flight=3, seconds=0.625, cache_entries=6)
    assert total.robots == RobotsStats(fetched=3, cache_hits=7, allowed_all=1, unreachable=1, disallowed_urls=1,
                                       seconds=1.25, cache_entries=3)
    assert total.host_clock_entries == 5


def test_merging_leaves_both_operands_alone_and_an_empty_one_is_neutral() -> None:
    a, b = _a(), _b()
    a + b
    assert a == _a() and b == _b()
    assert FetchStats() + a == a and a + FetchStats() == a


def test_robots_off_and_no_resolver_merge_and_render_as_before() -> None:
    off = FetchStats()
    assert (off + off).robots is None
    assert off.as_dict()["robots"] == {"enabled": False}
    assert off.as_dict()["dns"] == {"cache_entries": 0}
    on = _a()
    assert (off + on).robots == on.robots and (on + off).dns == on.dns
    assert on.as_dict()["robots"] == {"fetched": 2, "cache_hits": 7, "allowed_all": 1, "unreachable": 0,
                                      "disallowed_urls": 1, "seconds": 0.25, "enabled": True, "cache_entries": 2}


def test_the_dict_form_keeps_its_keys_in_order() -> None:
    assert list(_a().as_dict()) == ["elapsed_s", "started", "finished", "ok", "failed", "errors", "status_classes",
                                    "not_modified", "truncated", "body_bytes", "redirects", "in_flight",
                                    "peak_in_flight", "phases_s", "dns", "robots", "host_clock_entries"]
    assert list(_a().as_dict()["dns"]) == ["lookups", "cache_hits", "overridden", "failures", "blocked",
                                           "peak_in_flight", "seconds", "cache_entries"]


def test_a_copy_does_not_move_with_the_live_counters() -> None:
    live = _a()
    snap = live.copy()
    live.record(FetchResult(url="http://a.test/", host="a.test", status=200, body=b"xyz"))
    live.errors["dns"] += 5
    assert live.dns is not None
    live.dns.lookups += 1
    assert snap == _a()
    assert pickle.loads(pickle.dumps(snap)) == snap


def test_recent_tracker_reports_the_slowest_hosts_then_forgets() -> None:
    tracker = RecentTracker()
    for host, wire in (("a.test", 1.0), ("a.test", 3.0), ("b.test", 0.5)):
        tracker.record(FetchResult(url=f"http://{host}/", host=host, status=200, phases=Phases(ttfb=wire)))
    tracker.record(FetchResult(url="http://c.test/", host="c.test", error="dns", error_detail="NXDOMAIN"))
    recent = tracker.take()
    assert recent.slow_hosts == [("a.test", 2.0), ("b.test", 0.5), ("c.test", 0.0)]
    assert [(e["url"], e["class"], e["message"]) for e in recent.last_errors] == [
        ("http://c.test/", "dns", "http://c.test/: dns (NXDOMAIN)")]
    assert tracker.take().slow_hosts == [] and tracker.take().last_errors == []
