"""Score extracted text against the html-eval corpus: recall of ``with``, leakage of ``without``, F1.

The corpus (``../shared/corpus/html-eval``: ``evaldata.json`` and ``pages/``) comes from
trafilatura's evaluation. Scoring follows trafilatura's ``comparison.py``: a ``with`` snippet
found in the text is a true positive, missed a false negative; a ``without`` snippet found is a
false positive, absent a true negative. Both sides are whitespace-collapsed before matching
(extractors differ in how they break lines, which is not what the gate measures).

* recall    = tp / (tp + fn)      share of ``with`` snippets kept
* leakage   = fp / (fp + tn)      share of ``without`` snippets let through
* precision = tp / (tp + fp)
* F1        = 2 * precision * recall / (precision + recall)   (the figure trafilatura publishes)

Markdown is scored two ways: as the raw string (its syntax, ``**``, ``[..](url)``, ``\\*``,
counted as characters, so a snippet with a link or a bold word in it is missed), and as the text a
CommonMark parser reads out of it (``markdown_words``, markdown-it-py): what a fair comparison
with the text column is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class EvalPage:
    """One annotated page: its URL, its file, and the snippets."""

    url: str
    file: str
    with_: tuple[str, ...]
    without: tuple[str, ...]


@dataclass(slots=True)
class Score:
    """Counts over some pages and the figures derived from them."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    pages: int = 0

    def add(self, other: Score) -> None:
        """Accumulate another page's counts."""
        self.tp += other.tp
        self.fn += other.fn
        self.fp += other.fp
        self.tn += other.tn
        self.pages += other.pages

    @property
    def recall(self) -> float:
        """Share of ``with`` snippets found."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def leakage(self) -> float:
        """Share of ``without`` snippets found."""
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0

    @property
    def precision(self) -> float:
        """tp / (tp + fp)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Counts and rounded figures, for JSON."""
        return {
            "pages": self.pages,
            "tp": self.tp,
            "fn": self.fn,
            "fp": self.fp,
            "tn": self.tn,
            "recall": round(self.recall, 4),
            "leakage": round(self.leakage, 4),
            "precision": round(self.precision, 4),
            "f1": round(self.f1, 4),
        }


def _norm(text: str) -> str:
    return " ".join(text.split())


def score_page(text: str, page: EvalPage) -> Score:
    """Score one page's extracted text."""
    hay = _norm(text)
    s = Score(pages=1)
    for snippet in page.with_:
        if _norm(snippet) in hay:
            s.tp += 1
        else:
            s.fn += 1
    for snippet in page.without:
        if _norm(snippet) in hay:
            s.fp += 1
        else:
            s.tn += 1
    return s


def markdown_words(markdown: str) -> str:
    """The visible text of ``markdown`` as markdown-it-py (CommonMark + GFM tables, strikethrough) parses it.

    One line per block; inline text, code spans and line breaks as they read, markup, link
    destinations and image alt texts (an attribute, not visible text) left out. Needs
    markdown-it-py (the ``dev`` extra).
    """
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    lines: list[str] = []
    for token in parser.parse(markdown):
        if token.type == "inline":
            parts = []
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    parts.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    parts.append("\n")
            lines.append("".join(parts))
        elif token.type in ("code_block", "fence", "html_block"):
            lines.append(token.content)
    return "\n".join(lines)


def load_pages(corpus: Path) -> list[EvalPage]:
    """The annotated pages of ``corpus`` (the html-eval folder), sorted by URL."""
    data = json.loads((corpus / "evaldata.json").read_text(encoding="utf-8"))
    return [
        EvalPage(url, v["file"], tuple(v.get("with") or ()), tuple(v.get("without") or ()))
        for url, v in sorted(data.items())
    ]


def corpus_digest(corpus: Path) -> str:
    """sha256 of ``evaldata.json``: the annotations the floors were pinned against."""
    return hashlib.sha256((corpus / "evaldata.json").read_bytes()).hexdigest()


def sample(pages: list[EvalPage], every: int) -> list[EvalPage]:
    """Every ``every``-th page in URL order: deterministic, spread across the corpus."""
    return pages[::every] if every > 1 else list(pages)


def score_pages(
    pages: Iterable[EvalPage], corpus: Path, extract_text: Callable[[bytes, str], str]
) -> Iterator[tuple[EvalPage, Score]]:
    """Run ``extract_text(html_bytes, url)`` on each page and score it."""
    for page in pages:
        html = (corpus / "pages" / page.file).read_bytes()
        yield page, score_page(extract_text(html, page.url), page)
