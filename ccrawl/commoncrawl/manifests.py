"""Path manifests: the ``<kind>.paths.gz`` file Common Crawl publishes per crawl and archive kind."""

from __future__ import annotations

import gzip
import zlib

from ccrawl.errors import CcrawlError, InputError, UsageError
from ccrawl.net.client import CCClient

#: Kind (as ``paths``/``download`` name it) -> manifest file name under ``crawl-data/<crawl>/``.
MANIFESTS = {
    "warc": "warc.paths.gz",
    "wat": "wat.paths.gz",
    "wet": "wet.paths.gz",
    "robotstxt": "robotstxt.paths.gz",
    "non200responses": "non200responses.paths.gz",
    "cc-index": "cc-index.paths.gz",
    "cc-index-table": "cc-index-table.paths.gz",
    "segment": "segment.paths.gz",
}

#: Kinds whose files ``download`` fetches (a segment is a directory, not a file).
DOWNLOAD_KINDS = tuple(k for k in MANIFESTS if k != "segment")

#: Published manifests never change; a month is long enough to survive any mirror hiccup.
MANIFEST_MAX_AGE = 30 * 86400.0


def check_kind(kind: str, *, allowed: tuple[str, ...] = tuple(MANIFESTS)) -> str:
    if kind not in allowed:
        raise UsageError(f"unknown kind {kind!r}; kinds: {', '.join(allowed)}")
    return kind


def manifest_path(crawl: str, kind: str) -> str:
    return f"crawl-data/{crawl}/{MANIFESTS[check_kind(kind)]}"


def parse_manifest(body: bytes, *, name: str = "manifest") -> list[str]:
    """The paths listed in a gzip'd manifest body, one per line, blank lines dropped."""
    try:
        text = gzip.decompress(body).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: not a gzip'd list of paths ({exc})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


async def fetch_paths(cc: CCClient, crawl: str, kind: str) -> list[str]:
    """Every path of ``kind`` in ``crawl``; raises a CcrawlError when the manifest cannot be read."""
    url = cc.data_url(manifest_path(crawl, kind))
    fetched = await cc.get_cached(url, max_age=MANIFEST_MAX_AGE, stale_ok=True, validate=parse_manifest)
    return parse_manifest(fetched.body, name=url)


async def count_paths(cc: CCClient, crawl: str, kind: str) -> int:
    """How many files of ``kind`` the crawl has, or -1 when its manifest cannot be fetched or read."""
    try:
        return len(await fetch_paths(cc, crawl, kind))
    except CcrawlError:
        return -1
