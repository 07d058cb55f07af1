"""Extraction on the public labelled corpora (issue 40): word F1 per corpus, per rendering, against trafilatura.

    python scripts/fetch_corpora.py                                  # once (see its doc for snapshots)
    python bench/bench_extract_corpora.py                            # every tunable corpus (the held-out one left out)
    python bench/bench_extract_corpora.py --corpus dragnet --corpus cleaneval --every 2
    python bench/bench_extract_corpora.py --held-out                 # also the held-out corpus: a finished change only
    python bench/bench_extract_corpora.py --no-trafilatura           # ccrawl's renderings alone (fast, for tuning)
    python bench/bench_extract_corpora.py --json out.json --pages-json pages.jsonl --worst 8

Renderings, all of one ``h2m`` extraction per page (what ``ccrawl parse --text --markdown`` runs:
``get_extractor("h2m").extract(html, url)``):

* ``text``      the ``text`` column (``parse --text``);
* ``markdown``  the ``markdown`` column as a string (``parse --markdown``): its link and image
  targets, alt texts and syntax are tokens like any other, which is what a model trained on it reads;
* ``md-read``   the Markdown as a CommonMark reader shows it (``evaluate.markdown_words``): no targets,
  no alt texts. ``markdown`` against ``md-read`` is what the syntax costs; ``md-read`` against
  ``text`` is what the Markdown keeps that the text does not;

and ``trafilatura`` (``extract(html, url=url, include_comments=False, include_tables=True)``, its
text). Speed is CPU time, each engine as a user runs it: one untimed warm-up call each, then
blocks of ``--block`` pages (32), each engine running the whole block in turn, which goes first
alternating; ``--block 1`` is the old page-by-page interleaving, which charges each engine for the
other's cache pollution. One ``h2m`` call renders the text and the Markdown both; trafilatura's
figure is its text alone.

Scoring (``ccrawl.testing.extracteval.articles.score_text``): a bag of lower-cased word tokens (``\\w`` runs, one
per character in scripts written without spaces); precision = shared / extracted, recall = shared /
expected. ``F1``, ``P``, ``R`` are micro (token counts summed over the corpus's pages); ``mean`` is
the mean of per-page F1, the figure the Web Content Extraction Benchmark (Bevendorff et al. 2023)
averages; ``p10`` the 10th percentile of per-page F1 and ``worst10`` the mean F1 of the worst
decile of pages. WCEB tokenises on whitespace-separated words without lower-casing; here
punctuation never counts and case does not matter, and unspaced scripts are scored per character.

For every corpus it then lists the pages where ccrawl's text loses most against trafilatura, each
with a failure kind read off the scores (``--worst N``, default 5):

* ``nothing kept``  ccrawl's text has under 20% of the expected tokens' count (no main content judged,
  or a tiny container);
* ``part missed``   recall at least 0.15 below trafilatura's and precision not worse (a container too
  small, or content pruned as furniture);
* ``boilerplate kept`` precision at least 0.15 below trafilatura's and recall not worse (a container too
  big, furniture not pruned);
* ``both``          both;
* ``slight``        neither difference reaches 0.15.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import get_extractor
from ccrawl.testing.extracteval.articles import TokenScore, score_text, tokens
from ccrawl.testing.extracteval.corpora import BY_NAME, HELD_OUT, TUNABLE, CorporaUnavailable, Page, corpus_digest, load
from ccrawl.testing.extracteval.evaluate import markdown_words

RENDERINGS = ("text", "markdown", "md-read")
_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def failure_kind(ours: TokenScore, ref: TokenScore) -> str:
    """How ccrawl's text fails on a page where it scores below the reference (see the module doc)."""
    if ours.expected and ours.extracted < 0.2 * ours.expected:
        return "nothing kept"
    dr, dp = ref.recall - ours.recall, ref.precision - ours.precision
    if dr >= 0.15 and dp >= 0.15:
        return "both"
    if dr >= 0.15:
        return "part missed"
    if dp >= 0.15:
        return "boilerplate kept"
    return "slight"


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


