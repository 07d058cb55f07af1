"""The data model of extraction: the budget an engine runs under and the result it returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits one document is extracted under; a page that trips one is cut off and noted.

    Every limit bounds time or memory for a pathological page, so a pool worker never hangs
    and never grows without bound:

    * ``max_bytes``: input beyond this many bytes (characters for ``str`` input) is dropped
      before parsing. 10 MB matches the fetch body cap, so fetched pages are never cut.
    * ``max_seconds``: wall-clock time for the whole extraction, checked every few hundred
      nodes while rendering, so a page stops within a fraction of a millisecond of the limit
      once rendering runs. Decoding and parsing cannot be interrupted; they are bounded by
      ``max_bytes`` and ``max_block_nesting`` instead (10 MB parse in ~0.4 s here).
    * ``max_nodes``: DOM nodes the renderer visits.
    * ``max_depth``: element nesting the renderer descends into; deeper content is kept as
      flat text rather than dropped.
    * ``max_block_nesting``: block tags (``div``, ``section``, ...) nested deeper than this are
      removed before parsing, text kept (lexbor is quadratic in block depth: 100,000 nested
      ``<div>`` would take 20 s in C, out of reach of the time budget).
    * ``max_table_cells``: cells rendered per table; the rest of the table is dropped.
    * ``max_chars``: characters of Markdown produced.
    * ``max_outlinks``: absolute links collected into ``outlinks``; 0 collects none, for a caller
      that stores no links (the recrawl's extract processes, ``markdown export``): resolving
      every ``href`` of a page is ~0.14 ms of its ~1.45 ms with h2m.
    """

    max_bytes: int = 10_000_000
    max_seconds: float = 1.0
    max_nodes: int = 300_000
    max_depth: int = 120
    max_block_nesting: int = 4000
    max_table_cells: int = 20_000
    max_chars: int = 2_000_000
    max_outlinks: int = 10_000


DEFAULT_BUDGET = Budget()
#: The default limits, no links collected: for callers that keep no ``outlinks``.
NO_LINKS_BUDGET = Budget(max_outlinks=0)


@dataclass(slots=True)
class Extraction:
    """What an engine made of one document.

    ``language`` is ISO 639-3 (``deu``, ``eng``, ...) detected in ``text``; an empty string with
    ``language_confidence`` 0.0 means *unknown*: no text, or too little or too mixed to tell.
    ``charset_source`` says which step chose ``charset``: ``header`` (Content-Type),
    ``bom``, ``meta`` (``<meta charset>`` / ``http-equiv``), ``detector`` (uchardet via
    resiliparse), or ``given`` when the caller passed ``str``. ``notes`` lists every guard
    that tripped (``size``, ``nesting``, ``time``, ``nodes``, ``depth``, ``table``, ``chars``),
    and decoding repairs (``charset: ...``); ``truncated`` is true when a guard cut content.
    """

    extractor: str
    markdown: str = ""
    text: str = ""
    title: str = ""
    description: str = ""
    canonical: str = ""
    word_count: int = 0
    outlinks: list[str] = field(default_factory=list)
    language: str = ""
    language_confidence: float = 0.0
    simhash: int | None = None
    charset: str = ""
    charset_source: str = ""
    declared_language: str = ""
    main_content: bool = False
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def as_record(self) -> dict[str, object]:
        """The row form: capture-schema column names where they exist."""
        return {
            "title": self.title,
            "description": self.description,
            "canonical": self.canonical,
            "markdown": self.markdown,
            "markdown_length": len(self.markdown.encode("utf-8")),
            "text": self.text,
            "text_length": len(self.text.encode("utf-8")),
            "word_count": self.word_count,
            "language": self.language,
            "language_confidence": self.language_confidence,
            "simhash": self.simhash,
            "extractor": self.extractor,
            "charset": self.charset,
            "charset_source": self.charset_source,
            "declared_language": self.declared_language,
            "main_content": self.main_content,
            "truncated": self.truncated,
            "notes": list(self.notes),
            "outlinks": list(self.outlinks),
        }
