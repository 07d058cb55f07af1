"""DOM questions the engines ask of a parsed page: text and link lengths, head fields, candidates.

Text lengths, link text, furniture, the head fields and hrefs, ``h2m``'s container candidates
and readability's paragraph scores. Each function answers through selectolax's API;
``ccrawl._native.lxbtree`` (csrc/lxbtree.pyx) gives the same answers by walking lexbor's tree
in C, without building the strings and node objects these calls make only to count or test
them. :mod:`ccrawl.accel` picks one; the parity tests hold them equal on the whole corpus and
on generated hostile HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ccrawl import accel
from ccrawl.extract.boilerplate import has_boilerplate_role, is_hidden

Node = Any

#: What ``head_and_hrefs`` reports from the head (the native walk tests the same selectors
#: itself); the engines keep the first non-empty value per key.
HEAD_FIELDS = (
    'title, meta[name="description"], meta[property="og:title"], meta[property="og:description"], '
    'link[rel="canonical"], base[href]'
)


def text_length_py(node: Node) -> int:
    """``len(node.text(deep=True))``: the characters of every text node under ``node``."""
    return len(node.text(deep=True))


def link_text_length_py(node: Node) -> int:
    """Characters of link text under ``node`` (``node`` included when it is an ``<a>``)."""
    return sum(len(a.text(deep=True)) for a in node.css("a"))


_FURNITURE_TAGS = frozenset({"header", "footer", "nav", "aside", "dialog"})


def in_furniture_py(node: Node) -> bool:
    """True when ``node`` or an ancestor is a header, footer, menu, dialog or hidden element."""
    while node is not None and node.tag not in ("body", "html"):
        if node.tag in _FURNITURE_TAGS:
            return True
        attrs = node.attributes
        if attrs and (is_hidden(attrs) or has_boilerplate_role(attrs)):
            return True
        node = node.parent
    return False


def head_and_hrefs_py(root: Node) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(key, raw value) for each :data:`HEAD_FIELDS` match, and every ``a[href]`` value.

    ``root`` is ``tree.root``; both lists are in document order, a node listed once for each
    selector it matches (as lexbor reports it).
    """
    entries: list[tuple[str, str | None]] = []
    for node in root.css(HEAD_FIELDS):
        tag = node.tag
        attrs = node.attributes
        if tag == "title":
            entries.append(("title", node.text(deep=True)))
        elif tag == "meta":
            entries.append(((attrs.get("name") or attrs.get("property") or "").lower(), attrs.get("content")))
        elif tag == "link":
            entries.append(("canonical", attrs.get("href")))
        else:
            entries.append(("base", attrs.get("href")))
    hrefs = [a.attributes.get("href") or "" for a in root.css("a[href]")]
    return entries, hrefs


def scored_candidates_py(
    body: Node, query: str, min_chars: int, share_of_best: float
) -> tuple[int, list[tuple[int, Node]]]:
    """``body``'s text length, and the main-content candidates worth weighing: (chars, node).

    Every ``query`` match with ``min_chars`` or more, longest first (document order among
    equals); judged by the text that is not link text, skipping candidates inside
    headers, menus and hidden elements costs a walk each, so going down it stops once no
    remaining candidate could reach ``share_of_best`` of the best so far.
    """
    raw: list[tuple[int, Node]] = []
    for node in body.css(query):
        n = len(node.text(deep=True))
        if n >= min_chars:
            raw.append((n, node))
    raw.sort(key=lambda t: -t[0])
    scored: list[tuple[int, Node]] = []
    best_so_far = 0
    for n, node in raw:
        if n < share_of_best * best_so_far:
            break
        if in_furniture_py(node):
            continue
        n -= link_text_length_py(node)
        if n >= min_chars:
            scored.append((n, node))
            best_so_far = max(best_so_far, n)
    return len(body.text(deep=True)), scored


def readable_scores_py(
    body: Node, tag_weight: dict[str, int], class_weight: Callable[[str | None, str | None], int]
) -> tuple[dict[int, float], Node | None]:
    """Readability's final score per scored node (by ``mem_id``) and the best node.

    Every ``p``, ``pre`` and ``td`` with 25+ characters (stripped) adds ``1 + commas +
    min(chars / 100, 3)`` to its parent and half that to its grandparent; a node's score
    starts from ``tag_weight`` and ``class_weight(class, id)`` and is finally discounted by
    its link density. ``({}, None)`` when no paragraph scores.
    """
    scores: dict[int, float] = {}
    nodes: dict[int, Node] = {}

    def credit(node: Node | None, amount: float) -> None:
        if node is None or node.tag in ("html", "-document"):
            return
        key = node.mem_id
        if key not in scores:
            nodes[key] = node
            attrs = node.attributes
            scores[key] = tag_weight.get(node.tag, 0) + class_weight(attrs.get("class"), attrs.get("id"))
        scores[key] += amount

    for para in body.css("p, pre, td"):
        text = para.text(deep=True)
        if len(text.strip()) < 25:
            continue
        amount = 1 + text.count(",") + text.count("\uff0c") + min(len(text) // 100, 3)
        parent = para.parent
        credit(parent, amount)
        credit(parent.parent if parent is not None else None, amount / 2)
    final: dict[int, float] = {}
    for key, score in scores.items():
        chars = len(nodes[key].text(deep=True))
        density = 1.0 if chars == 0 else min(link_text_length_py(nodes[key]) / chars, 1.0)
        final[key] = score * (1 - density)
    return final, nodes[max(final, key=lambda k: final[k])] if final else None


_native = accel.native("lxbtree")
text_length = _native.text_length if _native else text_length_py
link_text_length = _native.link_text_length if _native else link_text_length_py
in_furniture = _native.in_furniture if _native else in_furniture_py
head_and_hrefs = _native.head_and_hrefs if _native else head_and_hrefs_py
scored_candidates = _native.scored_candidates if _native else scored_candidates_py
readable_scores = _native.readable_scores if _native else readable_scores_py
