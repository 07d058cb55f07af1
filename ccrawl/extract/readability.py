"""A readability-style main-content pass: score paragraphs' parents, keep the best and its kin.

The scoring follows Arc90 Readability (as go-readability and readability-lxml do): every
paragraph-like element with 25+ characters adds ``1 + commas + min(chars / 100, 3)`` to its
parent and half that to its grandparent; a candidate starts from a tag weight and a class/id
weight (+25 for content words, -25 for furniture words) and is discounted by its link
density. The best candidate and the siblings that score at least a fifth of it (or are plain
prose paragraphs) are rendered, in document order, by the same Markdown renderer as ``h2m``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ccrawl.extract.tree import link_text_length, readable_scores

Node = Any

_POSITIVE = re.compile(r"article|body|content|entry|hentry|main|page|post|text|blog|story", re.I)
_NEGATIVE = re.compile(
    r"combx|comment|com-|contact|foot|footer|footnote|masthead|media|meta|outbrain|promo|related|"
    r"scroll|shoutbox|sidebar|sponsor|shopping|tags|tool|widget|nav|menu|share|social|cookie|banner|ad-",
    re.I,
)
_TAG_WEIGHT = {
    "div": 5, "article": 8, "section": 3, "main": 5, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
}  # fmt: skip


@functools.lru_cache(maxsize=20_000)
def _class_weight(cls: str | None, ident: str | None) -> int:
    """+25 for a content word, -25 for a furniture word, in the class and in the id.

    Cached: a page repeats its class names (every menu item, every teaser), and so do the
    pages of one site, while the two case-insensitive searches cost a few microseconds.
    """
    weight = 0
    for value in (cls, ident):
        if value:
            if _NEGATIVE.search(value):
                weight -= 25
            if _POSITIVE.search(value):
                weight += 25
    return weight


def _link_density(node: Node, chars: int) -> float:
    if chars == 0:
        return 1.0
    return min(link_text_length(node) / chars, 1.0)


def select_readable(body: Node) -> list[Node]:
    """The nodes readability would keep, in document order; ``[body]`` when nothing scores."""
    final, top = readable_scores(body, _TAG_WEIGHT, _class_weight)
    if top is None:
        return [body]
    top_key = top.mem_id
    parent = top.parent
    if parent is None:
        return [top]
    threshold = max(10.0, final[top_key] * 0.2)
    kept: list[Node] = []
    for sib in parent.iter():
        if sib.mem_id == top_key:
            kept.append(sib)
            continue
        key = sib.mem_id
        if key in final and final[key] >= threshold:
            kept.append(sib)
        elif sib.tag == "p":
            text = sib.text(deep=True)
            chars = len(text)
            density = _link_density(sib, chars)
            if (chars > 80 and density < 0.25) or (0 < chars <= 80 and density == 0 and re.search(r"\.( |$)", text)):
                kept.append(sib)
    return kept
