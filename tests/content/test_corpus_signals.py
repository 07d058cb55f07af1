"""The signals on real pages of the shared corpus: ordinary articles are neither spam nor parked."""

from __future__ import annotations

import json
from pathlib import Path

from ccrawl.content.signals import quality_signals
from ccrawl.extract.decode import decode_body
from ccrawl.extract.engines import get_extractor

#: Pages scored per run: a fixed slice of the corpus keeps the test at a few seconds.
SAMPLE = 300


def test_real_articles_are_rarely_spam_and_never_parked(corpus_dir: Path) -> None:
    root = corpus_dir / "html-eval"
    evaldata = json.loads((root / "evaldata.json").read_text(encoding="utf-8"))
    url_of = {Path(v["file"]).name: u for u, v in evaldata.items()}
    engine = get_extractor("h2m")
    spammy: list[str] = []
    parked: list[str] = []
    files = sorted((root / "pages").glob("*.html"))[:SAMPLE]
    for f in files:
        html = decode_body(f.read_bytes()).text
        url = url_of.get(f.name, "http://corpus.example/")
        s = quality_signals(html, engine.extract(html, url), url)
        if s.spam_score >= 0.5:
            spammy.append(f"{f.name} {s.spam_cues}")
        if s.parked:
            parked.append(f"{f.name} {s.parked_cues}")
    assert len(files) == SAMPLE
    assert parked == []
    assert len(spammy) <= SAMPLE // 100, spammy
