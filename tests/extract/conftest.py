"""Fixtures of the extraction tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def html_eval(corpus_dir: Path) -> Path:
    """The html-eval pages and their labels; tests that need them skip, saying why, when absent."""
    path = corpus_dir / "html-eval"
    if not (path / "evaldata.json").is_file():
        pytest.skip(f"html-eval corpus not found under {corpus_dir}")
    return path
