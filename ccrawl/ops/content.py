"""Content operations: live-fetch URLs with the crawler's client and report text, outlinks, quality, language.

Every operation takes ``urls`` (any iterable of strings, read lazily) and the fetch limits as
keywords, fetches ``concurrency`` URLs at a time and yields records in input order. Loopback,
private and link-local addresses are refused unless ``allow_private_addresses`` (server
configuration, like ``resolve``: ``serve`` never takes it from a client). A URL that
cannot be used (fetch failure, HTTP 4xx/5xx, not HTML, corrupt content coding) yields
``{"url": ..., "error": "..."}`` and the stream carries on; front ends print those on stderr.
See ``docs/content.md`` for the fields and the quality signals.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Limit, Network, Value

if TYPE_CHECKING:
    from ccrawl.content.live import LivePage

Record = dict[str, Any]

#: Characters of the identifier's input shown as ``sample`` by ``content.lang``.
SAMPLE_SHOWN = 200

EXTRACT_COLUMNS = ("url", "title", "description", "canonical", "language", "word_count", "text")
OUTLINK_COLUMNS = ("source", "url", "host")
QUALITY_COLUMNS = (
    "url", "word_count", "title_length", "main_content", "spam_score", "parked", "text_ratio",
    "link_density", "hidden_share", "external_links", "spam_cues", "parked_cues", "description", "canonical",
)  # fmt: skip
LANG_COLUMNS = ("url", "language", "confidence", "cc_language", "chars", "sample")


def _pages(
    urls: Iterable[str],
    extractor: str,
    concurrency: int,
    timeout: float,
    max_body: int,
    delay: float,
    user_agent: str,
    resolve: Mapping[str, str] | None,
    verify_tls: bool,
    allow_private_addresses: bool,
) -> Iterator[LivePage]:
    from ccrawl.content.live import fetch_pages, live_config

    config = live_config(
        timeout=timeout,
        max_body=max_body,
        delay=delay,
        user_agent=user_agent,
        resolve=resolve,
        verify_tls=verify_tls,
        concurrency=concurrency,
        allow_private_addresses=allow_private_addresses,
    )
    return fetch_pages(urls, config=config, extractor=extractor, concurrency=concurrency)


def _error(page: LivePage) -> Record:
    return {"url": page.url, "error": page.error}


@operation(
    "content.extract",
    summary="Live-fetch URLs: clean text, title, description, canonical, language, word count",
    columns=EXTRACT_COLUMNS,
)
def content_extract(
    urls: Value[Iterable[str]],
    extractor: Value[str] = "h2m",
    concurrency: Limit[int] = 8,
    timeout: Limit[float] = 30.0,
    max_body: Limit[int] = 10 * 1024 * 1024,
    delay: Limit[float] = 1.0,
    user_agent: Network[str] = "",
    resolve: Network[Mapping[str, str] | None] = None,
    verify_tls: Network[bool] = True,
    allow_private_addresses: Network[bool] = False,
) -> Iterator[Record]:
    for page in _pages(urls, extractor, concurrency, timeout, max_body, delay, user_agent, resolve, verify_tls,
                       allow_private_addresses):
        ex = page.extraction
        if ex is None:
            yield _error(page)
            continue
        yield {
            "url": page.url,
            "title": ex.title,
            "description": ex.description,
            "canonical": ex.canonical,
            "language": ex.language,
            "word_count": ex.word_count,
            "text": ex.text,
        }


@operation(
    "content.outlinks", summary="Live-fetch URLs: outbound links as (source, url, host) rows", columns=OUTLINK_COLUMNS
)
def content_outlinks(
    urls: Value[Iterable[str]],
    extractor: Value[str] = "h2m",
    concurrency: Limit[int] = 8,
    timeout: Limit[float] = 30.0,
    max_body: Limit[int] = 10 * 1024 * 1024,
    delay: Limit[float] = 1.0,
    user_agent: Network[str] = "",
    resolve: Network[Mapping[str, str] | None] = None,
    verify_tls: Network[bool] = True,
    allow_private_addresses: Network[bool] = False,
) -> Iterator[Record]:
    from urllib.parse import urlsplit

    for page in _pages(urls, extractor, concurrency, timeout, max_body, delay, user_agent, resolve, verify_tls,
                       allow_private_addresses):
        ex = page.extraction
        if ex is None:
            yield _error(page)
            continue
        for link in ex.outlinks:
            try:
                host = (urlsplit(link).hostname or "").lower()
            except ValueError:
                host = ""
            yield {"source": page.url, "url": link, "host": host}


@operation(
    "content.quality",
    summary="Live-fetch URLs: quality signals (words, title, main content, spam, parked)",
    columns=QUALITY_COLUMNS,
)
def content_quality(
    urls: Value[Iterable[str]],
    extractor: Value[str] = "h2m",
    concurrency: Limit[int] = 8,
    timeout: Limit[float] = 30.0,
    max_body: Limit[int] = 10 * 1024 * 1024,
    delay: Limit[float] = 1.0,
    user_agent: Network[str] = "",
    resolve: Network[Mapping[str, str] | None] = None,
    verify_tls: Network[bool] = True,
    allow_private_addresses: Network[bool] = False,
) -> Iterator[Record]:
    from ccrawl.content.signals import quality_signals

    for page in _pages(urls, extractor, concurrency, timeout, max_body, delay, user_agent, resolve, verify_tls,
                       allow_private_addresses):
        if page.extraction is None:
            yield _error(page)
            continue
        signals = quality_signals(page.html, page.extraction, page.final_url)
        yield {"url": page.url, **signals.as_record()}


def lang_record(url: str, text: str, language: str, confidence: float, declared: str) -> Record:
    """The ``content.lang`` row: what the identifier answered, what the page declares, what it read."""
    from ccrawl.extract.lang import SAMPLE_CHARS

    seen = " ".join(text[:SAMPLE_CHARS].split())
    sample = seen if len(seen) <= SAMPLE_SHOWN else seen[:SAMPLE_SHOWN].rstrip() + " ..."
    return {
        "url": url,
        "language": language,
        "confidence": confidence,
        "cc_language": declared,
        "chars": len(text),
        "sample": sample,
    }


@operation(
    "content.lang",
    summary="Live-fetch URLs: detected language, confidence, declared language, sample",
    columns=LANG_COLUMNS,
)
def content_lang(
    urls: Value[Iterable[str]],
    extractor: Value[str] = "h2m",
    concurrency: Limit[int] = 8,
    timeout: Limit[float] = 30.0,
    max_body: Limit[int] = 10 * 1024 * 1024,
    delay: Limit[float] = 1.0,
    user_agent: Network[str] = "",
    resolve: Network[Mapping[str, str] | None] = None,
    verify_tls: Network[bool] = True,
    allow_private_addresses: Network[bool] = False,
) -> Iterator[Record]:
    for page in _pages(urls, extractor, concurrency, timeout, max_body, delay, user_agent, resolve, verify_tls,
                       allow_private_addresses):
        ex = page.extraction
        if ex is None:
            yield _error(page)
            continue
        yield lang_record(page.url, ex.text, ex.language, ex.language_confidence, ex.declared_language)
