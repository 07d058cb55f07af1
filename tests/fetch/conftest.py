"""The synthetic web on loopback for the fetch tests, and helpers to run a Fetcher against it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ccrawl.fetch import FetchConfig, Fetcher, FetchResult, run
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread

_serial = itertools.count()


@pytest.fixture(scope="session")
def synth() -> Iterator[SynthWeb]:
    """One synthetic web for the whole session; tests use host names of their own (see ``fresh_host``)."""
    with SynthWebThread(hosts=20, pages=5, page_bytes=8_000, crawl_delay=0.4, robots_stall=5.0) as web:
        yield web


@pytest.fixture
def fresh_host() -> Callable[[str], str]:
    """``fresh_host("rdelay")`` -> ``rdelay-17.test``: a name no other test has used, so caches and logs are clean."""

    def make(prefix: str = "site") -> str:
        return f"{prefix}-t{next(_serial)}.test"

    return make


@pytest.fixture
def config(synth: SynthWeb) -> Callable[..., FetchConfig]:
    """FetchConfig pointed at the synthetic web (override for .test, its DNS server for the rest), no delay."""

    def make(**overrides: Any) -> FetchConfig:
        base: dict[str, Any] = {
            "resolve": synth.resolve,
            "nameservers": synth.nameservers,
            "delay": 0.0,
            "timeout": 5.0,
        }
        base.update(overrides)
        return FetchConfig(**base)

    return make


FetchMany = Callable[..., list[FetchResult]]


@pytest.fixture
def fetch_many() -> FetchMany:
    """``fetch_many(config, urls, stats=out)`` fetches all URLs concurrently in a fresh Fetcher."""

    def go(cfg: FetchConfig, urls: list[str], *, stats: dict[str, Any] | None = None, **kw: str) -> list[FetchResult]:
        async def main() -> list[FetchResult]:
            async with Fetcher(cfg) as fetcher:
                results = await asyncio.gather(*(fetcher.fetch(u, **kw) for u in urls))
                if stats is not None:
                    stats.update(fetcher.stats())
                return list(results)

        return run(main())

    return go


@pytest.fixture
def fetch_one(fetch_many: FetchMany) -> Callable[..., FetchResult]:
    def go(cfg: FetchConfig, url: str, **kw: Any) -> FetchResult:
        return fetch_many(cfg, [url], **kw)[0]

    return go
