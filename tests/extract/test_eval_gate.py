"""Quality gate: h2m's snippet F1, recall and precision on html-eval never fall below pinned floors.

The floors live in ``eval_baseline.json`` beside this file, pinned together with the sha256 of
the corpus annotations. They are raised (and, with ``--allow-lower --reason``, lowered) only by
``python tests/extract/pin_eval_floors.py``, which records every change in the file's history;
this test refuses floors below the highest ever pinned unless that lowering is on record.
The whole corpus is scored (990 pages, a few seconds), so no sampling is involved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccrawl.extract.engines import get_extractor
from ccrawl.testing.extracteval.evaluate import Score, corpus_digest, load_pages, sample, score_pages

BASELINE = json.loads((Path(__file__).parent / "eval_baseline.json").read_text())
METRICS = ("f1", "recall", "precision")


@pytest.fixture(scope="module")
def measured(html_eval: Path) -> Score:
    extractor = get_extractor(BASELINE["engine"])
    total = Score()
    pages = sample(load_pages(html_eval), int(BASELINE["sample_every"]))
    for _, s in score_pages(pages, html_eval, lambda html, url: extractor.extract(html, url).text):
        total.add(s)
    return total


def test_corpus_is_the_one_the_floors_were_pinned_on(html_eval: Path) -> None:
    assert corpus_digest(html_eval) == BASELINE["corpus_sha256"], (
        "html-eval annotations changed: re-pin with tests/extract/pin_eval_floors.py"
    )


@pytest.mark.parametrize("metric", METRICS)
def test_h2m_stays_above_its_floor(measured: Score, metric: str, html_eval: Path) -> None:
    assert corpus_digest(html_eval) == BASELINE["corpus_sha256"]
    value = getattr(measured, metric)
    floor = BASELINE["floors"][metric]
    assert value >= floor, f"h2m {metric} {value:.4f} fell below the pinned floor {floor} ({measured.as_dict()})"


def test_floors_were_never_lowered_without_a_recorded_reason() -> None:
    history = BASELINE["history"]
    assert history, "eval_baseline.json has no history: pin it with tests/extract/pin_eval_floors.py"
    for metric in METRICS:
        highest = max(entry["floors"][metric] for entry in history)
        current = BASELINE["floors"][metric]
        if current < highest:
            lowering = [e for e in history if metric in e.get("lowered", []) and e.get("reason")]
            assert lowering, f"floor for {metric} went from {highest} to {current} without --allow-lower --reason"


def test_scorer_counts_snippets_as_trafilatura_does() -> None:
    from ccrawl.testing.extracteval.evaluate import EvalPage, score_page

    page = EvalPage("u", "f", ("kept  text", "missing"), ("Impressum", "absent"))
    s = score_page("some kept\ntext and Impressum", page)
    assert (s.tp, s.fn, s.fp, s.tn) == (1, 1, 1, 1)
    assert s.recall == 0.5 and s.leakage == 0.5 and s.precision == 0.5 and s.f1 == 0.5
