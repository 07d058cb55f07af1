"""One document in, one export row out: extraction, fingerprint and language, inline or in a pool.

A :class:`SourceDoc` is what a unit's reader hands over (the payload and the WARC fields the row
keeps); :func:`convert_doc` runs the engine on it and returns a :class:`ConvertedDoc`, whose
:meth:`~ConvertedDoc.row` is one row of the export schema. Both are slotted dataclasses because
they cross a process boundary when ``workers > 1``.

:class:`Converter` is that boundary: with ``workers <= 1`` documents are converted in the calling
process, otherwise in a ``ProcessPoolExecutor`` of ``workers`` processes shared by every shard
in flight, fed batches of :data:`BATCH` documents with a bounded number of batches outstanding,
and answering in input order. A downloaded shard does not go through the batches: the pool's
workers read their own parts of the file (:meth:`Converter.map`, :mod:`.parts`), so only
rows cross the boundary.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

#: Documents per pool task: large enough to amortise the hop, small enough to keep cores busy.
BATCH = 32
#: Documents read ahead before converting them in this process (``workers <= 1``).
INLINE_BATCH = 32


@dataclass(slots=True)
class SourceDoc:
    """One captured document as the reader found it."""

    url: str
    date: str
    record_id: str
    payload: bytes
    content_type: str | None = None


@dataclass(slots=True)
class ConvertedDoc:
    """One document converted: the export row's values, or the error that stopped it."""

    doc_id: str
    url: str
    host: str
    crawl_date: int | None
    warc_record_id: str
    html_length: int
    markdown_length: int = 0
    markdown: str = ""
    language: str = ""
    language_confidence: float = 0.0
    extractor: str = ""
    simhash: int | None = None
    error: str = ""

    def row(self) -> Record:
        """The export row (every column of :data:`ccrawl.markdown.schema.EXPORT_COLUMNS`)."""
        return {
            "doc_id": self.doc_id,
            "url": self.url,
            "host": self.host,
            "crawl_date": self.crawl_date,
            "warc_record_id": self.warc_record_id,
            "html_length": self.html_length,
            "markdown_length": self.markdown_length,
            "markdown": self.markdown,
            "language": self.language,
            "language_confidence": self.language_confidence,
            "extractor": self.extractor,
            "simhash": self.simhash,
        }


def doc_id_of(record_id: str) -> str:
    """The UUID inside ``<urn:uuid:...>`` (the record id itself when it is not one)."""
    value = record_id.strip().strip("<>")
    return value[len("urn:uuid:") :] if value.startswith("urn:uuid:") else value


def epoch_ms(date: str) -> int | None:
    """``WARC-Date`` (ISO 8601, UTC) as milliseconds since the epoch, None when unreadable."""
    if not date:
        return None
    try:
        when = dt.datetime.fromisoformat(date.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def convert_doc(engine: str, doc: SourceDoc) -> ConvertedDoc:
    """Run ``engine`` on ``doc``; an exception inside the engine becomes ``error``, never a raise."""
    from ccrawl.extract.engines import get_extractor
    from ccrawl.extract.model import NO_LINKS_BUDGET

    out = ConvertedDoc(
        doc_id=doc_id_of(doc.record_id), url=doc.url, host=host_of(doc.url), crawl_date=epoch_ms(doc.date),
        warc_record_id=doc.record_id, html_length=len(doc.payload),
    )
    try:
        result = get_extractor(engine).extract(doc.payload, doc.url, content_type=doc.content_type,
                                               budget=NO_LINKS_BUDGET)  # the export stores no links
    except Exception as exc:  # a pathological page must not take the shard down with it
        out.error = f"{type(exc).__name__}: {exc}"
        return out
    md = result.markdown
    out.markdown = md
    # An ASCII string's UTF-8 length is its length (``isascii`` is O(1)): no encoded copy needed.
    out.markdown_length = len(md) if md.isascii() else len(md.encode("utf-8", "surrogatepass"))
    out.language, out.language_confidence = result.language, result.language_confidence
    out.extractor = result.extractor
    out.simhash = result.simhash
    return out


def convert_batch(engine: str, docs: list[SourceDoc]) -> list[ConvertedDoc]:
    """:func:`convert_doc` over a batch (the pool's unit of work)."""
    return [convert_doc(engine, d) for d in docs]


class Converter:
    """Converts documents with one engine, in this process or in a shared pool of ``workers``."""

    def __init__(self, engine: str, workers: int = 1) -> None:
        from ccrawl.extract.engines import get_extractor

        self.engine = engine
        self.label = get_extractor(engine).label
        self.workers = max(1, int(workers))
        self._pool: ProcessPoolExecutor | None = None
        if self.workers > 1:
            import multiprocessing
            import os
            from concurrent.futures import ProcessPoolExecutor

            from ccrawl.scale.lifeline import exit_with

            # forkserver: the exporting process runs threads (one per shard in flight), and
            # forking a threaded process can copy a held lock into the child.
            ctx = multiprocessing.get_context("forkserver")
            # A worker ends when this process does, even by SIGKILL (else it waits on the pool forever).
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=exit_with,
                                             initargs=(os.getpid(),))

    def convert(self, docs: Iterable[SourceDoc]) -> Iterator[ConvertedDoc]:
        """Every document converted, in input order."""
        if self._pool is None:
            # Read a batch, then convert it: interleaving one record's read with one page's extraction
            # costs more CPU than batches of either (caches and allocator warm for one kind of work;
            # bench/README.md, "markdown export overhead"). The batch is the pool's, so memory is as bounded.
            it = iter(docs)
            while True:
                ahead: list[SourceDoc] = []
                failed: BaseException | None = None
                try:
                    ahead.extend(islice(it, INLINE_BATCH))
                except Exception as exc:  # a bad record: the documents read before it are converted first
                    failed = exc
                for doc in ahead:
                    yield convert_doc(self.engine, doc)
                if failed is not None:
                    raise failed
                if len(ahead) < INLINE_BATCH:
                    return
        pending: deque[Future[list[ConvertedDoc]]] = deque()
        batch: list[SourceDoc] = []
        limit = 2 * self.workers
        for doc in docs:
            batch.append(doc)
            if len(batch) >= BATCH:
                pending.append(self._pool.submit(convert_batch, self.engine, batch))
                batch = []
                while len(pending) >= limit:
                    yield from pending.popleft().result()
        if batch:
            pending.append(self._pool.submit(convert_batch, self.engine, batch))
        while pending:
            yield from pending.popleft().result()

    def map(self, func: Callable[[T], R], items: list[T]) -> list[R]:
        """``func`` over ``items``, each on a worker of the pool (in this process without one), in order.

        :func:`ccrawl.markdown.parts.convert_part` runs this way: workers read their own parts of a file.
        """
        if self._pool is None:
            return [func(item) for item in items]
        futures = [self._pool.submit(func, item) for item in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Converter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
