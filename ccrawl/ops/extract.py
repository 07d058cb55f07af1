"""Extraction operations over local HTML: render files with an engine, list the engines.

``extract.file`` yields one record per path (the capture schema's text columns plus charset,
notes and outlinks); a path that cannot be read yields ``{"path": ..., "error": ...}`` and the
stream carries on. ``extract.engines`` lists every engine with its ``name@version`` and whether
it can run here (trafilatura is an optional extra).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ccrawl.errors import CcrawlError
from ccrawl.ops import operation
from ccrawl.ops.caps import Limit, ReadPath, Value

Record = dict[str, Any]

FILE_COLUMNS = (
    "path", "title", "word_count", "language", "language_confidence", "charset", "charset_source",
    "main_content", "truncated", "extractor", "markdown_length", "text_length", "simhash",
)  # fmt: skip


@operation(
    "extract.file",
    summary="Render local HTML files to Markdown and text with an extraction engine",
    columns=FILE_COLUMNS,
)
def extract_file(
    paths: ReadPath[Iterable[str]],
    url: Value[str] = "",
    extractor: Value[str] = "h2m",
    content_type: Value[str] = "",
    max_bytes: Limit[int] = 10_000_000,
    max_seconds: Limit[float] = 1.0,
) -> Iterator[Record]:
    """One record per file; ``url`` is the base for relative links (default: none)."""
    from ccrawl.extract.engines import get_extractor
    from ccrawl.extract.model import Budget

    engine = get_extractor(extractor)
    budget = Budget(max_bytes=max_bytes, max_seconds=max_seconds)
    for path in paths:
        try:
            with open(path, "rb") as fh:
                # Read one byte past the budget, so the size note can say the page was cut.
                body = fh.read(max_bytes + 1)
        except OSError as exc:
            yield {"path": path, "error": f"cannot read {path}: {exc.strerror or exc}"}
            continue
        try:
            out = engine.extract(body, url or Path(path).resolve().as_uri(), content_type=content_type or None,
                                 budget=budget)  # fmt: skip
        except CcrawlError as exc:
            yield {"path": path, "error": str(exc)}
            continue
        yield {"path": path, **out.as_record()}


@operation(
    "extract.engines",
    summary="Extraction engines, their name@version, and whether each can run here",
    columns=("name", "label", "available", "note"),
)
def extract_engines() -> Iterator[Record]:
    """Every engine of ``ccrawl.extract``; an optional one that is missing says how to get it."""
    from ccrawl.extract.engines import ENGINES, get_extractor

    for name in ENGINES:
        try:
            engine = get_extractor(name)
        except CcrawlError as exc:
            yield {"name": name, "label": "", "available": False, "note": str(exc)}
            continue
        yield {"name": name, "label": engine.label, "available": True, "note": ""}