def _worst_decile(values: list[float]) -> float:
    s = sorted(values)
    n = max(1, len(s) // 10)
    return statistics.fmean(s[:n]) if s else 0.0


def _trafilatura() -> tuple[Callable[[bytes, str], str], str] | None:
    try:
        import trafilatura
    except ImportError:
        return None

    def run(html: bytes, url: str) -> str:
        return trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""

    return run, f"trafilatura@{trafilatura.__version__}"


def run_corpus(pages: list[Page], use_trafilatura: bool, max_seconds: float, block: int = 32) -> dict[str, Any]:
    """Every page through h2m (three renderings) and trafilatura; scores and CPU time.

    Timed as a user runs each engine: one untimed warm-up call each, then the pages in blocks of
    ``block``, each engine running the whole block in turn (which goes first alternates), and the
    block scored after both. Page by page (``block=1``) charges each engine for the other's cache
    pollution, and the faster one loses more to it: cleaneval at load 5, h2m 532 pages per CPU-s
    interleaved per page, 668 in blocks of 32; trafilatura 51.9 and 51.5.
    """
    engine = get_extractor("h2m")
    traf = _trafilatura() if use_trafilatura else None
    names = [*RENDERINGS, *(["trafilatura"] if traf else [])]
    totals = {n: TokenScore() for n in names}
    per_page: list[dict[str, Any]] = []
    cpu = {"h2m": 0.0, "md-read": 0.0, "trafilatura": 0.0}
    # What the Markdown's extra tokens are: targets stripped, then images too (micro counts).
    md_parts = {"markdown without link targets": TokenScore(), "markdown without targets and images": TokenScore()}
    if pages:
        engine.extract(pages[0].html, pages[0].url)
        if traf is not None:
            traf[0](pages[0].html, pages[0].url)
    block = max(1, block)
    started = time.perf_counter()
    for b, first in enumerate(range(0, len(pages), block)):
        if time.perf_counter() - started > max_seconds:
            break
        chunk = pages[first:first + block]
        outs: list[dict[str, str]] = [{} for _ in chunk]

        def ours(chunk: list[Page] = chunk, outs: list[dict[str, str]] = outs) -> None:
            t0 = time.process_time()
            done = [engine.extract(page.html, page.url) for page in chunk]
            cpu["h2m"] += time.process_time() - t0
            for out, x in zip(outs, done, strict=True):
                out["text"], out["markdown"] = x.text, x.markdown
            t0 = time.process_time()
            for out in outs:
                out["md-read"] = markdown_words(out["markdown"])
            cpu["md-read"] += time.process_time() - t0

        def theirs(chunk: list[Page] = chunk, outs: list[dict[str, str]] = outs) -> None:
            if traf is None:
                return
            t0 = time.process_time()
            done = [traf[0](page.html, page.url) for page in chunk]
            cpu["trafilatura"] += time.process_time() - t0
            for out, text in zip(outs, done, strict=True):
                out["trafilatura"] = text

        for step in (ours, theirs) if b % 2 == 0 else (theirs, ours):
            step()
        for page, out in zip(chunk, outs, strict=True):
            row: dict[str, Any] = {"corpus": page.corpus, "id": page.id, "url": page.url,
                                   "expected": sum(tokens(page.gold).values())}
            for n in names:
                s = score_text(out[n], page.gold)
                totals[n].add(s)
                row[n] = s
            md = out["markdown"]
            md_parts["markdown without link targets"].add(score_text(_TARGET.sub("]", md), page.gold))
            md_parts["markdown without targets and images"].add(
                score_text(_TARGET.sub("]", _IMAGE.sub(" ", md)), page.gold))
            per_page.append(row)
    return {"names": names, "totals": totals, "pages": per_page, "cpu": cpu,
            "md_parts": md_parts, "trafilatura": traf[1] if traf else None}


def _summary(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    out = {}
    for n in result["names"]:
        f1s = [r[n].f1 for r in result["pages"]]
        t = result["totals"][n]
        out[n] = {
            "pages": len(f1s), "f1": round(t.f1, 4), "precision": round(t.precision, 4), "recall": round(t.recall, 4),
            "mean_f1": round(statistics.fmean(f1s), 4) if f1s else 0.0,
            "p10_f1": round(_pct(f1s, 0.1), 4), "worst_decile_f1": round(_worst_decile(f1s), 4),
        }
    return out


def _losses(result: dict[str, Any], worst: int) -> list[dict[str, Any]]:
    if result["trafilatura"] is None:
        rows = sorted(result["pages"], key=lambda r: r["text"].f1)[:worst]
        return [{"id": r["id"], "url": r["url"], "text_f1": round(r["text"].f1, 3)} for r in rows]
    rows = sorted(result["pages"], key=lambda r: r["text"].f1 - r["trafilatura"].f1)[:worst]
    out = []
    for r in rows:
        o, t = r["text"], r["trafilatura"]
        out.append({
            "id": r["id"], "url": r["url"], "kind": failure_kind(o, t),
            "text": [round(o.f1, 3), round(o.precision, 3), round(o.recall, 3)],
            "trafilatura": [round(t.f1, 3), round(t.precision, 3), round(t.recall, 3)],
            "markdown_f1": round(r["markdown"].f1, 3), "extracted": o.extracted, "expected": o.expected,
        })
    return out


def _kinds(result: dict[str, Any]) -> dict[str, int]:
    """Failure kinds over every page where ccrawl's text F1 is 0.05 or more below trafilatura's."""
    counts: dict[str, int] = {}
    if result["trafilatura"] is None:
        return counts
    for r in result["pages"]:
        if r["trafilatura"].f1 - r["text"].f1 >= 0.05:
            k = failure_kind(r["text"], r["trafilatura"])
            counts[k] = counts.get(k, 0) + 1
    return counts


def main() -> int:
    """Run the chosen corpora and print one table per corpus, the losses and the failure kinds."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=sorted(BY_NAME),
                    help="only these (default: every tunable one)")
    ap.add_argument("--held-out", action="store_true", help=f"also the held-out corpus ({', '.join(HELD_OUT)})")
    ap.add_argument("--no-trafilatura", action="store_true", help="ccrawl's renderings only")
    ap.add_argument("--every", type=int, default=1, help="every N-th page (deterministic)")
    ap.add_argument("--block", type=int, default=32, help="pages per engine turn (speed; 1 = page by page)")
    ap.add_argument("--max-seconds", type=float, default=600, help="per corpus; pages done are reported")
    ap.add_argument("--worst", type=int, default=5, help="pages listed where ccrawl loses most")
    ap.add_argument("--json", type=Path, help="write the summaries, losses and kinds here")
    ap.add_argument("--pages-json", type=Path, help="write one line per page and rendering (JSON lines)")
    args = ap.parse_args()
    names = list(args.corpus or TUNABLE)
    if args.held_out:
        names += [n for n in HELD_OUT if n not in names]
    report: dict[str, Any] = {}
    lines_out = []
    all_rows = []
    for name in names:
        try:
            pages = load(name)[:: max(1, args.every)]
        except CorporaUnavailable as exc:
            print(f"{name}: skipped: {exc}", file=sys.stderr)
            continue
        result = run_corpus(pages, not args.no_trafilatura, args.max_seconds, args.block)
        summary = _summary(result)
        done = len(result["pages"])
        held = "  HELD OUT" if BY_NAME[name].held_out else ""
        print(f"\n== {name} ({BY_NAME[name].kind}): {done} of {len(pages)} pages, sha256 "
              f"{corpus_digest(pages)[:16]}{held}")
        print(f"{'rendering':34s} {'F1':>6s} {'P':>6s} {'R':>6s} {'mean':>6s} {'p10':>6s} {'worst10':>7s}"
              f" {'pages/s':>8s}")
        cpu = result["cpu"]
        for n, s in summary.items():
            secs = cpu["trafilatura"] if n == "trafilatura" else cpu["h2m"] + (cpu["md-read"] if n == "md-read" else 0)
            label = result["trafilatura"] if n == "trafilatura" else f"{get_extractor('h2m').label} {n}"
            rate = done / secs if secs else 0.0
            s["pages_per_s"] = round(rate, 1)
            print(f"{label:34s} {s['f1']:6.4f} {s['precision']:6.4f} {s['recall']:6.4f} {s['mean_f1']:6.4f}"
                  f" {s['p10_f1']:6.3f} {s['worst_decile_f1']:7.3f} {rate:8.1f}")
        for label, t in result["md_parts"].items():
            print(f"  {label:32s} {t.f1:6.4f} {t.precision:6.4f} {t.recall:6.4f}")
        if result["trafilatura"] and cpu["h2m"]:
            print(f"  h2m {cpu['trafilatura'] / cpu['h2m']:.1f}x trafilatura's pages/s per core")
        losses = _losses(result, args.worst)
        kinds = _kinds(result)
        if kinds:
            by_kind = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            print(f"  pages 0.05+ F1 below trafilatura, by kind: {by_kind}")
        for r in losses:
            print(f"  loss: {r}")
        report[name] = {"pages": done, "sha256": corpus_digest(pages), "held_out": BY_NAME[name].held_out,
                        "summary": summary, "losses": losses, "kinds": kinds,
                        "markdown_parts": {k: v.as_dict() for k, v in result["md_parts"].items()},
                        "cpu_s": {k: round(v, 2) for k, v in cpu.items()}}
        for r in result["pages"]:
            all_rows.append({k: (v.as_dict() if isinstance(v, TokenScore) else v) for k, v in r.items()})
        lines_out.append(name)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if args.pages_json:
        args.pages_json.write_text("".join(json.dumps(r) + "\n" for r in all_rows))
    return 0 if lines_out else 1


if __name__ == "__main__":
    raise SystemExit(main())
