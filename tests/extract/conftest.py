"""Fixtures of the extraction tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ccrawl.extract import engines, render
from ccrawl.testing.extracteval.articles import Article, CorpusUnavailable, fetch, load_articles
from tests.conftest import native_or_skip
from tests.extract.walkers import URL, renderer_as


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


@pytest.fixture(params=["twin", "native"])
def text_of(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """The text the real ``h2m`` engine gives for a body, with the twin walk and with the compiled one."""
    cls = render.PyRenderer if request.param == "twin" else native_or_skip("h2mwalk").Renderer

    def run(body: str) -> str:
        with renderer_as(cls):
            return engines.HtmlExtractor("h2m").extract(f"<html><body>{body}</body></html>", URL).text

    return run
