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
from ccrawl.extract.boilerplate import has_boilerplate_role, is_hidden, names_furniture

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


def _lengths_py(body: Node, wanted: set[int]) -> dict[int, tuple[int, int]] | None:
    """Text length and link text length of each node in ``wanted`` (by ``mem_id``), in one
    post-order walk of ``body`` (linear however the nodes nest); None when a text node holds
    U+FFFD (see :func:`_aggregate_py`)."""
    out: dict[int, tuple[int, int]] = {}
    stack: list[list[Any]] = [[body, body.child, 0, 0]]  # node, next child, length, link
    while stack:
        top = stack[-1]
        child = top[1]
        if child is not None:
            top[1] = child.next
            if child.is_text_node:
                text = child.text(deep=True)
                if "\ufffd" in text:
                    return None
                top[2] += len(text)
            else:
                stack.append([child, child.child, 0, 0])
            continue
        stack.pop()
        node, _, length, link = top
        if node.tag == "a":
            link += length
        if node.mem_id in wanted:
            out[node.mem_id] = (length, link)
        if stack:
            stack[-1][2] += length
            stack[-1][3] += link
    return out


def _in_furniture_memo_py(node: Node, memo: dict[int, bool]) -> bool:
    """``in_furniture_py`` remembering each node's answer, so nested candidates share one climb."""
    path: list[int] = []
    result = False
    while node is not None and node.tag not in ("body", "html"):
        key = node.mem_id
        if key in memo:
            result = memo[key]
            break
        if node.tag in _FURNITURE_TAGS:
            result = True
            break
        attrs = node.attributes
        if attrs and (is_hidden(attrs) or has_boilerplate_role(attrs)):
            result = True
            break
        path.append(key)
        node = node.parent
    for key in path:
        memo[key] = result
    return result


# The walk trusts these tags over their class names (taxonomy classes on the post itself), so
# the candidates do too.
_TRUSTED_TAGS = frozenset({"article", "main", "body", "html"})


def _named_furniture_py(node: Node) -> bool:
    """A candidate (not an ``article``, ``main`` or ``body``) whose role, class or id names furniture."""
    attrs = node.attributes
    return bool(attrs) and node.tag not in _TRUSTED_TAGS and names_furniture(attrs)


def scored_candidates_py(
    body: Node, query: str, min_chars: int, share_of_best: float
) -> tuple[int, list[tuple[int, Node]]]:
    """``body``'s text length, and the main-content candidates worth weighing: (chars, node).

    Every ``query`` match with ``min_chars`` or more, longest first (document order among
    equals); judged by the text that is not link text, skipping candidates inside
    headers, menus and hidden elements and those whose own class or id names furniture
    (``boilerplate.names_furniture``: a comment thread in ``div.post.comments-width``);
    going down it stops once no remaining candidate could
    reach ``share_of_best`` of the best so far. Lengths come from one walk and the furniture
    climbs are shared, so nested candidates cost linear time.
    """
    matches = body.css(query)
    lengths = _lengths_py(body, {node.mem_id for node in matches} | {body.mem_id})
    raw: list[tuple[int, Node]] = []
    for node in matches:
        n = len(node.text(deep=True)) if lengths is None else lengths[node.mem_id][0]
        if n >= min_chars:
            raw.append((n, node))
    raw.sort(key=lambda t: -t[0])
    scored: list[tuple[int, Node]] = []
    best_so_far = 0
    furniture: dict[int, bool] = {}
    for n, node in raw:
        if n < share_of_best * best_so_far:
            break
        if _in_furniture_memo_py(node, furniture) or _named_furniture_py(node):
            continue
        n -= link_text_length_py(node) if lengths is None else lengths[node.mem_id][1]
        if n >= min_chars:
            scored.append((n, node))
            best_so_far = max(best_so_far, n)
    body_chars = len(body.text(deep=True)) if lengths is None else lengths[body.mem_id][0]
    return body_chars, scored


_PARA_TAGS = frozenset({"p", "pre", "td"})


