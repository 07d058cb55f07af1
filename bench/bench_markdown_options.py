"""What each way of writing links and images costs the Markdown string against the labels (issue 40).

    python bench/bench_markdown_options.py [--json out.json] [--engine h2m+links]

One extraction per page (``--engine``, default ``h2m+links``: link targets and images kept, the
Markdown ``parse --markdown`` and ``markdown export`` published up to h2m@7) over the labelled
corpora that are fetched (the second corpus and the tunable public corpora; the held-out one
never), then the Markdown string rewritten a few
ways and scored word by word (``articles.score_text``: lower-cased ``\\w`` tokens, micro over the
corpus's pages) against the same labels as the text:

* the extra tokens by kind (``mdclasses.extra_tokens``), as a share of the text's tokens; syntax
  that spells no ``\\w`` token (table pipes and rules, emphasis marks, bullets, heading marks,
  quote marks, backslashes before punctuation) costs nothing under this tokeniser and is not listed;
* the string's F1 / precision under each option (images off or alt only; the URL left out where
  the link's text is the URL; query strings and fragments dropped; links to the page's own host
  written as paths; other hosts cut to the host; links as their text, which h2m@8 publishes by
  default), each against the text's F1.

The rewrites are regular expressions over the string, so they only estimate what a renderer
doing the same would publish; the options taken into the renderer are measured by the
``links and images kept`` row of a run with that engine (``--engine h2m``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import get_extractor
from ccrawl.testing.extracteval import corpora
from ccrawl.testing.extracteval.articles import TokenScore, fetch, load_articles, score_text, tokens
from ccrawl.testing.extracteval.mdclasses import KINDS, extra_tokens

_DEST = r"(?:\\.|[^\s()\\])*"
_IMAGE = re.compile(r"(?<!\\)!\[((?:\\.|[^\]\\])*)\]\((" + _DEST + r")\)")
_LINK = re.compile(r"(?<![\\!])\[((?:\\.|[^\]\\])*)\]\((" + _DEST + r")\)")
_UNESCAPE = re.compile(r"\\(.)")


def _images_off(md: str, base: str) -> str:
    return _IMAGE.sub("", md)


def _images_alt(md: str, base: str) -> str:
    return _IMAGE.sub(lambda m: m.group(1), md)


def _link_rewrite(keep_url: Callable[[str, str, str], str | None]) -> Callable[[str, str], str]:
    """Images off, then each link's destination through ``keep_url`` (None: the link as its text)."""

    def rewrite(md: str, base: str) -> str:
        def one(m: re.Match[str]) -> str:
            text, dest = m.group(1), _UNESCAPE.sub(r"\1", m.group(2))
            new = keep_url(_UNESCAPE.sub(r"\1", text), dest, base)
            if new is None:
                return text
            return f"[{text}]({new})"

        return _LINK.sub(one, _IMAGE.sub("", md))

    return rewrite


def _same_text(text: str, dest: str, base: str) -> str | None:
    t = text.strip().rstrip("/")
    d = dest.rstrip("/")
    bare = d.split("://", 1)[-1]
    if t in (d, bare, bare.removeprefix("www.")) or t.startswith(("http://", "https://", "www.")):
        return None  # the link's text is its URL (a reader sees it as <url>: no words the text lacks)
    return dest


def _no_query(text: str, dest: str, base: str) -> str | None:
    if _same_text(text, dest, base) is None:
        return None
    return dest.split("#", 1)[0].split("?", 1)[0] or dest


def _relative(text: str, dest: str, base: str) -> str | None:
    d = _no_query(text, dest, base)
    if d is None:
        return None
    b, u = urlsplit(base), urlsplit(d)
    if b.netloc and u.netloc.lower() == b.netloc.lower():
        return u.path or "/"
    return d


def _host_only(text: str, dest: str, base: str) -> str | None:
    d = _relative(text, dest, base)
    if d is None or d.startswith("/"):
        return d
    return f"{urlsplit(d).scheme}://{urlsplit(d).netloc}"


OPTIONS: dict[str, Callable[[str, str], str]] = {
    "links and images kept": lambda md, base: md,
    "images alt only": _images_alt,
    "images off": _images_off,
    "images off, no URL where the text is the URL": _link_rewrite(_same_text),
    "+ no query or fragment": _link_rewrite(_no_query),
    "+ own host as a path": _link_rewrite(_relative),
    "+ other hosts as the host only": _link_rewrite(_host_only),
    "links as text, images off": _link_rewrite(lambda t, d, b: None),
}


def _pages() -> list[tuple[str, str, str, bytes, str]]:
    out = [("corpus2", a.stem, a.url, a.html.read_bytes(), a.expected) for a in load_articles(fetch())]
    return out + corpora.labelled_pages()


def main() -> int:
    """Extract once per page, score every option, print the tables (and optionally JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="h2m+links", help="extractor name, as --extractor takes it")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    engine = get_extractor(args.engine)  # h2m+links: the Markdown as h2m@7 published it
    per: dict[str, dict[str, object]] = {}
    for corpus, _name, url, html, gold in _pages():
        x = engine.extract(html, url)
        row = per.setdefault(corpus, {"kinds": Counter(), "text_tokens": 0, "text": TokenScore(), "opts": {}})
        kinds = row["kinds"]
        assert isinstance(kinds, Counter)
        kinds.update(extra_tokens(x.markdown, x.text))
        row["text_tokens"] = int(str(row["text_tokens"])) + sum(tokens(x.text).values())
        text_score = row["text"]
        assert isinstance(text_score, TokenScore)
        text_score.add(score_text(x.text, gold))
        opts = row["opts"]
        assert isinstance(opts, dict)
        for key, fn in OPTIONS.items():
            opts.setdefault(key, TokenScore()).add(score_text(fn(x.markdown, url), gold))
    results = []
    for corpus, row in per.items():
        kinds, text_score, opts = row["kinds"], row["text"], row["opts"]
        assert isinstance(kinds, Counter) and isinstance(text_score, TokenScore) and isinstance(opts, dict)
        n = int(str(row["text_tokens"]))
        print(f"\n{corpus} ({args.engine}): {text_score.pages} pages; text F1 {text_score.f1:.4f}")
        shares = ", ".join(f"{k} {kinds[k] / n * 100:.2f}" for k in KINDS if kinds[k])
        print(f"  extra tokens, % of the text's: {shares}")
        for key, s in opts.items():
            gap = s.f1 - text_score.f1
            print(f"  {key:48s} F1 {s.f1:.4f}  P {s.precision:.4f}  R {s.recall:.4f}  F1 - text {gap:+.4f}")
        results.append(
            {
                "corpus": corpus,
                "engine": args.engine,
                "text": text_score.as_dict(),
                "text_tokens": n,
                "extra_tokens": {k: kinds[k] for k in KINDS},
                "extra_share": {k: round(kinds[k] / n, 5) for k in KINDS},
                "options": {k: s.as_dict() for k, s in opts.items()},
            }
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
