"""How sure a corpus's F1 difference is: a paired bootstrap over its pages (issue 40).

    python bench/bench_extract_corpora.py --held-out --pages-json pages.jsonl
    python bench/extract_ci.py pages.jsonl                     # ccrawl's text against trafilatura
    python bench/extract_ci.py pages.jsonl --ours markdown --resamples 10000

The corpora bench's F1 is micro (token counts summed over a corpus's pages), so a difference between two
engines on 28-1,372 pages moves with which pages the corpus happens to hold. This resamples the pages
with replacement (the same resample for both engines: the pairs stay paired), recomputes both micro F1s
and reports the difference's 2.5th and 97.5th percentiles and the share of resamples where ours is below.
A difference whose interval holds 0 is not one the corpus can tell from noise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.typing as npt

Counts = npt.NDArray[np.float64]


def micro_f1(counts: Counts) -> npt.NDArray[np.float64]:
    """Micro F1 of ``(..., pages, 3)`` arrays of (shared, extracted, expected) token counts."""
    shared, extracted, expected = counts[..., 0].sum(-1), counts[..., 1].sum(-1), counts[..., 2].sum(-1)
    total = extracted + expected
    return np.where(total > 0, 2 * shared / np.where(total > 0, total, 1), 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", type=Path, help="the corpora bench's --pages-json output")
    ap.add_argument("--ours", default="text", help="rendering compared (text, markdown, md-read) [text]")
    ap.add_argument("--peer", default="trafilatura", help="the engine compared against [trafilatura]")
    ap.add_argument("--resamples", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    by_corpus: dict[str, list[tuple[list[float], list[float]]]] = defaultdict(list)
    try:
        with args.pages.open() as fh:
            for n, line in enumerate(fh, 1):
                row = json.loads(line)
                if args.ours not in row or args.peer not in row:
                    print(f"{args.pages}:{n}: no {args.ours!r} or {args.peer!r} scores (run the bench with the peer)",
                          file=sys.stderr)
                    return 2
                by_corpus[row["corpus"]].append(
                    tuple([float(row[k][f]) for f in ("common", "extracted", "expected")]  # type: ignore[misc]
                          for k in (args.ours, args.peer)))
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args.pages}: {exc}", file=sys.stderr)
        return 2
    if not by_corpus:
        print(f"{args.pages}: no pages", file=sys.stderr)
        return 3
    rng = np.random.default_rng(args.seed)
    print(f"{'corpus':16s} {'pages':>5s} {args.ours:>8s} {args.peer:>11s} {'diff':>8s}  95% interval        "
          f"P(ours below)")
    for corpus, pairs in by_corpus.items():
        ours = np.array([p[0] for p in pairs])
        peer = np.array([p[1] for p in pairs])
        idx = rng.integers(0, len(pairs), (args.resamples, len(pairs)))
        diff = micro_f1(ours[idx]) - micro_f1(peer[idx])
        lo, hi = np.percentile(diff, [2.5, 97.5])
        f_ours, f_peer = float(micro_f1(ours)), float(micro_f1(peer))
        print(f"{corpus:16s} {len(pairs):5d} {f_ours:8.4f} {f_peer:11.4f} {f_ours - f_peer:+8.4f}  "
              f"[{lo:+.4f}, {hi:+.4f}]  {float(np.mean(diff < 0)):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
