"""Settings of one fetch process: timeouts, caps, politeness, robots, DNS and the resolver override.

Every limit the CLI offers is a field here, so a library caller gets the same knobs
(``recrawl run --timeout`` is ``FetchConfig.timeout``, ``--dns-lookups`` is ``dns_lookups``, ...).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ccrawl import __version__
from ccrawl.errors import UsageError

DEFAULT_USER_AGENT = f"ccrawl/{__version__} (recrawler; robots.txt token: ccrawl)"
DEFAULT_ACCEPT_ENCODING = "gzip, deflate, br, zstd"
DEFAULT_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_user_agent(agent: str, name: str = "user_agent") -> None:
    """A User-Agent is one header line: a CR or LF in it would end the header (or split it)."""
    if _CONTROL.search(agent):
        raise UsageError(f"{name} holds a control character (a newline?): {agent!r}; a header value is one line")


def check_resolve(table: Mapping[str, str], name: str = "--resolve") -> None:
    """Every override maps to an IP address (v4 or v6), not a name or a typo."""
    for pattern, ip in table.items():
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise UsageError(f"{name} {pattern}={ip}: {ip!r} is not an IP address (write it as 127.0.0.1 or ::1)") \
                from None


def default_dns_lookups(workers: int) -> int:
    """The seed's rule for ``--dns-lookups``: an eighth of ``--workers``, floored at 16, capped at 128."""
    return max(16, min(128, workers // 8))


@dataclass(slots=True)
class FetchConfig:
    """How one :class:`~ccrawl.fetch.Fetcher` behaves. Times are seconds, sizes bytes."""

    timeout: float = 30.0
    """Budget for one fetch from the first request byte to the last body byte, redirects included.
    Waits for the host clock and robots.txt come before it and are not counted."""
    max_body: int = 10 * 1024 * 1024
    """Bodies are cut here; the row records ``body_truncated`` and the declared length."""
    user_agent: str = DEFAULT_USER_AGENT
    accept_encoding: str = DEFAULT_ACCEPT_ENCODING
    delay: float = 1.0
    """Minimum spacing between two request starts to one host; 0 turns the host clock off."""
    robots: bool = False
    robots_timeout: float = 10.0
    """Budget for one host's robots.txt, retries included."""
    robots_retries: int = 1
    """Extra attempts at robots.txt after a 5xx or network failure, inside ``robots_timeout``."""
    robots_ttl: float = 86400.0
    """How long a fetched robots.txt is trusted (RFC 9309 asks for at most 24 hours)."""
    robots_unreachable_ttl: float = 600.0
    """How long a host whose robots.txt was unreachable (5xx, network) stays disallowed."""
    robots_cache_size: int = 50_000
    max_crawl_delay: float = 60.0
    """A Crawl-delay above this turns the host's URLs into ``skip`` rows rather than stalling the run."""
    dns_lookups: int = 16
    """DNS lookups in flight at once (``default_dns_lookups(workers)`` is the seed's rule)."""
    dns_cache_size: int = 100_000
    dns_ttl: float = 3600.0
    """How long an answer or a failure stays cached."""
    dns_timeout: float = 5.0
    nameservers: tuple[str, ...] = ()
    """DNS servers for the real resolver (``"ip"`` or ``"ip:port"``); empty means the system's."""
    resolve: Mapping[str, str] = field(default_factory=dict)
    """Resolver override, host pattern -> IP: an exact host, ``"*.suffix"`` or ``"*"``. Matched
    names never reach the real resolver (tests and benchmarks point a synthetic web at loopback)."""
    concurrency: int = 256
    """Fetches with a connection in use at once in this process."""
    max_redirects: int = 5
    follow_redirects: bool = True
    """False: a 3xx is the result (its Location for the caller to queue), as a link crawl wants."""
    verify_tls: bool = True
    """Check certificates; off archives what a host serves whatever its certificate."""
    keepalive_timeout: float = 4.0
    """Seconds an idle connection is kept for the next request to its host. Every host keeps its
    own, so at N pages/s about N x this many sockets sit idle: keep it short on a domain recrawl."""
    max_header_size: int = 64 * 1024
    """Longest response header line accepted (aiohttp's default, 8 KiB, rejects real sites)."""
    max_headers: int = 512
    ipv6: bool = False
    """Resolve AAAA too; off by default so every host costs one lookup, not two."""
    allow_private_addresses: bool = False
    """Fetch loopback, private, link-local and unspecified addresses too. Off by default: a page
    must not send the crawler to its own machine or network (:mod:`ccrawl.fetch.addresses`).
    Names pinned by ``resolve`` are trusted either way."""

    def validate(self) -> FetchConfig:
        """Raise :class:`UsageError` naming the field when a value cannot work; returns self."""
        checks: list[tuple[bool, str]] = [
            (self.timeout > 0, "timeout must be > 0 seconds"),
            (self.max_body > 0, "max_body must be > 0 bytes"),
            (self.delay >= 0, "delay must be >= 0 seconds (0 turns the host clock off)"),
            (self.robots_timeout > 0, "robots_timeout must be > 0 seconds"),
            (self.robots_retries >= 0, "robots_retries must be >= 0"),
            (self.dns_lookups >= 1, "dns_lookups must be >= 1"),
            (self.dns_cache_size >= 0, "dns_cache_size must be >= 0"),
            (self.concurrency >= 1, "concurrency must be >= 1"),
            (self.max_redirects >= 0, "max_redirects must be >= 0"),
            (self.robots_cache_size >= 1, "robots_cache_size must be >= 1"),
            (self.keepalive_timeout >= 0, "keepalive_timeout must be >= 0"),
            (self.max_header_size >= 1024, "max_header_size must be >= 1024 bytes"),
            (self.max_headers >= 1, "max_headers must be >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise UsageError(f"fetch config: {message}")
        check_user_agent(self.user_agent, "fetch config: user_agent")
        check_resolve(self.resolve, "fetch config: resolve")
        return self


def parse_resolve(entries: Iterable[str], name: str = "--resolve") -> dict[str, str]:
    """``["*.test=127.0.0.1", "a.example=10.0.0.1"]`` as a resolver override table."""
    table: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, str):
            raise UsageError(f"{name} {entry!r}: each entry is a string PATTERN=IP, e.g. '*.test=127.0.0.1'")
        pattern, sep, ip = entry.partition("=")
        if not sep or not pattern.strip() or not ip.strip():
            example = "--resolve '*.test=127.0.0.1'" if name == "--resolve" else "'*.test=127.0.0.1'"
            raise UsageError(f"{name} {entry!r}: write it as PATTERN=IP, e.g. {example}")
        table[pattern.strip().lower()] = ip.strip()
    check_resolve(table, name)
    return table


def resolve_table(value: Mapping[str, str] | Iterable[str] | str | None, name: str = "resolve") -> dict[str, str]:
    """A resolver override in any of the forms a caller writes: a mapping ``{"*.test": "127.0.0.1"}``, the
    CLI's list ``["*.test=127.0.0.1"]``, or one such string. A malformed entry is a :class:`UsageError`."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        table: dict[str, str] = {}
        for pattern, ip in value.items():
            if not isinstance(pattern, str) or not isinstance(ip, str) or not pattern.strip() or not ip.strip():
                raise UsageError(f"{name} {pattern!r}: {ip!r}: map a host pattern to an IP, "
                                 "e.g. {'*.test': '127.0.0.1'}")
            table[pattern.strip().lower()] = ip.strip()
        check_resolve(table, name)
        return table
    if isinstance(value, str):
        return parse_resolve([value], name)
    if isinstance(value, Iterable):
        return parse_resolve(list(value), name)
    raise UsageError(f"{name} {value!r}: give a dict {{'*.test': '127.0.0.1'}}, a list ['*.test=127.0.0.1'] "
                     "or one 'PATTERN=IP' string")
