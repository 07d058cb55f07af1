"""An extract process: renders HTML rows to Markdown and text between the fetch and the writers.

Reads rows from its ring (every fetch process writes into it), renders the ones that are HTML
with the run's engine (``ccrawl.extract.get_extractor``; title + text with selectolax when that
package is absent), and passes every row on to the writers round-robin. A row that is not HTML,
failed, or came back 304 passes through with ``extractor`` empty, which is how a reader tells
"nobody rendered this" from "rendered to nothing". Time is split three ways for the summary:
rendering, waiting for the sink, and idle (waiting for input).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Protocol, TypeAlias

from ccrawl.fetch.decoding import ContentDecodeError, decode_content, looks_like_html
from ccrawl.procs import child_setup, peak_rss_mb
from ccrawl.recrawl.messages import CaptureRow, EventSink, ExtractReport, Ready
from ccrawl.recrawl.ring import Ring
from ccrawl.recrawl.stats import ExtractStats

RENDER_LIMIT = 10 * 1024 * 1024

#: The extraction columns an engine fills (:data:`ccrawl.recrawl.schema.EXTRACTION_COLUMNS`); Markdown
#: and text may come as UTF-8 bytes, a missing value as None (the column's empty value).
Rendered: TypeAlias = dict[str, str | bytes | int | float | None]


class Engine(Protocol):
    label: str

    def render(self, body: bytes, url: str, content_type: str) -> Rendered: ...


class _LibraryEngine:
    """``ccrawl.extract``'s engines: Markdown, text, title, language, simhash."""

    def __init__(self, name: str) -> None:
        from ccrawl.extract.engines import get_extractor
        from ccrawl.extract.model import NO_LINKS_BUDGET

        self._engine = get_extractor(name)
        self._budget = NO_LINKS_BUDGET  # the capture row has no links column: resolving them is wasted
        self.label = self._engine.label

    def render(self, body: bytes, url: str, content_type: str) -> Rendered:
        out = self._engine.extract(body, url, content_type=content_type or None, budget=self._budget)
        # Markdown and text leave as UTF-8, with their lengths: encoded once here, they cross
        # the ring as bytes (a copy, where a str is encoded by pickle and decoded again) and go
        # into the writer's string columns as they are.
        markdown, text = out.markdown.encode("utf-8"), out.text.encode("utf-8")
        return {"markdown": markdown, "markdown_length": len(markdown), "text": text, "text_length": len(text),
                "title": out.title, "word_count": out.word_count, "language": out.language,
                "language_confidence": out.language_confidence, "simhash": out.simhash,
                "extractor": out.extractor}


class _TitleTextEngine:
    """Fallback when the extraction package is missing: title and plain text via selectolax."""

    label = "selectolax-text@1"

    def render(self, body: bytes, url: str, content_type: str) -> Rendered:
        from selectolax.lexbor import LexborHTMLParser

        tree = LexborHTMLParser(body)
        tree.strip_tags(["script", "style", "template", "svg", "noscript"])
        title_node = tree.css_first("title")
        title = title_node.text(strip=True) if title_node is not None else ""
        root = tree.body if tree.body is not None else tree.root
        text = root.text(separator="\n", strip=True) if root is not None else ""
        return {"title": title, "text": text, "word_count": len(text.split()), "extractor": self.label}


def make_engine(name: str) -> Engine:
    """The named engine from ``ccrawl.extract``; the title+text fallback when it cannot be imported."""
    try:
        return _LibraryEngine(name)
    except ImportError:
        return _TitleTextEngine()


def engine_label(name: str) -> str:
    """``name@version`` of the engine a run with ``--extractor name`` uses (for provenance)."""
    return make_engine(name).label


