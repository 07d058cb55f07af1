"""The fetcher's resolver: an override table, a bounded cache of answers and failures, a cap on
lookups in flight, and a real resolver (c-ares through aiodns, else getaddrinfo) underneath.

aiohttp's own DNS cache is unbounded and keyed by (host, port); on a recrawl where every row is a
new host it only grows, so the connector's cache is turned off and this class caches instead.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Mapping

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from ccrawl.fetch.addresses import blocked_reason, check_address
from ccrawl.fetch.stats import DnsStats
from ccrawl.fetch.trace import current_trace

try:
    import aiodns  # noqa: F401  (aiohttp's AsyncResolver needs it)

    HAVE_AIODNS = True
except ImportError:  # aiodns is optional: getaddrinfo in threads works, just less concurrently
    HAVE_AIODNS = False



def match_override(host: str, table: Mapping[str, str]) -> str | None:
    """The IP ``table`` maps ``host`` to: an exact name first, then the longest ``*.suffix``, then ``*``."""
    host = host.rstrip(".").lower()
    if host in table:
        return table[host]
    best: tuple[int, str] | None = None
    for pattern, ip in table.items():
        wildcard = pattern.startswith("*.") and (host.endswith(pattern[1:]) or fnmatch.fnmatchcase(host, pattern))
        if wildcard and (best is None or len(pattern) > best[0]):
            best = (len(pattern), ip)
    if best is not None:
        return best[1]
    return table.get("*")


class CachingResolver(AbstractResolver):
    """An aiohttp resolver that caps concurrent lookups and caches answers and failures, bounded."""

    def __init__(
        self,
        *,
        override: Mapping[str, str] | None = None,
        max_in_flight: int = 16,
        cache_size: int = 100_000,
        ttl: float = 3600.0,
        timeout: float = 5.0,
        nameservers: tuple[str, ...] = (),
        family: socket.AddressFamily = socket.AF_INET,
        allow_private: bool = False,
    ) -> None:
        self._allow_private = allow_private
        self._override = {k.lower(): v for k, v in (override or {}).items()}
        for ip in self._override.values():
            ipaddress.ip_address(ip)  # a bad override is a usage error at start, not a DNS row later
        self._sem = asyncio.Semaphore(max_in_flight)
        self._cache: OrderedDict[str, tuple[float, list[str] | str]] = OrderedDict()
        self._cache_size = cache_size
        self._ttl = ttl
        self._pending: dict[str, asyncio.Future[list[str]]] = {}
        self._family = family
        self.stats = DnsStats()
        self._real: AbstractResolver
        if HAVE_AIODNS:
            from aiohttp.resolver import AsyncResolver

            if nameservers:
                self._real = AsyncResolver(timeout=timeout, tries=2, nameservers=list(nameservers))
            else:
                self._real = AsyncResolver(timeout=timeout, tries=2)
        else:
            self._real = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        start = time.perf_counter()
        try:
            ips = await self.lookup(host)
        finally:
            trace = current_trace.get()
            if trace is not None:
                trace.dns += time.perf_counter() - start
        return [_result(host, ip, port) for ip in ips]

    async def lookup(self, host: str) -> list[str]:
        """The IPs of ``host``; raises OSError (which aiohttp reports as a DNS error) on failure."""
        key = host.rstrip(".").lower()
        forced = match_override(key, self._override) if self._override else None
        if forced is not None:
            self.stats.overridden += 1
            return [forced]  # pinned by the user: trusted, whatever the address
        ips = await self._lookup_unpinned(key)
        if self._allow_private:
            return ips
        allowed = [ip for ip in ips if not blocked_reason(ip)]
        if not allowed:
            self.stats.blocked += 1
            check_address(key, ips[0])  # raises BlockedAddress, which aiohttp passes through as it is
        return allowed

    async def _lookup_unpinned(self, key: str) -> list[str]:
        cached = self._cache.get(key)
        if cached is not None:
            expires, value = cached
            if expires > time.monotonic():
                self._cache.move_to_end(key)
                self.stats.cache_hits += 1
                if isinstance(value, str):
                    raise OSError(None, value)
                return value
            del self._cache[key]
        task = self._pending.get(key)
        if task is None:
            # A task of its own, so a caller cancelled mid-lookup does not fail the others waiting.
            task = asyncio.ensure_future(self._lookup_and_remember(key))
            self._pending[key] = task
            task.add_done_callback(functools.partial(self._forget_pending, key))
        else:
            self.stats.cache_hits += 1
        return await asyncio.shield(task)

    def _forget_pending(self, key: str, task: asyncio.Future[list[str]]) -> None:
        self._pending.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here, so a lookup nobody still waits for logs no warning

    async def _lookup_and_remember(self, key: str) -> list[str]:
        current_trace.set(None)  # this task's own context: the lookup is shared, not one fetch's
        try:
            ips = await self._lookup_capped(key)
        except OSError as exc:
            message = exc.strerror or str(exc) or "DNS lookup failed"
            self._remember(key, message)
            raise OSError(None, message) from exc
        self._remember(key, ips)
        return ips

    async def _lookup_capped(self, host: str) -> list[str]:
        async with self._sem:
            self.stats.lookups += 1
            self.stats.in_flight += 1
            self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
            start = time.perf_counter()
            try:
                answers = await self._real.resolve(host, 0, family=self._family)
            except OSError:
                self.stats.failures += 1
                raise
            finally:
                self.stats.in_flight -= 1
                self.stats.seconds += time.perf_counter() - start
        ips = list(dict.fromkeys(a["host"] for a in answers))
        if not ips:
            self.stats.failures += 1
            raise OSError(None, "DNS lookup returned no addresses")
        return ips

    def _remember(self, key: str, value: list[str] | str) -> None:
        if self._cache_size <= 0:
            return
        self._cache[key] = (time.monotonic() + self._ttl, value)
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def cache_len(self) -> int:
        return len(self._cache)

    async def close(self) -> None:
        for task in list(self._pending.values()):
            task.cancel()
        await self._real.close()


def _result(hostname: str, ip: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    return ResolveResult(
        hostname=hostname,
        host=ip,
        port=port,
        family=family,
        proto=0,
        flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
    )
