"""Markdown against text, word by word: what the Markdown string has that the text has not, by kind (issue 40).

    python bench/bench_markdown_precision.py                 # html-eval, corpus2 (and the public corpora), both modes
    python bench/bench_markdown_precision.py --worst 10 --json out.json

h2m renders both columns from the same blocks, so any word the Markdown string has beyond the
text is markup that spells words; ``ccrawl.testing.extracteval.mdclasses.extra_tokens`` names each one's
kind (link destinations, image alt and source, list numbers, code fence info, escapes, words
split by inline markup, and ``selection``, which should be zero). The public corpora
(``ccrawl.testing.extracteval.corpora``) that are fetched (``scripts/fetch_corpora.py``) are
measured too, each skipped with its reason when absent; the held-out one never is. Tokens are the second corpus's
(``articles.tokens``: lower-cased ``\\w`` runs, one per character in unspaced scripts).

For each corpus and link mode (``keep``: ``h2m+links``, and ``text``, the default since h2m@8) it prints

* *self precision*: the share of the Markdown's tokens the text also has (no labels needed, so
  html-eval, which only has snippets, is measured too), and the extra tokens by kind;
* on the labelled second corpus, token precision, recall and F1 of the text, of the Markdown
  string, and of the Markdown with images taken out, then link destinations too (what each
  kind costs against the labels);
* the pages whose Markdown falls furthest below their text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import HtmlExtractor
from ccrawl.testing.extracteval import corpora  # the public corpora (scripts/fetch_corpora.py)
from ccrawl.testing.extracteval.articles import TokenScore, fetch, load_articles, score_text, tokens
from ccrawl.testing.extracteval.evaluate import load_pages
from ccrawl.testing.extracteval.mdclasses import KINDS, extra_tokens, strip_markup_words

_IMAGE = re.compile(r"(?<!\\)!\[(?:\\.|[^\]\\])*\]\((?:\\.|[^\s()\\])*\)")


def _pages(corpus: Path) -> list[tuple[str, str, str, bytes, str | None]]:
    """(corpus, name, URL, html, expected text or None) for html-eval and the second corpus."""
    out: list[tuple[str, str, str, bytes, str | None]] = []
    if (corpus / "evaldata.json").is_file():
        out += [
            ("html-eval", p.file, p.url, (corpus / "pages" / p.file).read_bytes(), None) for p in load_pages(corpus)
        ]
    else:
        print(f"html-eval not found at {corpus}: skipped", file=sys.stderr)
    out += [("corpus2", a.stem, a.url, a.html.read_bytes(), a.expected) for a in load_articles(fetch())]
    out += corpora.labelled_pages()
    return out


def main() -> int:
    """Run both link modes over both corpora and print the tables (and optionally JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = os.environ.get("CCRAWL_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
    ap.add_argument("--corpus", type=Path, default=Path(shared) / "html-eval")
    ap.add_argument("--worst", type=int, default=5, help="pages to list per corpus and mode")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    pages = _pages(args.corpus)
    results: list[dict[str, Any]] = []
    for mode in ("keep", "text"):
        engine = HtmlExtractor("h2m", mode)
        per: dict[str, dict[str, Any]] = {}
        for corpus, name, url, html, expected in pages:
            x = engine.extract(html, url)
            row = per.setdefault(corpus, {"kinds": Counter(), "md": 0, "common": 0, "text": 0, "pages": []})
            md_tokens, text_tokens = tokens(x.markdown), tokens(x.text)
            common = sum((md_tokens & text_tokens).values())
            n_md = sum(md_tokens.values())
            row["kinds"].update(extra_tokens(x.markdown, x.text))
            row["md"] += n_md
            row["common"] += common
            row["text"] += sum(text_tokens.values())
            gap = 1 - common / n_md if n_md else 0.0
            if expected is not None:
                scores = row.setdefault("scores", {k: TokenScore() for k in _VARIANTS})
                variants = _variants(x.markdown, x.text, expected)
                for k, s in zip(_VARIANTS, variants, strict=True):
                    scores[k].add(s)
                gap = variants[0].precision - variants[1].precision
            row["pages"].append((round(gap, 4), name))
        for corpus, row in per.items():
            results.append(_report(corpus, mode, row, args.worst))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


_VARIANTS = ("text", "markdown", "markdown, no images", "markdown, no images or destinations")


def _variants(markdown: str, text: str, expected: str) -> list[TokenScore]:
    return [
        score_text(text, expected),
        score_text(markdown, expected),
        score_text(_IMAGE.sub("", markdown), expected),
        score_text(strip_markup_words(markdown), expected),
    ]


def _report(corpus: str, mode: str, row: dict[str, Any], worst: int) -> dict[str, Any]:
    kinds: Counter[str] = row["kinds"]
    self_p = row["common"] / row["md"] if row["md"] else 0.0
    print(f"\n{corpus}, links={mode}: {len(row['pages'])} pages, text {row['text']:,} tokens, Markdown {row['md']:,}")
    print(f"  self precision (Markdown tokens the text has): {self_p:.4f}")
    for k in KINDS:
        share = kinds[k] / row["text"] * 100 if row["text"] else 0.0
        print(f"  {k:18s} {kinds[k]:8,d}  {share:6.2f}% of the text's tokens")
    out: dict[str, Any] = {
        "corpus": corpus,
        "links": mode,
        "pages": len(row["pages"]),
        "text_tokens": row["text"],
        "markdown_tokens": row["md"],
        "self_precision": round(self_p, 4),
        "extra_tokens": dict(kinds),
    }
    if "scores" in row:
        print(f"  {'against the labels':36s} {'F1':>6s} {'prec':>6s} {'recall':>6s}")
        for k, s in row["scores"].items():
            print(f"  {k:36s} {s.f1:6.4f} {s.precision:6.4f} {s.recall:6.4f}")
        out["scores"] = {k: s.as_dict() for k, s in row["scores"].items()}
    label = "text P - Markdown P" if "scores" in row else "1 - self precision"
    ranked = sorted(row["pages"], reverse=True)[:worst]
    print(f"  worst pages ({label}): " + ", ".join(f"{n} {g:.3f}" for g, n in ranked))
    out["worst"] = ranked
    return out


if __name__ == "__main__":
    raise SystemExit(main())
