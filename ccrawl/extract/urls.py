"""Resolve the hrefs of one page against its base URL, cheaply for the common cases."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

_SKIP_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "about:", "#")
# A relative path urljoin would only append to the base's directory: no scheme (":"), no dot
# segments, no empty segments, no ";" params, no control characters, no empty query or fragment
# (urljoin drops a bare "?" or "#"). Anything else goes to urljoin.
_PLAIN_RELATIVE = re.compile(r"[^\x00-\x20./?#;:][^\x00-\x1f;:]*")


class Resolver:
    """Makes hrefs absolute against ``base`` (the page URL or its ``<base href>``).

    Absolute ``http(s)`` hrefs and root-relative paths skip :func:`urljoin`, which is the
    slow part on link-heavy pages; everything else goes through it.
    """

    __slots__ = ("base", "cache", "directory", "origin", "scheme")

    def __init__(self, base: str) -> None:
        self.base = base
        try:
            parts = urlsplit(base)
        except ValueError:
            parts = urlsplit("")
        self.scheme = parts.scheme
        self.origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
        # The base's directory, which a plain relative path is appended to (urljoin's result for
        # it); "" where urljoin would do more (a base path with dot or empty segments).
        path = parts.path or "/"
        plain_base = parts.scheme in ("http", "https") and "//" not in path and "/." not in path
        self.directory = self.origin + path[: path.rfind("/") + 1] if self.origin and plain_base else ""
        #: href -> resolved URL for this page. Public so a compiled caller (the native render
        #: walk) can look a repeated href up without a method call; only ``resolve`` writes it.
        self.cache: dict[str, str] = {}

    def resolve(self, href: str) -> str:
        """The absolute URL, ``""`` for non-navigational hrefs (javascript:, mailto:, #...)."""
        # Each href is resolved twice (outlinks and the Markdown link); pages repeat hrefs too.
        url = self.cache.get(href)
        if url is None:
            url = self.cache[href] = self._resolve(href.strip())
        return url

    def _resolve(self, href: str) -> str:
        if not href or href.lower().startswith(_SKIP_SCHEMES):
            return ""
        if href.startswith(("http://", "https://")):
            return href
        if href.startswith("//"):
            return f"{self.scheme or 'https'}:{href}"
        if href.startswith("/") and self.origin:
            return self.origin + href
        if not self.base:
            return href
        if (
            self.directory
            and _PLAIN_RELATIVE.fullmatch(href) is not None
            and "//" not in href
            and "/." not in href
            and "?#" not in href
            and href[-1] not in "?#"
        ):
            return self.directory + href  # what urljoin returns here, without its parsing
        try:
            return urljoin(self.base, href)
        except ValueError:
            return ""


def outlinks(hrefs: list[str], resolver: Resolver, limit: int) -> list[str]:
    """Absolute http(s) URLs of ``hrefs``, fragments dropped, deduplicated in page order."""
    seen: dict[str, None] = {}
    for href in hrefs:
        url = resolver.resolve(href)
        if not url.startswith(("http://", "https://")):
            continue
        hash_at = url.find("#")
        if hash_at >= 0:
            url = url[:hash_at]
        if " " in url:
            url = url.replace(" ", "%20")
        if url not in seen:
            seen[url] = None
            if len(seen) >= limit:
                break
    return list(seen)
