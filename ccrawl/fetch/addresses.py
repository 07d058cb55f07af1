"""Which addresses the fetcher refuses to connect to: loopback, private, link-local, unspecified.

A page on a public host can redirect anywhere, and a public name can resolve anywhere; a crawler
on a cloud machine must not fetch its own metadata service (169.254.169.254), the machine's own
services (127.0.0.1, ::1) or the private network around it because a web page said so. So after
DNS resolution, and for every IP literal (first URL, each redirect hop, robots.txt and its
redirects), an address that is not globally routable is refused before any connection is made.
The row is a ``skip`` whose ``error_detail`` names the address and the reason.

Allowed with ``FetchConfig.allow_private_addresses``: the setting ``allow_private_addresses`` /
``CCRAWL_ALLOW_PRIVATE_ADDRESSES``, or the flag ``--allow-private-addresses`` of every command that
fetches (``crawl fetch``, ``crawl run``, ``content *``, ``index build --urls``, ``recrawl run``). A resolver override
(``FetchConfig.resolve`` / ``--resolve``) is trusted for the names it matches: the user pinned
those addresses on purpose (tests and benchmarks point ``*.test`` at loopback that way); a
redirect from such a name to another name or to an IP literal is checked like any other.
"""

from __future__ import annotations

import ipaddress

from ccrawl.fetch.classify import BlockedAddress

REFUSED = "refused to connect to"
"""How every refusal's message begins (``crawl run`` counts those as ``blocked_address``)."""
HOW_TO_ALLOW = "set allow_private_addresses (CCRAWL_ALLOW_PRIVATE_ADDRESSES=1) or pass --allow-private-addresses"
_DOCS = f"{HOW_TO_ALLOW} to fetch it"


def blocked_reason(ip: str) -> str:
    """Why ``ip`` is refused ('' when it is a public address)."""
    try:
        addr = ipaddress.ip_address(ip.split("%", 1)[0])  # a scoped IPv6 literal (fe80::1%eth0)
    except ValueError:
        return "not an IP address"
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local"
    if addr.is_multicast:
        return "multicast"
    if addr.is_private:
        return "private"
    if addr.is_reserved or not addr.is_global:
        return "not globally routable"
    return ""


def check_address(host: str, ip: str) -> None:
    """Raise :class:`BlockedAddress` when ``host`` (resolved to ``ip``) may not be fetched."""
    reason = blocked_reason(ip)
    if reason:
        shown = ip if host == ip else f"{host} ({ip})"
        raise BlockedAddress(f"{REFUSED} {shown}: a {reason} address; {_DOCS}")


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True
