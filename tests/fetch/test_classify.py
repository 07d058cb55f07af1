"""Error classes come from the exception type; messages that mimic another class change nothing."""

from __future__ import annotations

import socket
import ssl

import aiohttp
import pytest
from aiohttp.client_reqrep import ConnectionKey

from ccrawl.fetch import ERROR_CLASSES, classify
from ccrawl.fetch.classify import (
    CrawlDelayTooLong,
    RedirectLoop,
    RobotsDisallowed,
    RobotsUnreachable,
    TooManyRedirects,
    UnsupportedURL,
    describe,
)

KEY = ConnectionKey("a.test", 443, True, True, None, None, None)


def _connector(os_error: OSError) -> aiohttp.ClientConnectorError:
    return aiohttp.ClientConnectorError(KEY, os_error)


CASES = [
    (aiohttp.ClientConnectorDNSError(KEY, OSError(None, "Domain name not found")), "dns"),
    (socket.gaierror(-2, "Name or service not known"), "dns"),
    (_connector(ConnectionRefusedError(111, "Connect call failed")), "refused"),
    (ConnectionRefusedError(111, "refused"), "refused"),
    (_connector(TimeoutError(110, "timed out")), "timeout"),
    (TimeoutError(), "timeout"),
    (aiohttp.ConnectionTimeoutError("connect"), "timeout"),
    (aiohttp.SocketTimeoutError("read"), "timeout"),
    (aiohttp.ClientConnectorCertificateError(KEY, ssl.SSLCertVerificationError("bad cert")), "tls"),
    (aiohttp.ClientConnectorSSLError(KEY, ssl.SSLError(1, "wrong version number")), "tls"),
    (ssl.SSLError(1, "handshake"), "tls"),
    (RobotsDisallowed("disallowed by robots.txt"), "skip"),
    (CrawlDelayTooLong("Crawl-delay 3600s"), "skip"),
    (RobotsUnreachable("robots.txt: refused", _connector(ConnectionRefusedError(111, "x"))), "refused"),
    (RedirectLoop("loop"), "other"),
    (TooManyRedirects("many"), "other"),
    (UnsupportedURL("ftp"), "other"),
    (aiohttp.ServerDisconnectedError(), "other"),
    (aiohttp.ClientPayloadError("Response payload is not completed"), "other"),
    (ConnectionResetError(104, "Connection reset by peer"), "other"),
    (_connector(ConnectionResetError(104, "reset")), "other"),
]


@pytest.mark.parametrize(("exc", "expected"), CASES, ids=[f"{type(e).__name__}->{c}" for e, c in CASES])
def test_class_is_decided_by_type(exc: BaseException, expected: str) -> None:
    assert classify(exc) == expected
    assert expected in ERROR_CLASSES


def test_a_message_that_names_another_class_does_not_change_the_class() -> None:
    assert classify(aiohttp.ServerDisconnectedError("timeout dns refused tls")) == "other"
    assert classify(RuntimeError("connection refused: timeout while resolving dns")) == "other"


def test_describe_keeps_the_message_and_names_bare_types() -> None:
    assert describe(TimeoutError()) == "TimeoutError"
    assert describe(ValueError("bad")) == "ValueError: bad"
    assert describe(RobotsDisallowed("disallowed by robots.txt")) == "disallowed by robots.txt"
