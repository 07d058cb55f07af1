"""Fixtures of the extraction tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl.extract.articles import Article, CorpusUnavailable, fetch, load_articles


@pytest.fixture(scope="session")
def html_eval(corpus_dir: Path) -> Path:
    """The html-eval pages and their labels; tests that need them skip, saying why, when absent."""
    path = corpus_dir / "html-eval"
    if not (path / "evaldata.json").is_file():
        pytest.skip(f"html-eval corpus not found under {corpus_dir}")
    return path


@pytest.fixture(scope="session")
def corpus2() -> list[Article]:
    """The second corpus's articles, fetched into its cache if need be; skips, saying why, if it cannot be."""
    try:
        return load_articles(fetch())
    except CorpusUnavailable as exc:
        pytest.skip(f"second corpus unavailable: {exc}")
