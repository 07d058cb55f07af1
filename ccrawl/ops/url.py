"""URL operations: SURT, canon/1, URL keys, registered domains and shards, one record per input URL.

Every operation takes ``urls`` (any iterable of strings) and yields one record per URL, in order.
A URL that cannot be handled yields ``{"url": ..., "error": "..."}`` instead of stopping the stream;
front ends print those on stderr and carry on. ``url.shard`` is the exception by definition: input
with no host belongs to shard 0 (the fleet rule), so it never yields an error record.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated, Any

from ccrawl.errors import CcrawlError, UsageError
from ccrawl.ops import batch_operation, operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, ReadPath, Value
from ccrawl.ops.context import after_stream

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.url.batchio import BatchReport

Record = dict[str, Any]


def _error(url: str, exc: CcrawlError) -> Record:
    return {"url": url, "error": str(exc)}


@operation("url.surt", summary="SURT form of each URL (Common Crawl's url_surtkey)", columns=("url", "surt"))
def url_surt(urls: Value[Iterable[str]]) -> Iterator[Record]:
    from ccrawl.url.surt import surt

    for url in urls:
        try:
            yield {"url": url, "surt": surt(url)}
        except CcrawlError as exc:
            yield _error(url, exc)


@operation("url.canon", summary="Canonical form of each URL under canon/1", columns=("url", "canonical"))
def url_canon(urls: Value[Iterable[str]]) -> Iterator[Record]:
    from ccrawl.url.canon import canonicalize

    for url in urls:
        try:
            yield {"url": url, "canonical": canonicalize(url)}
        except CcrawlError as exc:
            yield _error(url, exc)


@operation(
    "url.key",
    summary="URL key of each URL: first 10 bytes of blake3 of its canon/1 form, hex",
    columns=("url", "url_key", "canonical"),
)
def url_key(urls: Value[Iterable[str]]) -> Iterator[Record]:
    from ccrawl.url.canon import canonicalize
    from ccrawl.url.canon import url_key as key_of

    for url in urls:
        try:
            canonical = canonicalize(url)
        except CcrawlError as exc:
            yield _error(url, exc)
            continue
        yield {"url": url, "url_key": key_of(canonical), "canonical": canonical}


@operation(
    "url.domain",
    summary="Host, registered domain (public suffix list) and shard key of each URL",
    columns=("url", "host", "registered_domain", "shard_key"),
)
def url_domain(urls: Value[Iterable[str]], include_private: Value[bool] = True) -> Iterator[Record]:
    """``registered_domain`` is None (not an error) for an IP address or a host that is a suffix."""
    from ccrawl.url.domain import host_of, registered_domain, shard_key

    for url in urls:
        host = host_of(url)
        if host is None:
            yield {"url": url, "error": "no host: give a URL such as https://example.com/ or a host name"}
            continue
        yield {
            "url": url,
            "host": host,
            "registered_domain": registered_domain(url, include_private),
            "shard_key": shard_key(url),
        }


@operation(
    "url.shard",
    summary="Which of `shards` machines owns each URL (FNV-1a 64 of the registered domain, mod shards)",
    columns=("url", "shard", "shard_key"),
)
def url_shard(
    urls: Value[Iterable[str]],
    shards: Annotated[int, Cap.VALUE, Bounds(1, 10**6)],
    shard: Annotated[int | None, Cap.VALUE, Bounds(0, 10**6 - 1)] = None,
) -> Iterator[Record]:
    """Every URL with its shard; with ``shard`` given, only the URLs that shard owns."""
    _check_shard(shards, shard)
    return _shards(urls, shards, shard)


def _check_shard(shards: int, shard: int | None) -> None:
    """``url shard``'s two numbers, checked the same way for arguments and for ``--from`` (``url.batch``)."""
    if shards < 1:
        raise UsageError(f"--shards must be at least 1, not {shards}")
    if shard is not None and not 0 <= shard < shards:
        raise UsageError(f"--shard {shard} is outside 0..{shards - 1} for --shards {shards}")


def _shards(urls: Iterable[str], shards: int, only: int | None) -> Iterator[Record]:
    from ccrawl.url.domain import fnv1a64, shard_key

    for url in urls:
        key = shard_key(url)
        number = fnv1a64(key.encode("utf-8")) % shards if key else 0
        if only is None or number == only:
            yield {"url": url, "shard": number, "shard_key": key}


@batch_operation("url.batch", summary="A URL command (surt, canon, key, domain, shard) over every row of a file: "
                 "the input rows with the new columns and an error column, in input order")
def url_batch(
    command: Value[str],
    source: ReadPath[str],
    column: Value[str] = "url",
    skip_bad: Value[bool] = False,
    workers: Limit[int] = 0,
    shards: Annotated[int | None, Cap.VALUE, Bounds(1, 10**6)] = None,
    shard: Annotated[int | None, Cap.VALUE, Bounds(0, 10**6 - 1)] = None,
    report: Injected[BatchReport | None] = None,
) -> Iterator[pa.RecordBatch]:
    """``url <command> --from FILE``: text lines (``.gz``/``.zst`` too, ``-`` for stdin) or Parquet (``column``),
    through the compiled batch kernels, ``workers`` at a time (0: one per core). ``shards`` (required) and
    ``shard`` (keep only its rows) go with ``shard``. ``report`` counts the rows as they go; without one, an
    input that breaks part-way raises once the rows before the break are out."""
    from ccrawl.url.batchio import BatchParams, BatchReport, iter_results

    params = BatchParams()
    if command == "shard":
        if shards is None:
            raise UsageError("url shard: give the number of shards")
        _check_shard(shards, shard)
        params["shards"] = shards
        if shard is not None:
            params["only"] = shard
    elif shards is not None or shard is not None:
        raise UsageError(f"url {command}: shards and shard go with url shard")
    tally = report if report is not None else BatchReport()
    yield from iter_results(command, source, tally, column=column, params=params, skip_bad=skip_bad, workers=workers)
    if report is None and tally.broken is not None:
        raise after_stream(tally.broken)
