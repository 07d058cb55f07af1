"""The per-host clock: request starts to one host are at least the delay apart; hosts do not wait for each other."""

from __future__ import annotations

import asyncio
import itertools
import time

from ccrawl.fetch import run
from ccrawl.fetch.politeness import HostClock
from ccrawl.testing.synthweb import SynthWeb


def _gaps(times: list[float]) -> list[float]:
    times = sorted(times)
    return [b - a for a, b in itertools.pairwise(times)]


def test_concurrent_fetches_of_one_host_are_spaced_by_the_delay(
    synth: SynthWeb, config, fetch_many, fresh_host
) -> None:
    host = fresh_host()
    stats: dict = {}
    results = fetch_many(config(delay=0.2), [synth.url(host, f"/p/{n}") for n in range(4)], stats=stats)
    assert all(r.status == 200 for r in results)
    # the contract is on the client's request starts (stamped as each request goes out, in ms)
    starts = _gaps([r.fetched_at / 1000 for r in results])
    assert len(starts) == 3
    assert min(starts) >= 0.198, starts  # the stamps are whole ms: a 0.2 s gap can read 0.199 minus float error
    # and the server saw them spaced too; its stamps are taken when its handler runs, which a busy
    # process (the server is a thread of this one) can delay for the first of two requests
    gaps = _gaps(synth.stats.times(host))
    assert len(gaps) == 3
    assert min(gaps) >= 0.1, gaps  # without the clock they would be a few ms
    assert stats["phases_s"]["host_clock"] >= 0.2 * (1 + 2 + 3) * 0.9


def test_different_hosts_do_not_wait_for_each_other(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    urls = [synth.url(fresh_host(), "/p/0") for _ in range(10)]
    start = time.monotonic()
    results = fetch_many(config(delay=2.0), urls)
    assert all(r.status == 200 for r in results)
    assert time.monotonic() - start < 1.5  # one request per host: nobody waits the 2 s


def test_zero_delay_turns_the_clock_off(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    host = fresh_host()
    stats: dict = {}
    fetch_many(config(delay=0.0), [synth.url(host, f"/p/{n}") for n in range(5)], stats=stats)
    assert stats["phases_s"]["host_clock"] == 0.0
    assert stats["host_clock_entries"] == 0


def test_concurrency_bounds_fetches_in_flight(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    urls = [synth.url(fresh_host(), "/fault/slow-ttfb?s=0.2") for _ in range(8)]
    stats: dict = {}
    start = time.monotonic()
    fetch_many(config(concurrency=2), urls, stats=stats)
    assert stats["peak_in_flight"] == 2
    assert time.monotonic() - start >= 0.2 * 4 * 0.9  # eight 0.2 s answers, two at a time
    assert stats["phases_s"]["slot"] > 0


def test_clock_forgets_hosts_whose_spacing_has_run_out() -> None:
    clock = HostClock()

    async def main() -> tuple[int, int]:
        for host in ("a.test", "b.test", "c.test"):
            await clock.wait_turn(host, 0.05)
        before = len(clock)
        await asyncio.sleep(0.06)
        clock.sweep()
        return before, len(clock)

    assert run(main()) == (3, 0)


def test_clock_returns_the_seconds_it_made_the_caller_wait() -> None:
    clock = HostClock()

    async def main() -> list[float]:
        return [await clock.wait_turn("a.test", 0.1) for _ in range(3)]

    first, second, third = run(main())
    assert first < 0.01 and 0.08 < second < 0.2 and 0.08 < third < 0.2
