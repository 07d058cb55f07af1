"""Listen addresses and running an aiohttp application until Ctrl-C or SIGTERM."""

from __future__ import annotations

import ipaddress
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ccrawl.errors import CcrawlError, UsageError


@dataclass(frozen=True, slots=True)
class Address:
    """Where to listen: ``host`` "" means every interface."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def url(self) -> str:
        host = self.host or "0.0.0.0"
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"


def parse_addr(value: str, flag: str = "--addr") -> Address:
    """``127.0.0.1:8080``, ``[::1]:8080``, ``localhost:9090``, or ``:8080`` (every interface)."""
    text = value.strip()
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        if not sep:
            raise UsageError(f"{flag} {value!r}: write an IPv6 address as [::1]:8080")
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            raise UsageError(f"{flag} {value!r}: give host:port, e.g. 127.0.0.1:8080 or :8080")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"{flag} {value!r}: the port must be a number from 1 to 65535")
    if host and host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise UsageError(f"{flag} {value!r}: {host!r} is not an IP address (or localhost)") from None
    return Address(host, int(port))


def serve_forever(app: Any, addr: Address, *, announce: Callable[[str], None]) -> None:
    """Bind ``addr`` and serve ``app`` until SIGINT/SIGTERM; a busy port is a one-line error."""
    import asyncio

    from aiohttp import web

    async def main() -> None:
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, addr.host or None, addr.port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise CcrawlError(f"cannot listen on {addr.url()}: {exc.strerror or exc}") from None
        announce(f"listening on {addr.url()}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            announce("stopping")
            await runner.cleanup()

    asyncio.run(main())
