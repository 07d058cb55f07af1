"""Maps a failed fetch's exception to one of six error classes, by type, never by message text.

The message of a network error carries hosts, ports and resolver addresses, so grouping on it
gives one group per URL; the class groups into six. The original message is kept beside it
(``FetchResult.error_detail``). The order of the checks matters: aiohttp's TLS and DNS errors
are subclasses of its connector error, and its timeouts are subclasses of connection errors.
"""

from __future__ import annotations

import asyncio
import socket
import ssl

import aiohttp


class FetchRefusal(Exception):
    """Base of the failures the fetcher decides itself; their message is the whole detail."""


class RobotsDisallowed(FetchRefusal):
    """robots.txt (or its absence through a 5xx / unreachable host) forbids this URL."""


class RobotsUnreachable(FetchRefusal):
    """robots.txt could not be had because the host itself failed (DNS, refused, TLS, timeout).

    The row takes the class of that failure, decided from ``cause``'s type: the page would have
    met the same failure, and "dns" says more about a lapsed domain than "skip" would.
    """

    def __init__(self, message: str, cause: BaseException) -> None:
        super().__init__(message)
        self.cause = cause


class CrawlDelayTooLong(FetchRefusal):
    """The host asks for a Crawl-delay above ``FetchConfig.max_crawl_delay``."""


class RedirectLoop(FetchRefusal):
    """A redirect chain came back to a URL it had already visited."""


class TooManyRedirects(FetchRefusal):
    """A redirect chain was longer than ``FetchConfig.max_redirects``."""


class UnsupportedURL(FetchRefusal):
    """Not an http(s) URL with a host; nothing was sent."""


class BlockedAddress(FetchRefusal):
    """The host is (or resolves to) a loopback, private, link-local or unspecified address
    (:mod:`ccrawl.fetch.addresses`); nothing was sent."""


_TLS_TYPES: tuple[type[BaseException], ...] = (
    aiohttp.ClientConnectorCertificateError,
    aiohttp.ClientConnectorSSLError,
    aiohttp.ClientSSLError,
    ssl.SSLError,
    ssl.CertificateError,
)


def classify(exc: BaseException) -> str:
    """The error class of ``exc``: dns, timeout, refused, tls, skip or other."""
    if isinstance(exc, RobotsDisallowed | CrawlDelayTooLong | BlockedAddress):
        return "skip"
    if isinstance(exc, RobotsUnreachable):
        return classify(exc.cause)
    if isinstance(exc, aiohttp.ClientConnectorDNSError | socket.gaierror):
        return "dns"
    if isinstance(exc, _TLS_TYPES):
        return "tls"
    # ServerTimeoutError, ConnectionTimeoutError and SocketTimeoutError all derive from it.
    if isinstance(exc, asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = exc.os_error
        if isinstance(os_error, ConnectionRefusedError):
            return "refused"
        if isinstance(os_error, TimeoutError):
            return "timeout"
        if isinstance(os_error, ssl.SSLError):
            return "tls"
        return "other"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    return "other"


def describe(exc: BaseException) -> str:
    """The original message, prefixed with the type name when it would otherwise be empty."""
    text = str(exc).strip()
    if isinstance(exc, FetchRefusal):
        return text
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
