"""The Fetcher's life cycle: bad URLs are rows, cancellation gives its slot back, either event loop works."""

from __future__ import annotations

import asyncio

import pytest

from ccrawl.fetch import FetchConfig, Fetcher, loop_name, run
from ccrawl.testing.synthweb import SynthWeb


@pytest.mark.parametrize("url", ["http://a.test:99999/", "http://[::1/", "mailto:someone@a.test", "/relative/path", ""])
def test_unfetchable_urls_are_other_rows_not_exceptions(config, fetch_one, url: str) -> None:
    r = fetch_one(config(), url)
    assert (r.status, r.error) == (0, "other")
    assert r.error_detail and r.fetched_at > 0


def test_a_cancelled_fetch_gives_its_concurrency_slot_back(synth: SynthWeb, config) -> None:
    cfg = config(concurrency=1)

    async def main() -> int:
        async with Fetcher(cfg) as fetcher:
            stuck = asyncio.ensure_future(fetcher.fetch(synth.url("site0.test", "/fault/slow-ttfb?s=30")))
            await asyncio.sleep(0.2)
            stuck.cancel()
            with pytest.raises(asyncio.CancelledError):
                await stuck
            nxt = await asyncio.wait_for(fetcher.fetch(synth.url("site0.test", "/p/0")), timeout=3)
            assert fetcher.stats()["in_flight"] == 0
            return nxt.status

    assert run(main()) == 200


def test_a_fetch_cancelled_while_waiting_for_its_host_leaves_the_clock_usable(
    synth: SynthWeb, config, fresh_host
) -> None:
    host = fresh_host()
    cfg = config(delay=0.3)

    async def main() -> list[int]:
        async with Fetcher(cfg) as fetcher:
            first = await fetcher.fetch(synth.url(host, "/p/0"))
            waiting = asyncio.ensure_future(fetcher.fetch(synth.url(host, "/p/1")))
            await asyncio.sleep(0.05)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            after = await fetcher.fetch(synth.url(host, "/p/2"))
            return [first.status, after.status]

    assert run(main()) == [200, 200]


def test_works_on_the_plain_asyncio_loop(synth: SynthWeb, config) -> None:
    async def main() -> int:
        async with Fetcher(config()) as fetcher:
            return (await fetcher.fetch(synth.url("site2.test", "/p/0"))).status

    assert run(main(), use_uvloop=False) == 200
    assert loop_name() in ("uvloop", "asyncio")


def test_fetch_outside_the_context_is_a_programming_error() -> None:
    async def main() -> None:
        await Fetcher(FetchConfig()).fetch("http://a.test/")

    with pytest.raises(RuntimeError, match="async with"):
        run(main())
