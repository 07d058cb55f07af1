"""Scrapy as a user would run it for a recrawl: a count-only spider, or one writing a JSONL feed.

    python -m bench.peers.scrapy_count URLS_FILE [--feed out.jsonl] --resolve-to 127.0.0.1

CONCURRENT_REQUESTS 256 (and per domain), no delay, robots off, no retries, no cookies. Every
host name resolves to ``--resolve-to``. Prints one JSON line: pages, bytes, errors, seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

RESOLVE_TO = "127.0.0.1"


def _resolver_class() -> Any:
    from twisted.internet import defer
    from twisted.internet.interfaces import IResolverSimple
    from zope.interface import implementer

    @implementer(IResolverSimple)
    class FixedResolver:
        def __init__(self, reactor: Any = None, cache_size: int = 0, timeout: float = 0.0) -> None:
            pass

        @classmethod
        def from_crawler(cls, crawler: Any, reactor: Any) -> FixedResolver:
            return cls()

        def install_on_reactor(self) -> None:
            from twisted.internet import reactor

            reactor.installResolver(self)

        def getHostByName(self, name: str, timeout: Any = None) -> Any:
            return defer.succeed(RESOLVE_TO)

    return FixedResolver


def main() -> None:
    global RESOLVE_TO
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("urls_file")
    parser.add_argument("--feed", default="")
    parser.add_argument("--resolve-to", default="127.0.0.1")
    args = parser.parse_args()
    RESOLVE_TO = args.resolve_to

    import scrapy
    from scrapy.crawler import CrawlerProcess

    with open(args.urls_file) as fh:
        urls = [line.strip() for line in fh if line.strip()]
    totals = {"pages": 0, "bytes": 0, "errors": 0}

    class CountSpider(scrapy.Spider):
        name = "count"

        async def start(self) -> Any:
            for u in urls:
                yield scrapy.Request(u, callback=self.parse, errback=self.failed, dont_filter=True)

        def parse(self, response: Any) -> Any:
            totals["pages"] += 1
            totals["bytes"] += len(response.body)
            if args.feed:
                yield {"url": response.url, "status": response.status, "length": len(response.body)}

        def failed(self, failure: Any) -> None:
            totals["errors"] += 1

    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": 256,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 256,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "COOKIES_ENABLED": False,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "DNS_RESOLVER": f"{__name__}._FIXED_RESOLVER",
        "REACTOR_THREADPOOL_MAXSIZE": 4,
    }
    if args.feed:
        settings["FEEDS"] = {args.feed: {"format": "jsonlines", "overwrite": True}}
    process = CrawlerProcess(settings)
    process.crawl(CountSpider)
    start = time.perf_counter()
    process.start()
    out: dict[str, Any] = dict(totals)
    out["seconds"] = round(time.perf_counter() - start, 4)
    print(json.dumps(out))


_FIXED_RESOLVER = _resolver_class()

if __name__ == "__main__":
    main()
