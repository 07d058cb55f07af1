"""Operations ``index.build`` and ``index.search``: the on-disk BM25 index of :mod:`ccrawl.store.textindex`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Annotated, BinaryIO

from ccrawl.ops import Record, operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, Network, ReadPath, Value, WritePath
from ccrawl.ops.context import OpContext

if TYPE_CHECKING:
    from ccrawl.store.textindex import Document

BUILD_COLUMNS = ("dir", "generation", "documents", "skipped", "other_records", "no_text", "seconds", "bytes")
SEARCH_COLUMNS = ("rank", "score", "url", "title", "language", "snippet")

Notice = Callable[[str], None]


#: WARC record types that hold a document (``ccrawl parse`` rows carry the type in ``type``)
DOCUMENT_TYPES = frozenset({"response", "resource", "conversion"})
#: WARC record types that never hold one: counted as ``other_records``, never warned about
OTHER_TYPES = frozenset({"warcinfo", "request", "metadata", "revisit", "continuation"})
WARC_ENDINGS = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wet", ".wet.gz", ".warc.wet.gz")


def document_of(obj: object, where: str, notice: Notice | None) -> Document:
    """A document from one JSON object or row; a record that is no document is marked, a bad one named."""
    from ccrawl.store.textindex import Document, document_from_json, repaired

    wtype = obj.get("type") if isinstance(obj, dict) else None
    if wtype in OTHER_TYPES:
        return Document("", "", skip="other")
    doc = document_from_json(obj)
    if doc is not None:
        doc, fixed = repaired(doc)
        if fixed and notice:
            notice(f"{where}: lone surrogates in {', '.join(fixed)} replaced by U+FFFD; indexed")
        return doc
    if wtype in DOCUMENT_TYPES or (isinstance(obj, dict) and obj.get("error")):
        return Document("", "", skip="no_text")  # a response with no text (not HTML, not parsed with --text)
    if notice:
        notice(f"{where}: no url and text to index; skipped")
    return Document("", "")  # counted as skipped by the build


def jsonl_documents(stream: Iterable[bytes], notice: Notice | None = None, name: str = "input") -> Iterator[Document]:
    """Documents from a JSONL byte stream; a bad line is named through ``notice`` and skipped.

    A ``ccrawl parse`` row of a record that holds no document (request, warcinfo, metadata) is
    counted as ``other_records`` and a response without text as ``no_text``, quietly."""
    from ccrawl.store.textindex import Document

    for n, raw in enumerate(stream, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            if notice:
                notice(f"{name} line {n}: not a JSON object ({exc}); skipped")
            yield Document("", "")
            continue
        yield document_of(obj, f"{name} line {n}", notice)


def parquet_documents(path: str, notice: Notice | None = None) -> Iterator[Document]:
    """Documents from a Parquet file: ``recrawl run`` captures (url, title, text or markdown, language)
    and ``markdown export`` rows (url, markdown, language), read a batch of the needed columns at a time."""
    import pyarrow.parquet as pq

    from ccrawl.errors import InputError, UsageError
    from ccrawl.store.textindex import LANGUAGE_KEYS, TEXT_KEYS, TITLE_KEYS, URL_KEYS, Document

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"--input {path} is not a readable Parquet file: {exc}") from None
    with pf:
        names = pf.schema_arrow.names
        url_col = next((k for k in URL_KEYS if k in names), None)
        text_cols = [k for k in TEXT_KEYS if k in names and k != "body"]  # a capture's body is raw bytes
        if url_col is None or not text_cols:
            raise UsageError(f"--input {path} has no url column and text or markdown column to index; its columns "
                             f"are: {', '.join(names)}")
        title_col = next((k for k in TITLE_KEYS if k in names), None)
        lang_col = next((k for k in LANGUAGE_KEYS if k in names), None)
        wanted = [c for c in dict.fromkeys([url_col, *text_cols, title_col, lang_col]) if c]
        try:
            for batch in pf.iter_batches(columns=wanted, batch_size=512):
                cols = {name: batch.column(name).to_pylist() for name in wanted}
                for i in range(batch.num_rows):
                    url = cols[url_col][i] or ""
                    text = next((cols[c][i] for c in text_cols if cols[c][i]), "")
                    if not text:
                        yield Document("", "", skip="no_text")  # a failed fetch, a fetch-only row
                        continue
                    yield Document(str(url), str(text), str(cols[title_col][i] or "") if title_col else "",
                                   str(cols[lang_col][i] or "") if lang_col else "")
        except OSError as exc:
            raise InputError(f"--input {path} cannot be read: {exc}") from None


def warc_documents(path: str, notice: Notice | None = None) -> Iterator[Document]:
    """Documents from a WARC/WET file: responses' text (as ``ccrawl parse --text``), WET conversions'.

    Request, warcinfo and metadata records are counted as ``other_records`` without a word; a record
    that cannot be read is named through ``notice`` and skipped."""
    from ccrawl.errors import NothingMatched
    from ccrawl.ops.context import OpContext
    from ccrawl.ops.parse import warc_parse

    try:
        for row in warc_parse([path], content="text", skip_bad_records=True, ctx=OpContext.of(notice=notice)):
            yield document_of(row, f"{path}@{row.get('offset')}", notice)
    except NothingMatched:
        return


def _file_kind(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".parquet"):
        return "parquet"
    if lower.endswith(WARC_ENDINGS):
        return "warc"
    if lower.endswith((".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz")):
        return "jsonl"
    return ""


def input_documents(input: str, notice: Notice | None = None) -> Iterator[Document]:
    """Documents from ``--input``: JSONL (``-`` for stdin), Parquet, WARC/WET, or a directory of them."""
    import sys
    from pathlib import Path

    from ccrawl.errors import UsageError

    if input == "-":
        yield from jsonl_documents(sys.stdin.buffer, notice, "stdin")
        return
    path = Path(input)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*") if p.is_file() and _file_kind(p.name)
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise UsageError(f"--input {input} holds no .jsonl, .parquet or WARC files; nothing was written")
    else:
        files = [input]
    for name in files:
        kind = _file_kind(name) or "jsonl"
        if kind == "parquet":
            yield from parquet_documents(name, notice)
        elif kind == "warc":
            yield from warc_documents(name, notice)
        else:
            yield from _jsonl_file(name, notice)


def _jsonl_file(name: str, notice: Notice | None) -> Iterator[Document]:
    import gzip

    from ccrawl.errors import UsageError

    try:
        stream: gzip.GzipFile | BinaryIO = gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"--input {name}: {exc.strerror}") from None
    with stream:
        yield from jsonl_documents(stream, notice, name)


def _live_documents(urls: Iterable[str], workers: int, notice: Notice | None, allow_private_addresses: bool, *,
                    timeout: float, delay: float, resolve: Mapping[str, str] | None) -> Iterator[Document]:
    from ccrawl.ops.content import content_extract
    from ccrawl.store.textindex import Document

    for row in content_extract(urls, concurrency=max(1, workers), timeout=timeout, delay=delay, resolve=resolve,
                               allow_private_addresses=allow_private_addresses):
        if row.get("error"):
            if notice:
                notice(f"{row.get('url')}: {row['error']}; not indexed")
            continue
        yield Document(str(row["url"]), str(row.get("text") or ""), str(row.get("title") or ""),
                       str(row.get("language") or ""))


@operation("index.build", summary="Build the on-disk BM25 index from JSONL, Parquet or WARC documents or live URLs",
           columns=BUILD_COLUMNS, writes=True)
def index_build(
    dir: WritePath[str],
    input: ReadPath[str | None] = None,
    urls: Value[Iterable[str]] = (),
    workers: Limit[int] = 8,
    heap_mb: Limit[int] = 128,
    allow_private_addresses: Network[bool] = False,
    timeout: Limit[float] = 30.0,
    delay: Limit[float] = 1.0,
    resolve: Network[Mapping[str, str] | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Index ``input`` (JSONL, ``-`` for stdin, Parquet, WARC/WET or a directory of them) or the pages at
    ``urls`` (fetched with ``timeout``, ``delay`` and ``resolve``); one summary record. Skipped documents are
    named to the context's notice (none without one)."""
    import os

    from ccrawl.errors import UsageError
    from ccrawl.store.textindex import build

    notice = ctx.notice if ctx is not None else None
    url_list = [u for u in urls if u]
    if input and url_list:
        raise UsageError("give --input or --urls, not both")
    if input:
        if input != "-" and not os.path.exists(input):
            raise UsageError(f"--input {input}: no such file or directory")
        stats = build(dir, input_documents(input, notice), heap_mb=heap_mb)
    elif url_list:
        documents = _live_documents(url_list, workers, notice, allow_private_addresses, timeout=timeout, delay=delay,
                                    resolve=resolve)
        stats = build(dir, documents, heap_mb=heap_mb)
    else:
        raise UsageError("one of --input FILE|- or --urls is required; nothing was written")
    yield stats.record()


@operation("index.search", summary="Search the BM25 index: terms ORed, best score first", columns=SEARCH_COLUMNS)
def index_search(
    query: Value[str],
    dir: ReadPath[str],
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 100,
) -> Iterator[Record]:
    from ccrawl.store.textindex import Searcher

    yield from Searcher.open(dir).search(query, limit)
