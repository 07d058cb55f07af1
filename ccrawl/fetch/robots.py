"""robots.txt per RFC 9309: fetched once per host, cached with a bound, parsed by protego.

What each answer means (RFC 9309 §2.3.1):

- 2xx: the file's rules apply (the first 500 KiB are parsed, as the RFC allows).
- 4xx (except 429): "unavailable", so everything is allowed.
- 5xx, 429, or no answer at all (DNS, refused, TLS, timeout): "unreachable", so everything is
  disallowed, and the verdict is kept for ``robots_unreachable_ttl`` before the host is asked again.

Redirects are followed up to five hops (the RFC's minimum); a longer chain or a loop counts as
"unavailable" (allow), as §2.3.1.2 permits. Retries after a 5xx or a network failure happen
inside the one ``robots_timeout`` budget, so a host that never answers costs that budget once,
not once per retry. A good file is trusted for ``robots_ttl`` (24 h by default).
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from protego import Protego

from ccrawl.fetch.classify import BlockedAddress, classify, describe
from ccrawl.fetch.stats import RobotsStats
from ccrawl.fetch.trace import current_trace

ROBOTS_MAX_BYTES = 500 * 1024


@dataclass(slots=True)
class RobotsVerdict:
    """What a host's robots.txt said: rules to ask, or a blanket allow / disallow."""

    status: int
    """HTTP status of the robots.txt answer; 0 when there was none."""
    rules: Protego | None
    allow_all: bool
    expires: float
    detail: str = ""
    """Why the host is wholly disallowed (a 5xx, a timeout, ...) or ''."""
    failure: BaseException | None = None
    """The network failure that made robots.txt unreachable; None when the host answered."""

    def can_fetch(self, url: str, agent: str) -> bool:
        if self.rules is not None:
            return bool(self.rules.can_fetch(url, agent))
        return self.allow_all

    def crawl_delay(self, agent: str) -> float:
        if self.rules is None:
            return 0.0
        delay = self.rules.crawl_delay(agent)
        return float(delay) if delay else 0.0



def product_token(user_agent: str) -> str:
    """The robots.txt product token of a User-Agent: ``ccrawl/0.1 (...)`` -> ``ccrawl``."""
    token = user_agent.split("/", 1)[0].split(" ", 1)[0].strip()
    return token or user_agent


def robots_key(url: str) -> str:
    """The origin a robots.txt governs: scheme, host and port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


class RobotsCache:
    """Verdicts per origin, LRU-bounded; one fetch per origin however many fetches ask at once."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        user_agent: str,
        timeout: float,
        retries: int,
        ttl: float,
        unreachable_ttl: float,
        max_entries: int,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._session = session
        self._headers = {"User-Agent": user_agent, **(headers or {})}
        self.agent = product_token(user_agent)
        self._timeout = timeout
        self._retries = retries
        self._ttl = ttl
        self._unreachable_ttl = unreachable_ttl
        self._max = max_entries
        self._cache: OrderedDict[str, RobotsVerdict] = OrderedDict()
        self._pending: dict[str, asyncio.Task[RobotsVerdict]] = {}
        self.stats = RobotsStats()

    async def verdict(self, url: str) -> RobotsVerdict:
        """The verdict for ``url``'s origin, fetching robots.txt when it is not cached."""
        key = robots_key(url)
        cached = self._cache.get(key)
        if cached is not None and cached.expires > time.monotonic():
            self._cache.move_to_end(key)
            self.stats.cache_hits += 1
            return cached
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._fetch_and_remember(key))
            self._pending[key] = task
            task.add_done_callback(functools.partial(self._forget_pending, key))
        else:
            self.stats.cache_hits += 1
        return await asyncio.shield(task)

    def _forget_pending(self, key: str, task: asyncio.Task[RobotsVerdict]) -> None:
        self._pending.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here, so a fetch nobody waits for any more logs no warning

    async def _fetch_and_remember(self, key: str) -> RobotsVerdict:
        current_trace.set(None)  # robots time is its own phase, not the page fetch's dns/connect
        start = time.perf_counter()
        try:
            verdict = await self._fetch(key + "/robots.txt")
        finally:
            self.stats.seconds += time.perf_counter() - start
        self._cache[key] = verdict
        self._cache.move_to_end(key)
        while len(self._cache) > self._max:
            self._cache.popitem(last=False)
        return verdict

    async def _fetch(self, robots_url: str) -> RobotsVerdict:
        self.stats.fetched += 1
        deadline = time.monotonic() + self._timeout
        detail = ""
        status = 0
        failure: BaseException | None = None
        for attempt in range(self._retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                async with asyncio.timeout(remaining):
                    status, text = await self._get(robots_url)
            except aiohttp.TooManyRedirects:
                # RFC 9309 §2.3.1.2: past five redirects the file may be taken as unavailable (allow).
                self.stats.allowed_all += 1
                return self._verdict(0, None, allow_all=True)
            except BlockedAddress as exc:
                # robots.txt (or a redirect of it) points into private space: unavailable, and the
                # host's pages become skip rows naming the address; asking again will not change it
                status, failure, detail = 0, exc, f"robots.txt: {describe(exc)}"
                break
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                status, failure = 0, exc
                detail = f"robots.txt: {describe(exc)}"
                if classify(exc) in ("dns", "tls"):
                    break  # the resolver caches the failure and a certificate will not change: no retry
            else:
                failure = None
                if 200 <= status < 300:
                    return self._verdict(status, _parse(text), allow_all=text.strip() == "")
                if 400 <= status < 500 and status != 429:
                    self.stats.allowed_all += 1
                    return self._verdict(status, None, allow_all=True)
                detail = f"robots.txt answered {status}"
            if attempt < self._retries:
                # A short pause, capped so the retry still fits in what is left of the budget.
                pause = min(0.5 * (attempt + 1), max(0.0, (deadline - time.monotonic()) / 2))
                await asyncio.sleep(pause)
        if status == 0 and (failure is None or isinstance(failure, TimeoutError)):
            failure = TimeoutError(f"robots.txt: no answer within {self._timeout:g}s")
            detail = str(failure)
        self.stats.unreachable += 1
        return RobotsVerdict(status, None, False, time.monotonic() + self._unreachable_ttl, detail, failure)

    async def _get(self, robots_url: str) -> tuple[int, str]:
        async with self._session.get(
            robots_url, headers=self._headers, allow_redirects=True, max_redirects=5, auto_decompress=True
        ) as resp:
            if not 200 <= resp.status < 300:
                return resp.status, ""
            raw = await resp.content.read(ROBOTS_MAX_BYTES)
            return resp.status, raw.decode("utf-8", "replace")

    def _verdict(self, status: int, rules: Protego | None, *, allow_all: bool) -> RobotsVerdict:
        return RobotsVerdict(status, rules, allow_all or rules is None, time.monotonic() + self._ttl)

    def __len__(self) -> int:
        return len(self._cache)


_AGENT_LINE = re.compile(r"(?im)^([ \t]*user-agent[ \t]*:[ \t]*)([^\s#]+)[ \t]+[^\r\n#]*")


def _parse(text: str) -> Protego | None:
    """protego's rules, or None (allow all) for a file it cannot read: an unreadable file has no rules.

    A ``User-agent`` value is cut at its first space first (``User-agent: FOO BAR`` names ``FOO``),
    as Google's reference parser does (``ID_UserAgentValueCaseInsensitive``); protego would
    otherwise match the group against no crawler at all.
    """
    try:
        return Protego.parse(_AGENT_LINE.sub(r"\1\2", text))
    except Exception:  # protego is lenient; anything it still rejects is a file without rules
        return None
