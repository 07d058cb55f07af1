"""A readability-style main-content pass: score paragraphs' parents, keep the best and its kin.

The scoring follows Arc90 Readability (as go-readability and readability-lxml do): every
paragraph-like element with 25+ characters adds ``1 + commas + min(chars / 100, 3)`` to its
parent and half that to its grandparent; a candidate starts from a tag weight and a class/id
weight (+25 for content words, -25 for furniture words) and is discounted by its link
density. The best candidate and the siblings that score at least a fifth of it (or are plain
prose paragraphs) are rendered, in document order, by the same Markdown renderer as ``h2m``.
"""

from __future__ import annotations

import re
from typing import Any

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


def _class_weight(node: Node) -> int:
    attrs = node.attributes
    weight = 0
    for value in (attrs.get("class"), attrs.get("id")):
        if value:
            if _NEGATIVE.search(value):
                weight -= 25
            if _POSITIVE.search(value):
                weight += 25
    return weight


def _link_density(node: Node, chars: int) -> float:
    if chars == 0:
        return 1.0
    linked = sum(len(a.text(deep=True)) for a in node.css("a"))
    return min(linked / chars, 1.0)


def select_readable(body: Node) -> list[Node]:
    """The nodes readability would keep, in document order; ``[body]`` when nothing scores."""
    scores: dict[int, float] = {}
    nodes: dict[int, Node] = {}

    def credit(node: Node | None, amount: float) -> None:
        if node is None or node.tag in ("html", "-document"):
            return
        key = node.mem_id
        if key not in scores:
            nodes[key] = node
            scores[key] = _TAG_WEIGHT.get(node.tag, 0) + _class_weight(node)
        scores[key] += amount

    for para in body.css("p, pre, td"):
        text = para.text(deep=True)
        if len(text.strip()) < 25:
            continue
        amount = 1 + text.count(",") + text.count("，") + min(len(text) // 100, 3)
        parent = para.parent
        credit(parent, amount)
        credit(parent.parent if parent is not None else None, amount / 2)
    if not scores:
        return [body]
    chars_of: dict[int, int] = {}
    final: dict[int, float] = {}
    for key, score in scores.items():
        chars = len(nodes[key].text(deep=True))
        chars_of[key] = chars
        final[key] = score * (1 - _link_density(nodes[key], chars))
    top_key = max(final, key=lambda k: final[k])
    top = nodes[top_key]
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
