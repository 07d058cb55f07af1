"""A full-text BM25 index on disk (tantivy), built incrementally with bounded memory.

The Go original kept its whole inverted index in memory (about 26 KB a document, a ceiling near
600,000 documents per 16 GB). This one is tantivy's segment index: documents are tokenised and
written in segments by a writer whose heap is capped (``heap_mb``), segments are committed every
``commit_every`` documents and merged by tantivy's background threads, so memory stays flat
whatever the corpus size and a search opens only the segments' files (memory-mapped).

Layout of ``--dir`` (a rebuild replaces the whole index atomically)::

    CURRENT          {"format": "ccrawl-index/1", "generation": "gen-000004", "documents": N, ...}
    gen-000004/      tantivy's files for the generation CURRENT names
    .lock            held while a build runs (a second build on the same dir is refused)

A build writes a new generation beside the live one and replaces ``CURRENT`` by rename, so a
search running during a rebuild sees the old index or the new one, never half of either; a
killed build leaves the old index in place. Scoring is tantivy's BM25 (k1 1.2, b 0.75, length
normalised); query terms are ORed: a document holding any term matches, more terms score higher.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccrawl import durable
from ccrawl.errors import Absent, CcrawlError, UsageError
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    import tantivy

FORMAT = "ccrawl-index/1"
SNIPPET_CHARS = 280
#: key names a JSONL document may use for each field (ccrawl parse, hand-written, older ccrawl)
URL_KEYS = ("url", "URL", "target_uri", "warc_target_uri")
TEXT_KEYS = ("text", "Text", "content", "markdown", "body")
TITLE_KEYS = ("title", "Title")
LANGUAGE_KEYS = ("language", "content_language", "ContentLanguage", "lang")


class IndexMissing(Absent):
    """No built index in the directory (build one with ``ccrawl index build``)."""


@dataclass(frozen=True, slots=True)
class Document:
    """One document to index."""

    url: str
    text: str
    title: str = ""
    language: str = ""
    skip: str = ""
    """Why this is not indexed, counted and never warned about: ``other`` (a WARC record that is no
    document: request, warcinfo, metadata, ...) or ``no_text`` (a document with no text: a non-HTML
    response, a failed fetch, a ``--no-extract`` row). Empty for a document to index."""


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What a build wrote."""

    dir: str
    generation: str
    documents: int
    skipped: int
    seconds: float
    bytes: int
    other_records: int = 0
    """WARC records that are not documents (request, warcinfo, metadata, ...): counted, not warned about."""
    no_text: int = 0
    """Documents with no text to index (non-HTML responses, failed fetches, fetch-only rows)."""

    def record(self) -> Record:
        return {"dir": self.dir, "generation": self.generation, "documents": self.documents,
                "skipped": self.skipped, "other_records": self.other_records, "no_text": self.no_text,
                "seconds": round(self.seconds, 3), "bytes": self.bytes}


def _first(obj: Mapping[str, object], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _has_lone_surrogate(value: str) -> bool:
    if value.isascii():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def repaired(doc: Document) -> tuple[Document, list[str]]:
    """``doc`` with lone surrogates (valid JSON, ``"\\ud800"``, but no text tantivy can store) made
    U+FFFD, and the fields that had them."""
    fields = [f for f in ("url", "text", "title", "language") if _has_lone_surrogate(getattr(doc, f))]
    if not fields:
        return doc, []
    fix = {f: getattr(doc, f).encode("utf-16", "surrogatepass").decode("utf-16", "replace") for f in fields}
    return dataclasses.replace(doc, **fix), fields


def document_from_json(obj: object) -> Document | None:
    """A document from one JSONL object under any of the accepted key names; None without url or text."""
    if not isinstance(obj, dict):
        return None
    url, text = _first(obj, URL_KEYS), _first(obj, TEXT_KEYS)
    if not url or not text:
        return None
    return Document(url, text, _first(obj, TITLE_KEYS), _first(obj, LANGUAGE_KEYS))


def _schema() -> tantivy.Schema:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("url", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("title", stored=True)
    builder.add_text_field("text", stored=False, index_option="freq")
    builder.add_text_field("snippet", stored=True, index_option="basic", tokenizer_name="raw")
    builder.add_text_field("language", stored=True, tokenizer_name="raw", index_option="basic")
    return builder.build()


def _analyzer() -> tantivy.TextAnalyzer:
    """The query-side twin of tantivy's ``default`` tokenizer (simple split, drop long, lowercase)."""
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase()).build())


