"""Measure h2m on the html-eval corpus and pin the gate's floors in eval_baseline.json.

    python tests/extract/pin_eval_floors.py                  # raise floors to measured - margin
    python tests/extract/pin_eval_floors.py --allow-lower --reason "why"   # the only way down

Floors only ever move up unless ``--allow-lower`` is given with a reason; every change is
appended to ``history`` in the file, and the gate test refuses floors below the highest
floor in that history unless the lowering entry is there. The corpus digest is pinned with
the floors: a different corpus is a different test, and the gate says so instead of passing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from ccrawl.extract.engines import get_extractor  # noqa: E402
from ccrawl.testing.extracteval.evaluate import Score, corpus_digest, load_pages, sample, score_pages  # noqa: E402

BASELINE = HERE / "eval_baseline.json"
METRICS = ("f1", "recall", "precision")


def measure(corpus: Path, engine: str, every: int) -> Score:
    """Score ``engine`` over every ``every``-th annotated page of ``corpus``."""
    extractor = get_extractor(engine)
    total = Score()
    pages = sample(load_pages(corpus), every)
    for _, s in score_pages(pages, corpus, lambda html, url: extractor.extract(html, url).text):
        total.add(s)
    return total


def main() -> int:
    """Measure, compare with the pinned floors, and write the new ones."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=HERE.parents[2] / "shared" / "corpus" / "html-eval")
    ap.add_argument("--margin", type=float, default=0.005, help="floor = measured - margin")
    ap.add_argument("--allow-lower", action="store_true", help="permit a floor to go down")
    ap.add_argument("--reason", default="", help="why (required with --allow-lower)")
    args = ap.parse_args()
    old = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    engine, every = old.get("engine", "h2m"), int(old.get("sample_every", 1))
    started = time.perf_counter()
    score = measure(args.corpus, engine, every)
    measured = {m: round(getattr(score, m), 4) for m in METRICS}
    floors = {m: round(measured[m] - args.margin, 4) for m in METRICS}
    old_floors = old.get("floors", {})
    lowered = [m for m in METRICS if floors[m] < old_floors.get(m, 0.0)]
    if lowered and not args.allow_lower:
        # Keep the higher floor for a metric that dipped; refuse nothing silently.
        print(f"measured {measured} is below the pinned floors for {lowered}; keeping those floors", file=sys.stderr)
        floors = {m: max(floors[m], old_floors.get(m, 0.0)) for m in METRICS}
        lowered = []
    if lowered and not args.reason:
        ap.error("--allow-lower needs --reason")
    history = list(old.get("history", []))
    history.append({"floors": floors, "measured": measured, "lowered": lowered, "reason": args.reason})
    out = {
        "engine": engine,
        "corpus": "html-eval/evaldata.json",
        "corpus_sha256": corpus_digest(args.corpus),
        "sample_every": every,
        "floors": floors,
        "measured": {**measured, "pages": score.pages},
        "history": history,
    }
    BASELINE.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({**out["measured"], "seconds": round(time.perf_counter() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
