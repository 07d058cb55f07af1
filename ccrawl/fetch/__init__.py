"""Live fetching for the recrawl and crawl engines: one Fetcher per process, results as rows.

::

    from ccrawl.fetch import FetchConfig, Fetcher, run

    async def main():
        async with Fetcher(FetchConfig(delay=1.0, robots=True)) as fetcher:
            result = await fetcher.fetch("https://example.com/")
            print(result.status, result.error, len(result.body), result.digest)

    run(main())          # uvloop when installed

See ``docs/fetch.md`` for the error classes, robots.txt behaviour, the DNS cap and the phases.
"""

from ccrawl.fetch.classify import classify
from ccrawl.fetch.client import Fetcher
from ccrawl.fetch.config import FetchConfig, default_dns_lookups
from ccrawl.fetch.loop import loop_name, run
from ccrawl.fetch.result import ERROR_CLASSES, FetchResult, Phases, headers_to_json, sha1_base32

__all__ = [
    "ERROR_CLASSES",
    "FetchConfig",
    "FetchResult",
    "Fetcher",
    "Phases",
    "classify",
    "default_dns_lookups",
    "headers_to_json",
    "loop_name",
    "run",
    "sha1_base32",
]
