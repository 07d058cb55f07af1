"""Shared fixtures: where the shared corpus is, and the twin-parity helper."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ccrawl import accel

REPO = Path(__file__).resolve().parent.parent


def corpus_path() -> Path | None:
    """``$CCRAWL_CORPUS`` or ``../shared/corpus`` beside the repo, when it exists."""
    env = os.environ.get("CCRAWL_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus; tests that need it skip with the reason when it is absent."""
    path = corpus_path()
    if path is None:
        pytest.skip("shared corpus not found: set CCRAWL_CORPUS or place it at ../shared/corpus")
    return path


def native_or_skip(name: str):  # type: ignore[no-untyped-def]
    """The compiled module for a parity test.

    With extensions disabled the native side is skipped (the run with extensions on covers
    it). With them enabled a missing module is a failure, not a skip: a broken build must
    not hide behind its twin.
    """
    if accel.extensions_disabled():
        pytest.skip("CCRAWL_NO_EXTENSIONS is set: only the pure-Python twin runs in this pass")
    module = accel.native(name)
    assert module is not None, f"ccrawl._native.{name} did not import; build with `pip install -e .`"
    return module
