"""Markdown against text, links kept and as text: on the html-eval pages and on the second corpus.

    python bench/bench_markdown_links.py [--corpus DIR] [--engine h2m] [--no-corpus2]

For each links mode prints the Markdown's characters and pre-tokens (runs of word characters, or
one punctuation mark: a stand-in for a BPE tokenizer, whose vocabulary cannot be fetched here),
the html-eval gate's F1 scored on the Markdown as a raw string, on the Markdown as a CommonMark
parser reads it (``markdown_words``: syntax, link targets and alt texts out) and on the text,
and the CPU seconds of the extraction. Then the same three F1 on the second corpus (token F1,
``ccrawl.testing.extracteval.articles``), unless it cannot be fetched or ``--no-corpus2``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import get_extractor
from ccrawl.testing.extracteval.articles import CorpusUnavailable, TokenScore, fetch, load_articles, score_text
from ccrawl.testing.extracteval.evaluate import Score, load_pages, markdown_words, score_page

PIECE = re.compile(r"\w+|[^\w\s]")


def _f(s: Score | TokenScore) -> str:
    return f"{s.f1:.4f} (P {s.precision:.4f} R {s.recall:.4f})"


def main() -> int:
    """Run both link modes over the corpus and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("CCRAWL_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--corpus", type=Path, default=default / "html-eval")
    ap.add_argument("--engine", default="h2m")
    ap.add_argument("--no-corpus2", action="store_true", help="html-eval only")
    args = ap.parse_args()
    if not (args.corpus / "evaldata.json").is_file():
        print(f"html-eval corpus not found at {args.corpus}: pass --corpus", file=sys.stderr)
        return 1
    pages = load_pages(args.corpus)
    bodies = [(p, (args.corpus / "pages" / p.file).read_bytes()) for p in pages]
    articles = []
    if not args.no_corpus2:
        try:
            articles = load_articles(fetch())
        except CorpusUnavailable as exc:
            print(f"second corpus skipped: {exc}", file=sys.stderr)
    for links in ("keep", "text"):
        engine = get_extractor(args.engine, links=links)
        text_score, md_score, parsed_score = Score(), Score(), Score()
        chars = pieces = 0
        cpu = 0.0
        for page, body in bodies:
            t0 = time.process_time()
            x = engine.extract(body, page.url)
            cpu += time.process_time() - t0
            text_score.add(score_page(x.text, page))
            md_score.add(score_page(x.markdown, page))
            parsed_score.add(score_page(markdown_words(x.markdown), page))
            chars += len(x.markdown)
            pieces += len(PIECE.findall(x.markdown))
        print(
            f"html-eval {engine.label:18s} markdown chars {chars:>10,} pre-tokens {pieces:>10,}  CPU {cpu:.2f} s\n"
            f"  markdown raw F1 {_f(md_score)}  parsed F1 {_f(parsed_score)}  text F1 {_f(text_score)}"
            f"  gap raw {text_score.f1 - md_score.f1:+.4f} parsed {text_score.f1 - parsed_score.f1:+.4f}"
        )
        if articles:
            t2, m2, p2 = TokenScore(), TokenScore(), TokenScore()
            for a in articles:
                x = engine.extract(a.html.read_bytes(), a.url)
                t2.add(score_text(x.text, a.expected))
                m2.add(score_text(x.markdown, a.expected))
                p2.add(score_text(markdown_words(x.markdown), a.expected))
            print(
                f"corpus2   {engine.label:18s} {t2.pages} pages, token F1: markdown raw {_f(m2)}  parsed {_f(p2)}"
                f"  text {_f(t2)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
