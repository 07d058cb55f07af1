"""Pre-parse guards: keep pathological markup from reaching the parser's slow paths.

lexbor parses ordinary pages at ~100 MB/s but block nesting is quadratic for it: every new
``<div>`` checks the stack of open elements, so 20,000 nested ``<div>`` take ~0.8 s and 100,000
take ~20 s, and a C call cannot be interrupted by a time budget. Tags nested deeper than the
limit are therefore removed *before* parsing (their text stays, flattened into the ancestor
at the limit), which bounds the parse at a few tens of milliseconds.

The check costs one ``str.count("<")`` on ordinary pages: a document needs at least ``limit``
tags to be nested ``limit`` deep, so pages with fewer tags than twice the limit are never
scanned; larger ones get one regex pass over their block tags.
"""

from __future__ import annotations

import re

from ccrawl import accel

# Block-level tags that do not close themselves (a <p> or <li> closes the previous one, so those
# cannot build depth); case-insensitive like HTML.
BLOCK_NAMES = (
    "div", "section", "article", "aside", "nav", "main", "header", "footer", "blockquote", "ul", "ol", "dl",
    "form", "fieldset", "figure", "details", "center", "menu", "dir", "address", "hgroup", "search",
)  # fmt: skip
_BLOCK_TAG = re.compile(r"<(/?)(?:" + "|".join(BLOCK_NAMES) + r")\b[^>]*>", re.IGNORECASE)
# Where an opening block tag can start: "<name" not followed by an ASCII word byte, case folded
# over ASCII. Every opening tag _BLOCK_TAG finds starts so (its \b also refuses a non-ASCII
# letter after the name, which this counts), so the count bounds the depth _BLOCK_TAG can reach.
_BLOCK_OPEN = re.compile(rb"<(?:" + "|".join(BLOCK_NAMES).encode() + rb")(?![A-Za-z0-9_])", re.IGNORECASE)


def block_opens_py(data: bytes) -> int:
    """How many opening block tags the UTF-8 ``data`` can hold at most (see ``_BLOCK_OPEN``)."""
    return len(_BLOCK_OPEN.findall(data))


def flatten_deep_nesting(
    html: str, limit: int, *, tags: int | None = None, utf8: bytes | None = None
) -> tuple[str, int]:
    """``html`` with tags nested deeper than ``limit`` removed, and how many were removed.

    ``tags`` is ``html.count("<")`` when the caller has it already (the engines count the "<"
    bytes of the UTF-8 input natively, the same number for text that decoded cleanly).
    ``utf8``, ``html`` encoded, lets a page with more tags skip the regex pass when it cannot
    open more than ``limit`` block tags (:func:`block_opens`, counted natively): nesting deeper
    than ``limit`` needs more openings than that. The pass cost 2.8 ms on a 382 KB blog page
    with 9,147 tags, 3,500 of them block tags; the count costs a few hundredths of that.
    """
    if (html.count("<") if tags is None else tags) < 2 * limit:
        return html, 0
    if utf8 is not None and block_opens(utf8) <= limit:
        return html, 0
    depth = 0
    pieces: list[str] = []
    last = 0
    removed = 0
    for m in _BLOCK_TAG.finditer(html):
        closing = bool(m.group(1))
        if closing:
            drop = depth > limit
            depth = max(depth - 1, 0)
        else:
            depth += 1
            drop = depth > limit
        if drop:
            pieces.append(html[last : m.start()])
            last = m.end()
            removed += 1
    if not removed:
        return html, 0
    pieces.append(html[last:])
    return "".join(pieces), removed


block_opens = block_opens_py
_native = accel.native("h2mwalk")
if _native is not None and getattr(_native, "LOADED", False):
    block_opens = _native.block_opens
