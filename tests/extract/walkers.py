"""The engines run with one walk or the other: the compiled ``h2mwalk`` or its pure-Python twin."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ccrawl.extract import engines

URL = "https://example.com/news/story.html"


@contextmanager
def renderer_as(cls: Any) -> Iterator[None]:
    """Run the engines with ``cls`` as their renderer (the import-time choice, swapped back after)."""
    saved = engines.Renderer
    engines.Renderer = cls
    try:
        yield
    finally:
        engines.Renderer = saved
