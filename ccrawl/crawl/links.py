"""Outlinks of a fetched page: the ``<a href>`` targets, resolved against the page or its ``<base>``."""

from __future__ import annotations

from urllib.parse import urljoin

from ccrawl.extract.urls import Resolver, outlinks


def page_links(body: bytes, page_url: str, limit: int = 1000) -> list[str]:
    """Absolute http(s) links of an HTML page, in page order, deduplicated, at most ``limit``."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(body)
    base = page_url
    node = tree.css_first("base[href]")
    if node is not None:
        href = node.attributes.get("href") or ""
        if href:
            base = urljoin(page_url, href)
    hrefs = [n.attributes.get("href") or "" for n in tree.css("a[href], area[href]")]
    return outlinks(hrefs, Resolver(base), limit)


def redirect_target(page_url: str, location: str) -> str:
    """Where a 3xx points, absolute, fragment dropped; '' when it points nowhere crawlable."""
    if not location.strip():
        return ""
    try:
        target = urljoin(page_url, location.strip())
    except ValueError:
        return ""
    target = target.split("#", 1)[0]
    return target if target.startswith(("http://", "https://")) else ""
