"""Extraction peers on the public labelled corpora (issue 40), and what a perfect subtree chooser would reach.

    python scripts/fetch_corpora.py                                     # once
    python bench/bench_extract_peers.py --json peers.json               # every tunable corpus, every peer installed
    python bench/bench_extract_peers.py --corpus l3s-gn1 --oracle       # plus the subtree-selection ceiling
    python bench/bench_extract_peers.py --held-out --corpus aeb         # the held-out corpus: a finished change only

Every engine gets the same pages and is scored by the same scorer as ``bench_extract_corpora.py``
(``articles.score_text``: a bag of lower-cased ``\\w`` tokens, one per character in unspaced scripts;
F1/P/R micro over the corpus's pages, ``mean`` the mean per-page F1). Engines (each skipped with a
reason when its package is absent; every call that raises scores as empty text and is counted):

* ``ccrawl h2m`` text and Markdown (one ``extract`` call, both renderings);
* ``trafilatura`` ``extract(html, url=url, include_comments=False, include_tables=True)`` (as the corpora bench);
* ``resiliparse`` ``extract_plain_text(HTMLTree.parse(html), main_content=True)``, other options at their defaults;
* ``readability-lxml`` ``Document(html).summary()``, its HTML turned into text by ``html_text``;
* ``justext`` its non-boilerplate paragraphs, English stop list (as the WCEB ran it);
* ``boilerpy3`` ``ArticleExtractor().get_content(html)``;
* ``goose3`` ``Goose().extract(raw_html=html).cleaned_text`` (no image fetching);
* ``newspaper4k`` ``Article(url).download(input_html=html); parse(); text``;
* ``html-text`` and ``inscriptis``: the whole page as text, no boilerplate removal: the floor.

Engines taking ``str`` get the page decoded once by ``ccrawl.extract.decode.decode_body`` (the same
string for all); trafilatura and jusText take the bytes. CPU time per engine is reported (pages per
CPU-s), each engine over the whole corpus in turn, so only ratios within one run mean anything.

``--oracle`` adds, per page, the best F1 any **single element's** text reaches against the gold
(the ceiling of any extractor that keeps one DOM subtree whole, what ccrawl's container choice
does before its pruning), and the best **union of up to 3 sibling subtrees** (greedy per parent:
the best child, then the child that raises F1 most, twice). The tree is lxml's (``lxml.html``) over
the same decoded string; each text node is tokenised on its own (a tag splits a word), ``script``,
``style``, ``noscript``, ``template`` and comments are not text. A pruning extractor can beat the
single-subtree ceiling (it removes furniture inside the subtree); the ceiling says how much of a
corpus's gap is the choice of container and how much is what is inside it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.decode import decode_body
from ccrawl.extract.engines import get_extractor
from ccrawl.testing.extracteval.articles import TokenScore, score_text, tokens
from ccrawl.testing.extracteval.corpora import BY_NAME, HELD_OUT, TUNABLE, CorporaUnavailable, Page, load

Engine = Callable[[bytes, str, str], "str | tuple[str, str]"]


def _engines() -> tuple[dict[str, Engine], dict[str, str]]:
    """Every engine importable here, by label, and the reason each missing one was left out."""
    engines: dict[str, Engine] = {}
    missing: dict[str, str] = {}
    h2m = get_extractor("h2m")

    def ccrawl(html: bytes, text: str, url: str) -> tuple[str, str]:
        x = h2m.extract(html, url)
        return x.text, x.markdown

    engines[h2m.label] = ccrawl
    try:
        import trafilatura

        def traf(html: bytes, text: str, url: str) -> str:
            return trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""

        engines[f"trafilatura@{trafilatura.__version__}"] = traf
    except ImportError as exc:
        missing["trafilatura"] = str(exc)
    try:
        from importlib.metadata import version

        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        def resili(html: bytes, text: str, url: str) -> str:
            return str(extract_plain_text(HTMLTree.parse(text), main_content=True))

        engines[f"resiliparse@{version('resiliparse')} main_content"] = resili
    except ImportError as exc:
        missing["resiliparse"] = str(exc)
    try:
        import html_text
        from readability import Document

        def readab(html: bytes, text: str, url: str) -> str:
            return str(html_text.extract_text(Document(text, url=url).summary(html_partial=True)))

        engines[f"readability-lxml@{version('readability-lxml')}"] = readab
    except ImportError as exc:
        missing["readability-lxml"] = str(exc)
    try:
        import justext

        stop = justext.get_stoplist("English")

        def jus(html: bytes, text: str, url: str) -> str:
            return "\n".join(p.text for p in justext.justext(html, stop) if not p.is_boilerplate)

        engines[f"justext@{version('justext')}"] = jus
    except ImportError as exc:
        missing["justext"] = str(exc)
    try:
        from boilerpy3 import extractors

        article = extractors.ArticleExtractor(raise_on_failure=False)

        def boiler(html: bytes, text: str, url: str) -> str:
            return str(article.get_content(text) or "")

        engines[f"boilerpy3@{version('boilerpy3')} Article"] = boiler
    except ImportError as exc:
        missing["boilerpy3"] = str(exc)
    try:
        from goose3 import Goose

        goose = Goose({"enable_image_fetching": False})

        def goo(html: bytes, text: str, url: str) -> str:
            return str(goose.extract(raw_html=text).cleaned_text or "")

        engines[f"goose3@{version('goose3')}"] = goo
    except ImportError as exc:
        missing["goose3"] = str(exc)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from newspaper import Article

        def news(html: bytes, text: str, url: str) -> str:
            a = Article(url or "http://example.com/", fetch_images=False)
            a.download(input_html=text)
            a.parse()
            return str(a.text or "")

        engines[f"newspaper4k@{version('newspaper4k')}"] = news
    except ImportError as exc:
        missing["newspaper4k"] = str(exc)
    try:
        import html_text as ht

        def whole(html: bytes, text: str, url: str) -> str:
            return str(ht.extract_text(text))

        engines[f"html-text@{version('html-text')} (no boilerplate removal)"] = whole
    except ImportError as exc:
        missing["html-text"] = str(exc)
    try:
        from inscriptis import get_text

        def insc(html: bytes, text: str, url: str) -> str:
            return str(get_text(text))

        engines[f"inscriptis@{version('inscriptis')} (no boilerplate removal)"] = insc
    except ImportError as exc:
        missing["inscriptis"] = str(exc)
    return engines, missing


# The oracle: the best single subtree, and the best union of up to three siblings


_SKIP = frozenset({"script", "style", "noscript", "template"})


def _overlap(c: Counter[str], gold: Counter[str]) -> int:
    return sum(min(n, gold[t]) for t, n in c.items() if t in gold)


def _f1(shared: int, extracted: int, expected: int) -> float:
    return 2.0 * shared / (extracted + expected) if extracted + expected else 0.0


Best = tuple[float, int, int, int]  # F1, shared tokens, extracted, expected


def oracle(text: str, gold_text: str) -> tuple[Best, Best]:
    """The best single element and the best union of up to 3 sibling elements on one page (F1 and counts)."""
    import lxml.html
    from lxml import etree
    from lxml.html import HtmlElement

    gold = tokens(gold_text)
    expected = sum(gold.values())
    try:
        root = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return (0.0, 0, 0, expected), (0.0, 0, 0, expected)
    best1: Best = (0.0, 0, 0, expected)
    best3: Best = best1
    counts: dict[HtmlElement, tuple[Counter[str], int, int]] = {}  # element -> tokens, their count, shared with gold

    # Post-order without recursion (deep tag soup): an element's counter is its own text plus its
    # children's (each child's tail belongs to the parent).
    stack: list[tuple[HtmlElement, bool]] = [(root, False)]
    while stack:
        el, done = stack.pop()
        if not isinstance(el.tag, str) or el.tag in _SKIP:
            continue
        if not done:
            stack.append((el, True))
            stack.extend((ch, False) for ch in el)
            continue
        c: Counter[str] = tokens(el.text or "")
        kids = []
        for ch in el:
            if isinstance(ch.tag, str) and ch.tag not in _SKIP and ch in counts:
                kc = counts[ch]
                c.update(kc[0])
                kids.append(kc)
            if ch.tail:
                c.update(tokens(ch.tail))
        n = sum(c.values())
        shared = _overlap(c, gold)
        counts[el] = (c, n, shared)
        f = _f1(shared, n, expected)
        if f > best1[0]:
            best1 = (f, shared, n, expected)
        if len(kids) >= 2:
            u = _greedy_union(kids, gold, expected)
            if u[0] > best3[0]:
                best3 = u
        # children are no longer needed once the parent is counted
        for ch in el:
            counts.pop(ch, None)
    return best1, max(best1, best3)


def _greedy_union(kids: list[tuple[Counter[str], int, int]], gold: Counter[str], expected: int) -> Best:
    kids = [k for k in kids if k[2]]
    if not kids:
        return (0.0, 0, 0, expected)
    first = max(kids, key=lambda k: _f1(k[2], k[1], expected))
    cur: Counter[str] = Counter(first[0])
    n, shared = first[1], first[2]
    best = _f1(shared, n, expected)
    used = {id(first)}
    for _ in range(2):
        pick, pick_f, pick_gain = None, best, 0
        for k in kids:
            if id(k) in used:
                continue
            gain = sum(min(cur[t] + m, gold[t]) - min(cur[t], gold[t]) for t, m in k[0].items() if t in gold)
            f = _f1(shared + gain, n + k[1], expected)
            if f > pick_f:
                pick, pick_f, pick_gain = k, f, gain
        if pick is None:
            break
        used.add(id(pick))
        cur.update(pick[0])
        n, shared, best = n + pick[1], shared + pick_gain, pick_f
    return (best, shared, n, expected)


# Running


class Run(NamedTuple):
    """One corpus through every engine: labels in order, per-page scores, CPU seconds, errors, oracle rows."""

    labels: list[str]
    scores: dict[str, list[TokenScore]]
    cpu: dict[str, float]
    errors: dict[str, int]
    oracle: list[tuple[Best, Best]]


def run(pages: list[Page], engines: dict[str, Engine], with_oracle: bool) -> Run:
    """Each engine over every page in turn (CPU time per engine), then the oracle; scores per page."""
    decoded = [decode_body(p.html).text for p in pages]
    labels: list[str] = []
    scores: dict[str, list[TokenScore]] = {}
    cpu: dict[str, float] = {}
    errors: dict[str, int] = {}
    for label, fn in engines.items():
        outs: list[str | tuple[str, str]] = []
        errs = 0
        with contextlib.suppress(Exception):  # a peer failing on a page scores as empty text, counted
            fn(pages[0].html, decoded[0], pages[0].url)  # warm-up, untimed
        t0 = time.process_time()
        for p, text in zip(pages, decoded, strict=True):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outs.append(fn(p.html, text, p.url))
            except Exception:
                outs.append("")
                errs += 1
        secs = time.process_time() - t0
        if outs and isinstance(outs[0], tuple):
            for i, name in enumerate(("text", "markdown")):
                key = f"{label} {name}"
                labels.append(key)
                scores[key] = [score_text(o[i] if isinstance(o, tuple) else o, p.gold)
                               for o, p in zip(outs, pages, strict=True)]
                cpu[key], errors[key] = secs, errs
        else:
            labels.append(label)
            scores[label] = [score_text(o if isinstance(o, str) else o[0], p.gold)
                             for o, p in zip(outs, pages, strict=True)]
            cpu[label], errors[label] = secs, errs
    oracle_rows: list[tuple[Best, Best]] = []
    if with_oracle:
        t0 = time.process_time()
        oracle_rows = [oracle(text, p.gold) for p, text in zip(pages, decoded, strict=True)]
        cpu["oracle"] = time.process_time() - t0
    return Run(labels, scores, cpu, errors, oracle_rows)


def _row(scores: list[TokenScore]) -> dict[str, float]:
    total = TokenScore()
    for s in scores:
        total.add(s)
    f1s = sorted(s.f1 for s in scores)
    n = max(1, len(f1s) // 10)
    return {"f1": round(total.f1, 4), "precision": round(total.precision, 4), "recall": round(total.recall, 4),
            "mean_f1": round(statistics.fmean(f1s), 4) if f1s else 0.0,
            "worst_decile_f1": round(statistics.fmean(f1s[:n]), 4) if f1s else 0.0}


def main() -> int:
    """Run the chosen corpora through every installed peer; print one table per corpus."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=sorted(BY_NAME),
                    help="only these (default: every tunable one)")
    ap.add_argument("--held-out", action="store_true", help=f"also the held-out corpus ({', '.join(HELD_OUT)})")
    ap.add_argument("--engine", action="append", help="only engines whose label starts with this (repeatable)")
    ap.add_argument("--oracle", action="store_true", help="add the single-subtree and 3-sibling ceilings")
    ap.add_argument("--every", type=int, default=1, help="every N-th page (deterministic)")
    ap.add_argument("--json", type=Path, help="write the tables here")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)  # boilerpy3 and goose3 log a traceback for every page they cannot parse
    engines, missing = _engines()
    if args.engine:
        engines = {k: v for k, v in engines.items() if any(k.startswith(e) for e in args.engine)}
    for name, why in missing.items():
        print(f"{name}: not installed, left out ({why})", file=sys.stderr)
    names = list(args.corpus or TUNABLE)
    if args.held_out:
        names += [n for n in HELD_OUT if n not in names]
    report: dict[str, object] = {}
    for name in names:
        try:
            pages = load(name)[:: max(1, args.every)]
        except CorporaUnavailable as exc:
            print(f"{name}: skipped: {exc}", file=sys.stderr)
            continue
        res = run(pages, engines, args.oracle)
        print(f"\n== {name} ({BY_NAME[name].kind}): {len(pages)} pages")
        print(f"{'engine':52s} {'F1':>6s} {'P':>6s} {'R':>6s} {'mean':>6s} {'worst10':>7s} {'pages/s':>8s}"
              f" {'errors':>6s}")
        out: dict[str, object] = {}
        for label in res.labels:
            row = _row(res.scores[label])
            secs = res.cpu[label]
            row["pages_per_cpu_s"] = round(len(pages) / secs, 1) if secs else 0.0
            row["errors"] = res.errors[label]
            out[label] = row
            print(f"{label:52s} {row['f1']:6.4f} {row['precision']:6.4f} {row['recall']:6.4f} {row['mean_f1']:6.4f}"
                  f" {row['worst_decile_f1']:7.3f} {row['pages_per_cpu_s']:8.1f} {row['errors']:6d}")
        if res.oracle:
            for label, k in (("oracle: best single subtree", 0), ("oracle: best union of <= 3 siblings", 1)):
                best = [r[k] for r in res.oracle]
                shared, got, want = sum(b[1] for b in best), sum(b[2] for b in best), sum(b[3] for b in best)
                s = sorted(b[0] for b in best)
                n = max(1, len(s) // 10)
                o: dict[str, float] = {"f1": round(_f1(shared, got, want), 4),
                                     "precision": round(shared / got, 4) if got else 0.0,
                                     "recall": round(shared / want, 4) if want else 0.0,
                                     "mean_f1": round(statistics.fmean(s), 4),
                                     "worst_decile_f1": round(statistics.fmean(s[:n]), 4),
                                     "pages_at_0.96+": sum(v >= 0.96 for v in s)}
                out[label] = o
                print(f"{label:52s} {o['f1']:6.4f} {o['precision']:6.4f} {o['recall']:6.4f} {o['mean_f1']:6.4f}"
                      f" {o['worst_decile_f1']:7.3f}   ({o['pages_at_0.96+']} of {len(s)} pages at 0.96+)")
            out["oracle_pages"] = [{"id": p.id, "single": round(a[0], 4), "siblings3": round(b[0], 4)}
                                   for p, (a, b) in zip(pages, res.oracle, strict=True)]
        report[name] = {"pages": len(pages), "engines": out}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if report else 1


if __name__ == "__main__":
    raise SystemExit(main())