def render_row(engine: Engine, row: CaptureRow, body: bytes) -> None:
    """Add the extraction columns to ``row`` when it is an HTML page with a body."""
    cols = row.columns
    if cols["error"] or cols["unchanged"] or not body:
        return
    try:
        html = decode_content(body, row.header.content_encoding, RENDER_LIMIT)
    except ContentDecodeError as exc:
        _note(cols, "extract_error", str(exc))
        return
    if not looks_like_html(cols["content_type"], html):
        return
    try:
        cols.update(engine.render(html, cols["final_url"] or cols["url"], cols["content_type"]))
    except Exception as exc:  # one pathological page must not end the run: note it, keep the row
        _note(cols, "extract_error", f"{type(exc).__name__}: {exc}")


def _note(cols: dict[str, Any], key: str, value: str) -> None:
    extra = json.loads(cols["meta_json"] or "{}")
    extra[key] = value
    cols["meta_json"] = json.dumps(extra, separators=(",", ":"), ensure_ascii=False)


#: Rendered rows are announced to the writers at most this far apart (and at the end of every
#: batch read), so a writer wakes per batch of rows rather than once per row.
_ANNOUNCE_EVERY_S = 0.02


def _send(ring: Ring, blob: bytes, body: bytes) -> None:
    """Copy a row into a writer's ring, its descriptor held for :func:`_announce`; wait when full."""
    if not ring.try_put(blob, body, defer=True):
        ring.announce()  # held rows must reach the writer before waiting for the room they hold
        ring.put(blob, body)


def _announce(rings: list[Ring]) -> None:
    for ring in rings:
        ring.announce()


def extract_main(idx: int, ring_in: Ring, rings_out: list[Ring], events: EventSink, engine_name: str,
                 upstream: int) -> None:
    """Entry point of extract process ``idx``; ``upstream`` fetch processes feed its ring."""
    child_setup(f"extract-{idx}")
    from ccrawl.profiling.session import heap_profile

    with heap_profile(f"extract-{idx}"):
        extract_loop(idx, ring_in, rings_out, events, make_engine(engine_name), upstream)


def extract_loop(idx: int, ring_in: Ring, rings_out: list[Ring], events: EventSink, engine: Engine,
                 upstream: int) -> None:
    """The extract loop: rows from ``ring_in``, rendered, round-robin into ``rings_out``; ends at
    ``upstream`` EOFs. ``events`` needs only ``put``, so it runs alone in a test."""
    ppid = os.getppid()
    eofs = rendered = rows = 0
    busy = sink_wait = 0.0
    started = last = time.monotonic()
    cpu0 = time.process_time()
    k = 0
    announced = time.perf_counter()
    events.put(Ready("extract", idx, os.getpid()))

    def stats() -> ExtractStats:
        return ExtractStats(rows=rows, rendered=rendered, busy_s=busy, sink_wait_s=sink_wait,
                            wall_s=time.monotonic() - started, cpu_s=time.process_time() - cpu0,
                            peak_rss_mb=peak_rss_mb())

    while eofs < upstream:
        descs = ring_in.read_descriptors(timeout=0.5)
        if descs is None or os.getppid() != ppid:
            os._exit(0)
        for desc in descs:
            if Ring.is_eof(desc):
                eofs += 1
                continue
            blob, body = ring_in.read(desc)
            ring_in.release(desc)
            t0 = time.perf_counter()
            row = CaptureRow.unpack(blob)
            render_row(engine, row, body)
            rendered += bool(row.columns.get("extractor"))
            rows += 1
            t1 = time.perf_counter()
            _send(rings_out[k % len(rings_out)], row.pack(), body)
            k += 1
            busy += t1 - t0
            sink_wait += time.perf_counter() - t1
            if t1 - announced > _ANNOUNCE_EVERY_S:
                _announce(rings_out)
                announced = t1
        _announce(rings_out)
        now = time.monotonic()
        if now - last > 1.0:
            events.put(ExtractReport(idx, stats(), False))
            last = now
    for ring in rings_out:
        ring.put_eof()
    events.put(ExtractReport(idx, stats(), True))
