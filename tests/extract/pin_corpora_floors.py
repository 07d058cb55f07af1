"""Measure h2m on the public labelled corpora (issue 40) and pin the quality gate's floors.

    python scripts/fetch_corpora.py                                  # the corpora, into their cache
    python tests/extract/pin_corpora_floors.py                       # raise floors to measured - margin
    python tests/extract/pin_corpora_floors.py --allow-lower --reason "why"   # the only way down

As ``pin_corpus2_floors.py`` does for the second corpus: per corpus, the floors of h2m's text
(micro F1, precision, recall, mean per-page F1) and of its Markdown string (F1, precision) sit
``--margin`` below what was measured (``--held-out-margin``, wider, for the held-out corpus, which
is gated against regressions only, never tuned on); they only move up unless ``--allow-lower`` is
given with a reason; every change is appended to ``history`` with the sha256 of the pages scored.
A corpus that is not fetched keeps its floors.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from ccrawl.extract.engines import get_extractor  # noqa: E402
from ccrawl.testing.extracteval.articles import TokenScore, score_text  # noqa: E402
from ccrawl.testing.extracteval.corpora import CORPORA, CorporaUnavailable, Page, corpus_digest, load  # noqa: E402

BASELINE = HERE / "corpora_baseline.json"
TEXT_METRICS = ("f1", "precision", "recall", "mean_f1")
MARKDOWN_METRICS = ("f1", "precision")


def measure(pages: list[Page]) -> dict[str, dict[str, float]]:
    """h2m's text and Markdown string on ``pages``: micro token scores and the mean per-page F1."""
    engine = get_extractor("h2m")
    text, md, per_page = TokenScore(), TokenScore(), []
    for p in pages:
        x = engine.extract(p.html, p.url)
        s = score_text(x.text, p.gold)
        text.add(s)
        per_page.append(s.f1)
        md.add(score_text(x.markdown, p.gold))
    return {
        "text": {"f1": round(text.f1, 4), "precision": round(text.precision, 4), "recall": round(text.recall, 4),
                 "mean_f1": round(statistics.fmean(per_page), 4) if per_page else 0.0},
        "markdown": {"f1": round(md.f1, 4), "precision": round(md.precision, 4)},
    }


def main() -> int:
    """Measure every fetched corpus, compare with the pinned floors, and write the new ones."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--margin", type=float, default=0.005, help="floor = measured - margin")
    ap.add_argument("--held-out-margin", type=float, default=0.02, help="the same for the held-out corpus")
    ap.add_argument("--allow-lower", action="store_true", help="permit a floor to go down")
    ap.add_argument("--reason", default="", help="why (required with --allow-lower)")
    args = ap.parse_args()
    old = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    corpora = dict(old.get("corpora", {}))
    floors: dict[str, dict[str, dict[str, float]]] = dict(old.get("floors", {}))
    measured: dict[str, dict[str, dict[str, float]]] = dict(old.get("measured", {}))
    lowered: list[str] = []
    for c in CORPORA:
        try:
            pages = load(c.name)
        except CorporaUnavailable as exc:
            print(f"{c.name}: {exc}; its floors stay", file=sys.stderr)
            continue
        got = measure(pages)
        measured[c.name] = got
        corpora[c.name] = {"pages": len(pages), "sha256": corpus_digest(pages), "held_out": c.held_out}
        margin = args.held_out_margin if c.held_out else args.margin
        was = floors.get(c.name, {})
        new: dict[str, dict[str, float]] = {}
        for rendering, metrics in (("text", TEXT_METRICS), ("markdown", MARKDOWN_METRICS)):
            new[rendering] = {m: round(got[rendering][m] - margin, 4) for m in metrics}
            prev = was.get(rendering, {})
            down = [f"{c.name}.{rendering}.{m}" for m in metrics if new[rendering][m] < prev.get(m, 0.0)]
            if down and not args.allow_lower:
                print(f"{c.name} {rendering} measured {got[rendering]} is below the floors for {down}; keeping those",
                      file=sys.stderr)
                new[rendering] = {m: max(new[rendering][m], prev.get(m, 0.0)) for m in metrics}
                down = []
            lowered += down
        floors[c.name] = new
    if lowered and not args.reason:
        ap.error("--allow-lower needs --reason")
    version = get_extractor("h2m").label
    history = list(old.get("history", []))
    history.append({"floors": floors, "measured": measured, "version": version, "lowered": lowered,
                    "reason": args.reason})
    out = {"version": version, "corpora": corpora, "floors": floors, "measured": measured, "history": history}
    BASELINE.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({"measured": measured}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
