"""The synthetic web's DNS server: A records for ``.test`` names, NXDOMAIN for the rest, optionally slow."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

try:
    from dnslib import QTYPE, RCODE, RR, A, DNSError, DNSRecord
except ImportError as exc:  # the stand-ins are an extra: say which
    raise ImportError("the synthetic web needs dnslib: pip install 'ccrawl[testing]'") from exc

from ccrawl.testing.synthweb.pages import DOMAIN

if TYPE_CHECKING:
    from ccrawl.testing.synthweb.app import SynthWeb


class DnsServer(asyncio.DatagramProtocol):
    """A loopback DNS server: A records for ``.test`` names, NXDOMAIN for the rest."""

    def __init__(self, web_: SynthWeb) -> None:
        self.web = web_
        self.transport: asyncio.DatagramTransport | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's UDP transport does not subclass asyncio.DatagramTransport, so no isinstance here.
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        task = asyncio.ensure_future(self._answer(data, addr))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        stats = self.web.stats
        stats.dns_queries += 1
        stats.dns_in_flight += 1
        stats.dns_peak_in_flight = max(stats.dns_peak_in_flight, stats.dns_in_flight)
        try:
            if self.web.dns_delay:
                await asyncio.sleep(self.web.dns_delay)
            try:
                query = DNSRecord.parse(data)
            except DNSError:
                return  # not a DNS query: a real server drops it too
            reply = query.reply()
            name = str(query.q.qname).rstrip(".").lower()
            if not name.endswith(f".{DOMAIN}"):
                reply.header.rcode = RCODE.NXDOMAIN
            elif query.q.qtype == QTYPE.A:
                reply.add_answer(RR(query.q.qname, QTYPE.A, rdata=A(self.web.bind), ttl=300))
            if self.transport is not None and not self.transport.is_closing():
                self.transport.sendto(reply.pack(), addr)
        finally:
            stats.dns_in_flight -= 1
