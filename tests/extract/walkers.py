"""The engines run with one walk or the other: the compiled ``h2mwalk`` or its pure-Python twin."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ccrawl.extract import engines

URL = "https://example.com/news/story.html"
# two paragraphs of article prose (the rules' tests need text that reads as a story)
PARA = (
    "The harbour authority said on Tuesday that the new quay, built over three years at a cost of "
    "forty million, would open to container ships in the spring, doubling what the port can handle "
    "and bringing some two hundred jobs back to a town that lost its shipyard a decade ago. "
)
PARA2 = (
    "Fishermen, who were promised a berth of their own, said they would wait to see the plans before "
    "deciding whether to move their boats from the old harbour across the bay, where the water is shallow. "
)


@contextmanager
def renderer_as(cls: Any) -> Iterator[None]:
    """Run the engines with ``cls`` as their renderer (the import-time choice, swapped back after)."""
    saved = engines.Renderer
    engines.Renderer = cls
    try:
        yield
    finally:
        engines.Renderer = saved