def _current(root: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((root / "CURRENT").read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CcrawlError(f"{root}/CURRENT is unreadable ({exc}); rebuild with `ccrawl index build`") from None
    gen = meta.get("generation") if isinstance(meta, dict) else None
    # CURRENT names a sibling directory and nothing else: never a path that leaves the index dir
    if not isinstance(gen, str) or not gen.startswith("gen-") or "/" in gen or gen in (".", ".."):
        raise CcrawlError(f"{root}/CURRENT names no generation of this index; rebuild with `ccrawl index build`")
    if meta.get("format") != FORMAT:
        raise CcrawlError(f"{root} holds an index of format {meta.get('format')!r}, not {FORMAT}; rebuild it")
    return dict(meta)


def _next_generation(root: Path) -> str:
    numbers = [int(p.name[4:]) for p in root.glob("gen-*") if p.name[4:].isdigit()]
    return f"gen-{max(numbers, default=0) + 1:06d}"


@contextlib.contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CcrawlError(f"another `ccrawl index build` is writing {root}; wait for it to finish") from None
        yield
    finally:
        os.close(fd)


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(directory: str | os.PathLike[str], documents: Iterable[Document], *, heap_mb: int = 128,
          threads: int = 0, commit_every: int = 200_000) -> BuildStats:
    """Index ``documents`` into a new generation of ``directory`` and make it the live one.

    ``heap_mb`` bounds the writer's memory (tantivy flushes a segment when it is reached);
    ``commit_every`` documents are committed at a time. An empty stream is refused: it would
    replace an index with nothing.
    """
    import tantivy

    if heap_mb < 16:
        raise UsageError("the index writer needs at least 16 MB of heap")
    root = Path(directory)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CcrawlError(f"cannot create the index directory {root}: {exc.strerror}") from None
    started = time.monotonic()
    with _build_lock(root):
        gen = _next_generation(root)
        gen_dir = root / gen
        gen_dir.mkdir()
        writer: tantivy.IndexWriter | None = None
        try:
            index = tantivy.Index(_schema(), path=str(gen_dir), reuse=False)
            writer = index.writer(heap_mb * 1_000_000, threads)
            count = skipped = other = no_text = 0
            for doc in documents:
                if doc.skip == "other":
                    other += 1
                    continue
                if doc.skip == "no_text":
                    no_text += 1
                    continue
                if not doc.url or not doc.text:
                    skipped += 1
                    continue
                doc, _ = repaired(doc)
                writer.add_document(tantivy.Document(
                    url=doc.url, title=doc.title, text=doc.text, snippet=_snippet(doc.text),
                    language=doc.language))
                count += 1
                if count % commit_every == 0:
                    writer.commit()
            if count == 0:
                why = (f" ({no_text} documents had no text: for a WARC, `ccrawl parse` needs --text; a recrawl "
                       "needs its extraction, not --no-extract)" if no_text else "")
                raise NothingToIndex(f"no document with a url and a text to index{why}; nothing was replaced")
            writer.commit()
            writer.wait_merging_threads()
            meta = {"format": FORMAT, "generation": gen, "documents": count,
                    "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "engine": "tantivy"}
            durable.write_bytes(root / "CURRENT", (json.dumps(meta) + "\n").encode("utf-8"), sync=False)
        except BaseException:
            if writer is not None:  # stop tantivy's threads before removing the files they write
                with contextlib.suppress(Exception):
                    writer.rollback()
                with contextlib.suppress(Exception):
                    writer.wait_merging_threads()
                writer = None
            shutil.rmtree(gen_dir, ignore_errors=True)
            raise
        for old in root.glob("gen-*"):
            if old.name != gen and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    return BuildStats(str(root), gen, count, skipped, time.monotonic() - started, _dir_bytes(gen_dir),
                      other_records=other, no_text=no_text)


class NothingToIndex(UsageError):
    """The input held no document to index."""


def _snippet(text: str) -> str:
    text = " ".join(text[: SNIPPET_CHARS * 2].split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


@dataclass(slots=True)
class Searcher:
    """An open index: BM25 search with ORed terms."""

    root: Path
    meta: dict[str, Any]
    index: tantivy.Index
    analyzer: tantivy.TextAnalyzer

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> Searcher:
        import tantivy

        root = Path(directory)
        meta = _current(root)
        if meta is None:
            raise IndexMissing(f"no index in {root}: build one with `ccrawl index build --dir {root} --input FILE`")
        try:
            index = tantivy.Index.open(str(root / meta["generation"]))
        except (OSError, ValueError) as exc:
            raise CcrawlError(f"the index in {root} cannot be opened ({exc}); rebuild it") from None
        return cls(root, meta, index, _analyzer())

    @property
    def documents(self) -> int:
        return int(self.meta.get("documents", 0))

    def terms(self, query: str) -> list[str]:
        """The query's distinct terms, tokenised as the index tokenised its text."""
        seen: dict[str, None] = {}
        for token in self.analyzer.analyze(query):
            seen.setdefault(token, None)
        return list(seen)

    def search(self, query: str, limit: int = 100) -> list[Record]:
        """Documents holding any of the query's terms, best BM25 score first."""
        import tantivy

        if limit <= 0:
            raise UsageError("-n/--limit must be at least 1")
        terms = self.terms(query)
        if not terms:
            return []
        schema = self.index.schema
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, term))
                   for term in terms for field in ("text", "title")]
        searcher = self.index.searcher()
        result = searcher.search(tantivy.Query.boolean_query(clauses), limit)
        rows = []
        for rank, (score, address) in enumerate(result.hits, start=1):
            doc = searcher.doc(address)
            rows.append({"rank": rank, "score": round(float(score), 4), "url": _one(doc, "url"),
                         "title": _one(doc, "title") or None, "language": _one(doc, "language") or None,
                         "snippet": _one(doc, "snippet") or None})
        return rows


def _one(doc: tantivy.Document, field: str) -> str:
    values = doc.get_all(field)
    return str(values[0]) if values else ""
