"""Extraction bench: pages/s on one core and html-eval F1 for every engine, against the peers.

    python bench/bench_extract.py                       # whole corpus, all engines available
    python bench/bench_extract.py --every 3 --json out.json
    python bench/bench_extract.py --engines h2m,trafilatura --max-seconds 60
    python bench/bench_extract.py --engines h2m,raw,trafilatura --before /tmp/old   # before/after
    python bench/bench_extract.py --corpus2 --engines h2m,trafilatura   # the second corpus (token F1)

Engines: ours (h2m, readability, raw via ``ccrawl.extract``) and the peers, each used the way
its documentation shows: trafilatura ``extract()`` (text, comments off, tables on), readability-lxml
``Document(html).summary()`` then the summary's text, resiliparse ``extract_plain_text(...,
main_content=True)``. A peer that is not installed is skipped and named.

Every page is read into memory first, then each engine runs on it in turn (interleaved), so
a machine shared with other work slows all engines alike rather than whichever ran last; the
order is reversed on every other page, since an engine that runs second on a page runs warmer
(caches, allocator) and would otherwise always be flattered. ``--before DIR`` adds ``h2m`` and
``raw`` from another copy of the package (``DIR/ccrawl``, e.g. ``git archive HEAD ccrawl | tar
-x -C DIR`` plus the built ``_native/*.so``) to the same run, for before/after figures. The
run stops at ``--max-seconds`` and reports the pages done; all engines have seen the same ones.
Timings are CPU time per call (``time.process_time``), single process, single thread:
"pages/s per core", and steadier than wall time on a machine shared with other work. The F1 is the
quality gate's scorer (``ccrawl.testing.extracteval.evaluate``); with ``--corpus2`` the pages are the second
corpus's (``ccrawl.testing.extracteval.articles``, fetched first if need be) and F1, precision and recall are
its token scores, micro-averaged, with the mean of the per-page F1 beside them. For h2m it also
reports the slowest pages and how often the detected language matches ``<html lang>`` on pages of 200+ words.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import get_extractor
from ccrawl.extract.lang import to_iso639_3
from ccrawl.testing.extracteval.articles import TokenScore, corpus_digest, fetch, load_articles, score_text
from ccrawl.testing.extracteval.evaluate import Score, load_pages, sample, score_page

TextFn = Callable[[bytes, str], str]


def _ours(name: str) -> TextFn:
    engine = get_extractor(name)
    return lambda html, url: engine.extract(html, url).text


def _trafilatura() -> TextFn:
    import trafilatura

    return lambda html, url: trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""


def _readability_lxml() -> TextFn:
    from readability import Document
    from selectolax.lexbor import LexborHTMLParser

    def run(html: bytes, url: str) -> str:
        summary = Document(html, url=url).summary(html_partial=True)
        root = LexborHTMLParser(summary).root
        return root.text(separator="\n") if root is not None else ""

    return run


def _resiliparse() -> TextFn:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return lambda html, url: extract_plain_text(HTMLTree.parse_from_bytes(html), main_content=True)


FACTORIES: dict[str, Callable[[], TextFn]] = {
    "h2m": lambda: _ours("h2m"),
    "readability": lambda: _ours("readability"),
    "raw": lambda: _ours("raw"),
    "trafilatura": _trafilatura,
    "readability-lxml": _readability_lxml,
    "resiliparse": _resiliparse,
}
VERSIONS = {
    "trafilatura": ("trafilatura", "__version__"),
    "readability-lxml": ("readability", None),
    "resiliparse": ("resiliparse", None),
}


def _before_engines(root: Path, names: list[str]) -> dict[str, TextFn]:
    """``name (before)`` engines from the package copy at ``root``, loaded beside this one.

    The copy is imported under the same name with this package's modules moved aside, then
    those are put back: the copy's functions keep their own module globals, so both run.
    """
    mine = {m: mod for m, mod in sys.modules.items() if m == "ccrawl" or m.startswith("ccrawl.")}
    for m in mine:
        del sys.modules[m]
    sys.path.insert(0, str(root))
    try:
        from ccrawl.extract.engines import HtmlExtractor as Before

        engines = {f"{n} (before)": Before(n) for n in names}
    finally:
        sys.path.remove(str(root))
        for m in [m for m in sys.modules if m == "ccrawl" or m.startswith("ccrawl.")]:
            del sys.modules[m]
        sys.modules.update(mine)
    return {name: _text_of(engine) for name, engine in engines.items()}


def _text_of(engine: Any) -> TextFn:
    return lambda html, url: engine.extract(html, url).text


def _version(name: str) -> str:
    if name.endswith(" (before)"):
        return name
    if name in ("h2m", "readability", "raw"):
        return get_extractor(name).label
    from importlib.metadata import PackageNotFoundError, version

    dist = {"readability-lxml": "readability-lxml", "trafilatura": "trafilatura", "resiliparse": "resiliparse"}[name]
    try:
        return f"{name}@{version(dist)}"
    except PackageNotFoundError:
        return name


def main() -> int:
    """Run the bench and print one table (and optionally JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # CCRAWL_CORPUS as the tests read it; else ../shared/corpus beside the checkout.
    shared = os.environ.get("CCRAWL_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
    default_corpus = Path(shared) / "html-eval"
    ap.add_argument("--corpus", type=Path, default=default_corpus)
    ap.add_argument("--engines", default=",".join(FACTORIES), help="comma-separated, default all")
    ap.add_argument("--every", type=int, default=1, help="every N-th page in URL order (deterministic)")
    ap.add_argument("--max-seconds", type=float, default=600, help="stop after this long (all engines alike)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--stages", nargs="?", const="h2m", choices=["h2m", "raw"],
                    help="only break one engine's CPU time down by stage (default h2m)")
    ap.add_argument("--before", type=Path, help="also run h2m and raw from the package copy DIR/ccrawl")
    ap.add_argument("--corpus2", action="store_true", help="score on the second corpus (newspaper4k's articles)")
    args = ap.parse_args()
    if args.corpus2:
        return _corpus2(_engines(args), args.max_seconds, args.json)
    if not (args.corpus / "evaldata.json").is_file():
        print(f"html-eval corpus not found at {args.corpus}: pass --corpus", file=sys.stderr)
        return 1
    if args.stages:
        return _stages(args.corpus, sample(load_pages(args.corpus), args.every), args.stages)

    engines = _engines(args)
    pages = sample(load_pages(args.corpus), args.every)
    bodies = {p.file: (args.corpus / "pages" / p.file).read_bytes() for p in pages}

    times: dict[str, list[float]] = {n: [] for n in engines}
    sizes: dict[str, int] = dict.fromkeys(engines, 0)  # characters of text out, all pages
    scores: dict[str, Score] = {n: Score() for n in engines}
    slowest: list[tuple[float, str]] = []
    started = time.perf_counter()
    done = 0
    order = list(engines.items())
    for page in pages:
        if time.perf_counter() - started > args.max_seconds:
            break
        html = bodies[page.file]
        for name, fn in order if done % 2 == 0 else reversed(order):
            t0 = time.process_time()
            text = fn(html, page.url)
            elapsed = time.process_time() - t0
            times[name].append(elapsed)
            sizes[name] += len(text)
            scores[name].add(score_page(text, page))
            if name == "h2m":
                slowest.append((elapsed, page.file))
        done += 1

    lang = _language_agreement(args.corpus, pages[:done]) if "h2m" in engines else None
    rows = []
    for name in engines:
        t = times[name]
        s = scores[name]
        rows.append(
            {
                "engine": _version(name),
                "pages": len(t),
                "pages_per_s": round(len(t) / sum(t), 1) if t else 0.0,
                "median_ms": round(statistics.median(t) * 1000, 2) if t else 0.0,
                "p99_ms": round(sorted(t)[int(len(t) * 0.99) - 1] * 1000, 1) if t else 0.0,
                "max_ms": round(max(t) * 1000, 1) if t else 0.0,
                "text_chars": round(sizes[name] / len(t)) if t else 0,
                **{k: v for k, v in s.as_dict().items() if k in ("f1", "precision", "recall", "leakage")},
            }
        )
    print(
        f"{'engine':28s} {'pages':>5s} {'pages/s':>8s} {'med ms':>7s} {'p99 ms':>7s} {'max ms':>7s}"
        f" {'F1':>6s} {'prec':>6s} {'recall':>6s} {'leak':>6s} {'chars':>7s}"
    )
    for r in rows:
        print(
            f"{r['engine']:28s} {r['pages']:5d} {r['pages_per_s']:8.1f} {r['median_ms']:7.2f} {r['p99_ms']:7.1f}"
            f" {r['max_ms']:7.1f} {r['f1']:6.3f} {r['precision']:6.3f} {r['recall']:6.3f} {r['leakage']:6.3f}"
            f" {r['text_chars']:7d}"
        )
    ref = next((r for r in rows if r["engine"].startswith("trafilatura")), None)
    if ref:
        for r in rows:
            if r is not ref and ref["pages_per_s"]:
                print(
                    f"  {r['engine']}: {r['pages_per_s'] / ref['pages_per_s']:.1f}x trafilatura's pages/s,"
                    f" F1 {r['f1'] - ref['f1']:+.3f}"
                )
    if slowest:
        slowest.sort(reverse=True)
        print("h2m slowest pages: " + ", ".join(f"{f} {t * 1000:.1f} ms" for t, f in slowest[:5]))
    if lang:
        print(f"h2m language vs <html lang> on 200+ word pages: {lang['agree']}/{lang['pages']} = {lang['share']:.3f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "language": lang, "pages_done": done}, indent=2) + "\n")
    return 0


def _engines(args: argparse.Namespace) -> dict[str, TextFn]:
    """The engines named on the command line that can be loaded here (and their ``--before`` copies)."""
    engines: dict[str, TextFn] = {}
    for name in args.engines.split(","):
        try:
            engines[name] = FACTORIES[name]()
        except ImportError as exc:
            print(f"skipping {name}: {exc} (pip install trafilatura readability-lxml)", file=sys.stderr)
    if args.before:
        engines.update(_before_engines(args.before, [n for n in ("h2m", "raw") if n in engines]))
    return engines


def _corpus2(engines: dict[str, TextFn], max_seconds: float, out: Path | None) -> int:
    """Every engine on the second corpus, interleaved as on html-eval; token F1 (micro and per-page mean)."""
    articles = load_articles(fetch())
    bodies = [(a, a.html.read_bytes()) for a in articles]
    scores = {n: TokenScore() for n in engines}
    page_f1: dict[str, list[float]] = {n: [] for n in engines}
    cpu = dict.fromkeys(engines, 0.0)
    order = list(engines.items())
    started = time.perf_counter()
    for done, (article, html) in enumerate(bodies):
        if time.perf_counter() - started > max_seconds:
            break
        for name, fn in order if done % 2 == 0 else reversed(order):
            t0 = time.process_time()
            text = fn(html, article.url)
            cpu[name] += time.process_time() - t0
            s = score_text(text, article.expected)
            scores[name].add(s)
            page_f1[name].append(s.f1)
    print(f"corpus2: {len(articles)} pages, sha256 {corpus_digest(articles)[:16]}")
    print(f"{'engine':28s} {'pages':>5s} {'F1':>6s} {'prec':>6s} {'recall':>6s} {'mean F1':>7s} {'CPU s':>6s}")
    rows = []
    for name, s in scores.items():
        mean = statistics.fmean(page_f1[name]) if page_f1[name] else 0.0
        row = {"engine": _version(name), **s.as_dict(), "mean_page_f1": round(mean, 4), "cpu_s": round(cpu[name], 2)}
        rows.append(row)
        print(
            f"{_version(name):28s} {s.pages:5d} {s.f1:6.4f} {s.precision:6.4f} {s.recall:6.4f} {mean:7.4f}"
            f" {cpu[name]:6.2f}"
        )
    if out:
        out.write_text(json.dumps({"corpus2": rows}, indent=2) + "\n")
    return 0


def _stages(corpus: Path, pages: list, engine: str = "h2m") -> int:  # type: ignore[type-arg]
    """One engine's pipeline (h2m or raw) run stage by stage (CPU time), to show where a page's time goes."""
    from selectolax.lexbor import LexborHTMLParser

    from ccrawl.extract.decode import decode_body
    from ccrawl.extract.engines import _STRIP, _head_and_hrefs
    from ccrawl.extract.guards import flatten_deep_nesting
    from ccrawl.extract.lang import detect_language
    from ccrawl.extract.mainsel import select_main
    from ccrawl.extract.model import DEFAULT_BUDGET
    from ccrawl.extract.render import Renderer, count_lt, outlinks, strip_tags, word_count
    from ccrawl.extract.urls import Resolver

    try:
        from ccrawl.extract.simhash import simhash_or_none
    except ImportError:
        simhash_or_none = None  # type: ignore[assignment]
    spent: dict[str, float] = {}
    clock = time.process_time

    def lap(stage: str, since: float) -> float:
        now = clock()
        spent[stage] = spent.get(stage, 0.0) + now - since
        return now

    for page in pages:
        body = (corpus / "pages" / page.file).read_bytes()
        t = clock()
        decoded = decode_body(body)
        source = decoded.text
        t = lap("decode", t)
        # As the engine does: the bytes themselves when they are the text's UTF-8 (their "<"
        # counted natively for the guard, and handed to the parser).
        same = decoded.charset == "utf-8" and decoded.source != "bom" and not decoded.note
        tags = count_lt(body) if same else None
        source, removed = flatten_deep_nesting(source, DEFAULT_BUDGET.max_block_nesting, tags=tags)
        t = lap("nesting guard", t)
        utf8 = same and not removed
        tree = LexborHTMLParser(body if utf8 else source)
        strip_tags(tree, _STRIP)
        t = lap("parse + strip scripts", t)
        _, hrefs = _head_and_hrefs(tree)
        resolver = Resolver(page.url)
        outlinks(hrefs, resolver, 10_000)
        t = lap("metadata + outlinks", t)
        if tree.body is None:
            continue
        if engine == "raw":
            md, text = Renderer(resolver, DEFAULT_BUDGET, prune=False).render(tree.body)
        else:
            main = select_main(tree.body)
            t = lap("container selection", t)
            md, text = Renderer(resolver, DEFAULT_BUDGET, prune=True, root_chars=main.root_chars).render(main.root)
        t = lap("render walk", t)
        word_count(text)
        t = lap("word count", t)
        detect_language(text)
        t = lap("language", t)
        if simhash_or_none is not None:
            simhash_or_none(md)
            lap("simhash", t)
    total = sum(spent.values())
    for stage, seconds in spent.items():
        print(f"{stage:24s} {seconds / len(pages) * 1000:7.3f} ms/page {seconds / total * 100:5.1f}%")
    print(f"{'total':24s} {total / len(pages) * 1000:7.3f} ms/page = {len(pages) / total:.0f} pages/s")
    return 0


def _language_agreement(corpus: Path, pages: list) -> dict[str, object]:  # type: ignore[type-arg]
    """Share of 200+ word pages whose detected language equals their declared ``<html lang>``."""
    engine = get_extractor("h2m")
    agree = total = 0
    disagreements = []
    for page in pages:
        x = engine.extract((corpus / "pages" / page.file).read_bytes(), page.url)
        declared = to_iso639_3(x.declared_language)
        if not declared or x.word_count < 200:
            continue
        total += 1
        if x.language == declared:
            agree += 1
        else:
            disagreements.append([page.file, x.declared_language, x.language, x.language_confidence])
    return {
        "pages": total,
        "agree": agree,
        "share": round(agree / total, 4) if total else 0.0,
        "disagreements": disagreements,
    }


if __name__ == "__main__":
    raise SystemExit(main())
