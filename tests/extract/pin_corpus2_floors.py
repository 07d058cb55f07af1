"""Measure h2m (and trafilatura, when installed) on the second corpus and pin the gate's floors.

    python tests/extract/pin_corpus2_floors.py                  # raise floors to measured - margin
    python tests/extract/pin_corpus2_floors.py --allow-lower --reason "why"   # the only way down

As ``pin_eval_floors.py`` does for html-eval: floors only move up unless ``--allow-lower`` is
given with a reason, every change is appended to ``history``, and the sha256 of the inputs
(every page's HTML and expected text) is pinned with them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from ccrawl.extract.engines import get_extractor  # noqa: E402
from ccrawl.testing.extracteval.articles import Article, TokenScore, corpus_digest, fetch, load_articles, score_text  # noqa: E402

BASELINE = HERE / "corpus2_baseline.json"
METRICS = ("f1", "precision", "recall", "mean_page_f1")


def text_fn(engine: str) -> Callable[[bytes, str], str]:
    """``extract(html, url) -> text`` for ``h2m`` or the ``trafilatura`` reference (as bench_extract runs it)."""
    if engine == "trafilatura":
        import trafilatura

        return lambda html, url: trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""
    extractor = get_extractor(engine)
    return lambda html, url: extractor.extract(html, url).text


def measure(articles: list[Article], extract: Callable[[bytes, str], str]) -> dict[str, float]:
    """Micro-averaged token precision, recall, F1 and the mean per-page F1."""
    total, per_page = TokenScore(), []
    for a in articles:
        s = score_text(extract(a.html.read_bytes(), a.url), a.expected)
        total.add(s)
        per_page.append(s.f1)
    return {
        "f1": round(total.f1, 4),
        "precision": round(total.precision, 4),
        "recall": round(total.recall, 4),
        "mean_page_f1": round(statistics.fmean(per_page), 4),
    }


def main() -> int:
    """Measure every engine, compare with the pinned floors, and write the new ones."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--margin", type=float, default=0.005, help="floor = measured - margin")
    ap.add_argument("--allow-lower", action="store_true", help="permit a floor to go down")
    ap.add_argument("--reason", default="", help="why (required with --allow-lower)")
    args = ap.parse_args()
    old = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    articles = load_articles(fetch())
    engines = {"h2m": get_extractor("h2m").label}
    try:
        import trafilatura

        engines["trafilatura"] = f"trafilatura@{trafilatura.__version__}"
    except ImportError:
        print("trafilatura not installed: its floors stay as they are", file=sys.stderr)
    floors: dict[str, dict[str, float]] = dict(old.get("floors", {}))
    measured: dict[str, dict[str, float]] = dict(old.get("measured", {}))
    lowered: list[str] = []
    for engine in engines:
        got = measure(articles, text_fn(engine))
        measured[engine] = got
        new = {m: round(got[m] - args.margin, 4) for m in METRICS}
        was = floors.get(engine, {})
        down = [f"{engine}.{m}" for m in METRICS if new[m] < was.get(m, 0.0)]
        if down and not args.allow_lower:
            print(f"{engine} measured {got} is below the floors for {down}; keeping those floors", file=sys.stderr)
            new = {m: max(new[m], was.get(m, 0.0)) for m in METRICS}
            down = []
        lowered += down
        floors[engine] = new
    if lowered and not args.reason:
        ap.error("--allow-lower needs --reason")
    history = list(old.get("history", []))
    history.append({"floors": floors, "measured": measured, "versions": engines, "lowered": lowered,
                    "reason": args.reason})
    out = {
        "corpus": [f"{a.source}/{a.stem}" for a in articles],
        "corpus_sha256": corpus_digest(articles),
        "versions": engines,
        "floors": floors,
        "measured": measured,
        "history": history,
    }
    BASELINE.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({"measured": measured, "floors": floors}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