def _aggregate_py(body: Node) -> tuple[dict[int, tuple[int, int, int]], dict[int, tuple[int, int]]] | None:
    """One post-order walk of ``body``: per paragraph (``p``/``pre``/``td``, by ``mem_id``)
    its text length, commas and stripped length; per paragraph parent or grandparent its text
    length and link text length (each ``<a>`` counted as ``node.css("a")`` lists it).

    Each subtree's sums are built from its children's, so the walk is linear however deep the
    paragraphs nest (a table in a table cell, 40,000 deep). None when a text node holds U+FFFD:
    text that is not UTF-8 decodes differently piece by piece than joined, so the caller asks
    selectolax per node instead (the engines hand lexbor UTF-8 only, so pages do not get there).
    """
    paras: dict[int, tuple[int, int, int]] = {}
    parents: dict[int, tuple[int, int]] = {}
    # A frame: node, its tag, next child to visit, then the running sums: length, link, commas,
    # leading and trailing whitespace, whitespace only, a paragraph child, a paragraph grandchild.
    stack: list[list[Any]] = [[body, body.tag, body.child, 0, 0, 0, 0, 0, True, False, False]]
    while stack:
        top = stack[-1]
        child = top[2]
        if child is not None:
            top[2] = child.next
            if child.is_text_node:
                text = child.text(deep=True)
                n = len(text)
                if not n:
                    continue
                if "\ufffd" in text:
                    return None
                lead = n - len(text.lstrip())
                _join(top, n, 0, text.count(",") + text.count("\uff0c"), lead, n - len(text.rstrip()), lead == n)
            else:
                stack.append([child, child.tag, child.child, 0, 0, 0, 0, 0, True, False, False])
            continue
        stack.pop()
        node, tag, _, length, link, commas, lead, trail, allws, para_child, para_grandchild = top
        if tag == "a":
            link += length
            top[4] = link
        if tag in _PARA_TAGS:
            paras[node.mem_id] = (length, commas, 0 if allws else length - lead - trail)
        if para_child or para_grandchild:
            parents[node.mem_id] = (length, link)
        if stack:
            up = stack[-1]
            _join(up, length, link, commas, lead, trail, allws)
            if tag in _PARA_TAGS:
                up[9] = True
            if para_child:
                up[10] = True
    return paras, parents


def _join(acc: list[Any], length: int, link: int, commas: int, lead: int, trail: int, allws: bool) -> None:
    """Append a piece of text (a text node or a finished child's subtree) to frame ``acc``."""
    if acc[8]:
        acc[6] = acc[3] + lead
    acc[7] = acc[7] + length if allws else trail
    acc[8] = acc[8] and allws
    acc[3] += length
    acc[4] += link
    acc[5] += commas


def readable_scores_py(
    body: Node, tag_weight: dict[str, int], class_weight: Callable[[str | None, str | None], int]
) -> tuple[dict[int, float], Node | None]:
    """Readability's final score per scored node (by ``mem_id``) and the best node.

    Every ``p``, ``pre`` and ``td`` with 25+ characters (stripped) adds ``1 + commas +
    min(chars / 100, 3)`` to its parent and half that to its grandparent; a node's score
    starts from ``tag_weight`` and ``class_weight(class, id)`` and is finally discounted by
    its link density. ``({}, None)`` when no paragraph scores. The lengths come from one
    linear walk (:func:`_aggregate_py`).
    """
    scores: dict[int, float] = {}
    nodes: dict[int, Node] = {}
    sums = _aggregate_py(body)
    paras, parents = sums if sums is not None else ({}, {})

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
        info = paras.get(para.mem_id)
        if info is None:
            text = para.text(deep=True)
            info = (len(text), text.count(",") + text.count("\uff0c"), len(text.strip()))
        length, commas, stripped = info
        if stripped < 25:
            continue
        amount = 1 + commas + min(length // 100, 3)
        parent = para.parent
        credit(parent, amount)
        credit(parent.parent if parent is not None else None, amount / 2)
    final: dict[int, float] = {}
    for key, score in scores.items():
        got = parents.get(key)
        if got is None:
            chars, link = len(nodes[key].text(deep=True)), link_text_length_py(nodes[key])
        else:
            chars, link = got
        density = 1.0 if chars == 0 else min(link / chars, 1.0)
        final[key] = score * (1 - density)
    return final, nodes[max(final, key=lambda k: final[k])] if final else None


_native = accel.native("lxbtree")
text_length = _native.text_length if _native else text_length_py
link_text_length = _native.link_text_length if _native else link_text_length_py
in_furniture = _native.in_furniture if _native else in_furniture_py
head_and_hrefs = _native.head_and_hrefs if _native else head_and_hrefs_py
scored_candidates = _native.scored_candidates if _native else scored_candidates_py
readable_scores = _native.readable_scores if _native else readable_scores_py
