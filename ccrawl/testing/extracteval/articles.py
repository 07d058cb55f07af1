"""The second quality corpus: news articles with their expected text, fetched, paired and token-scored.

The html-eval corpus (``evaluate``) labels pages with snippets. This one is sourced differently:
the test data that newspaper4k (MIT) ships in its sdist, ``tests/data/html/<stem>.html`` with the
article text its maintainers expect in ``tests/data/txt/<stem>.txt``. It is never vendored:
``fetch`` downloads the pinned sdist from PyPI by exact version and sha256 into a cache
(``~/.cache/ccrawl/corpus2``, or ``$CCRAWL_CORPUS2_DIR``) and unpacks only the pages, their
texts, their metadata and the licence.

Pairing rules (``load_articles``): a page is scored when ``html/<stem>.html`` and
``txt/<stem>.txt`` both exist; html without a text (front pages, meta refreshes, an RSS page)
and texts without html (``cnn_summary`` is a summary, three languages have no page) are left
out. The URL given to the extractor is ``metadata/<stem>.json``'s ``canonical_link`` when it
is an http(s) URL, else ``https://example.invalid/<stem>``.

Scoring is a bag-of-tokens F1, since the labels are whole texts rather than snippets
(precision needs to know what should *not* be there, and a whole text says it: anything not
in it). Tokens are runs of word characters, lower-cased; in scripts written without spaces
(CJK, kana, Thai, Lao, Burmese, Khmer) every character is a token, so those pages are
not scored as one giant word. Per corpus, counts are summed over pages (micro-average):

* precision = |extracted ∩ expected| / |extracted|   (multiset intersection)
* recall    = |extracted ∩ expected| / |expected|
* F1        = 2 * precision * recall / (precision + recall)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Source:
    """One pinned sdist that holds labelled pages."""

    name: str
    version: str
    url: str
    sha256: str
    licence: str
    data: str  # folder inside the sdist holding html/, txt/, metadata/

    @property
    def folder(self) -> str:
        """The name of its unpacked folder in the cache."""
        return f"{self.name}-{self.version}"


SOURCES = (
    Source(
        "newspaper4k",
        "0.9.6",
        "https://files.pythonhosted.org/packages/b6/20/733d9dd3adfb6295454e6ba81f6407d96bf66bfda36c75c99b1f99accbf0/"
        "newspaper4k-0.9.6.tar.gz",
        "a3f2f0e017dddb6f1019ee77aaa8980e13e6ecea0b949abc7167aae4770d2d0e",
        "MIT",
        "tests/data",
    ),
)


def cache_dir() -> Path:
    """Where the corpus lives: ``$CCRAWL_CORPUS2_DIR`` or ``~/.cache/ccrawl/corpus2``."""
    env = os.environ.get("CCRAWL_CORPUS2_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ccrawl" / "corpus2"


class CorpusUnavailable(RuntimeError):
    """The corpus is not in the cache and could not be fetched (or its sdist's sha256 differs)."""


def _wanted(member: str, source: Source) -> str | None:
    """The path under the unpacked folder for a member we keep, else None."""
    top, _, rest = member.partition("/")
    if top != source.folder:
        return None
    if rest in ("LICENSE", "LICENSE.txt", "PKG-INFO"):
        return rest
    prefix = source.data + "/"
    if rest.startswith(prefix):
        sub = rest[len(prefix) :]
        kind, _, name = sub.partition("/")
        if kind in ("html", "txt", "metadata") and name and "/" not in name:
            return sub
    return None


def fetch(root: Path | None = None, *, timeout: float = 120.0) -> Path:
    """Download, verify and unpack every source into ``root`` (default ``cache_dir()``); idempotent.

    A folder already unpacked (marked by ``.complete`` holding the sha256) is reused without any
    network. Raises CorpusUnavailable when a download fails or its sha256 is not the pinned one.
    """
    root = root or cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    for source in SOURCES:
        done = root / source.folder / ".complete"
        if done.is_file() and done.read_text().strip() == source.sha256:
            continue
        try:
            with urllib.request.urlopen(source.url, timeout=timeout) as resp:
                blob = resp.read()
        except OSError as exc:
            raise CorpusUnavailable(f"cannot download {source.url}: {exc}") from exc
        digest = hashlib.sha256(blob).hexdigest()
        if digest != source.sha256:
            raise CorpusUnavailable(f"{source.url} has sha256 {digest}, pinned {source.sha256}: refusing it")
        dest = root / source.folder
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            for member in tar.getmembers():
                rel = _wanted(member.name, source)
                if rel is None or not member.isfile():
                    continue
                extracted = tar.extractfile(member)
                if extracted is None:
                    continue
                out = dest / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(extracted.read())
        done.write_text(source.sha256 + "\n")
    return root


@dataclass(frozen=True, slots=True)
class Article:
    """One labelled page: where it came from, its URL, its HTML file and its expected text."""

    source: str
    stem: str
    url: str
    html: Path
    expected: str


def _url(meta: Path, stem: str) -> str:
    if meta.is_file():
        link = json.loads(meta.read_text(encoding="utf-8")).get("canonical_link")
        if isinstance(link, str) and link.startswith(("http://", "https://")):
            return link
    return f"https://example.invalid/{stem}"


def load_articles(root: Path | None = None) -> list[Article]:
    """The paired pages of every fetched source, sorted by source and stem (see the module doc)."""
    root = root or cache_dir()
    out: list[Article] = []
    for source in SOURCES:
        base = root / source.folder
        if not (base / ".complete").is_file():
            raise CorpusUnavailable(f"{base} is not fetched: run python scripts/fetch_corpus2.py")
        for html in sorted((base / "html").glob("*.html")):
            txt = base / "txt" / f"{html.stem}.txt"
            if not txt.is_file():
                continue
            expected = txt.read_text(encoding="utf-8")
            url = _url(base / "metadata" / f"{html.stem}.json", html.stem)
            out.append(Article(source.folder, html.stem, url, html, expected))
    return out


def corpus_digest(articles: list[Article]) -> str:
    """sha256 over every pair's name, HTML bytes and expected text: what the floors were pinned on."""
    h = hashlib.sha256()
    for a in articles:
        for part in (f"{a.source}/{a.stem}".encode(), a.html.read_bytes(), a.expected.encode()):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


# Scripts written without spaces between words: one token per character.
_UNSPACED = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_UNSPACED}]|[^\W{_UNSPACED}]+")


def tokens(text: str) -> Counter[str]:
    """The multiset of lower-cased tokens of ``text`` (see the module doc)."""
    return Counter(_TOKEN.findall(text.lower()))


@dataclass(slots=True)
class TokenScore:
    """Token counts over some pages and the figures derived from them."""

    common: int = 0
    extracted: int = 0
    expected: int = 0
    pages: int = 0

    def add(self, other: TokenScore) -> None:
        """Accumulate another page's counts."""
        self.common += other.common
        self.extracted += other.extracted
        self.expected += other.expected
        self.pages += other.pages

    @property
    def precision(self) -> float:
        """Share of extracted tokens that are in the expected text."""
        return self.common / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        """Share of expected tokens that were extracted."""
        return self.common / self.expected if self.expected else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Counts and rounded figures, for JSON."""
        return {
            "pages": self.pages,
            "common": self.common,
            "extracted": self.extracted,
            "expected": self.expected,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


def score_text(text: str, expected: str) -> TokenScore:
    """Score one page's extracted text against its expected text."""
    got, want = tokens(text), tokens(expected)
    return TokenScore(sum((got & want).values()), sum(got.values()), sum(want.values()), 1)
