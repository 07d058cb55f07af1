"""Main-content selection for ``h2m``: pick the container that holds the page's content.

Tuned for recall: a container is chosen only when it clearly holds the bulk of the text, and
the smallest candidate that still holds 75% of the largest candidate's text wins, so a
``<main>`` wrapping one ``<article>`` yields the article while a ``<main>`` wrapping ten
teasers stays whole. When nothing qualifies the body is rendered and pruning inside the walk
does the work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ccrawl.extract.tree import scored_candidates, text_length

Node = Any

#: Semantic containers first, then the class/id names CMSs (WordPress, Drupal, news sites) use.
#: Plain ``tag``, ``#id``, ``.class`` and ``[attr="value"]`` only: the native candidate walk
#: (csrc/lxbtree_select.pxi) matches these itself and refuses anything else.
CANDIDATES = ", ".join(
    (
        '[itemprop="articleBody"]',
        '[itemprop="text"]',
        "article",
        "main",
        '[role="main"]',
        "#content",
        "#main",
        "#main-content",
        "#maincontent",
        "#article",
        "#story",
        ".entry-content",
        ".post-content",
        ".post-body",
        ".postBody",
        ".article-content",
        ".article-body",
        ".article__body",
        ".articleBody",
        ".article-text",
        ".story-body",
        ".story-content",
        ".main-content",
        ".field-name-body",
        ".node-content",
        ".td-post-content",
        ".entry",
        ".post",
        ".blog-post",
        ".content",
        ".text",
    )
)
_ARTICLE_LIKE = ("article",)
_MIN_CHARS = 250
_SHARE_OF_BODY = 0.2
_SHARE_OF_BEST = 0.75
# A thread: the chosen container is one of several elements with its tag and classes (forum
# posts, the posts of a blog's page). It is widened to the smallest element holding them all
# when there are at least _THREAD_POSTS of them, it holds under _THREAD_SHARE of their text,
# the second longest has at least _THREAD_SECOND of its length (not one article among short
# teasers), and they are at least _THREAD_DENSITY of the widened element's text.
_THREAD_POSTS = 3
_THREAD_SHARE = 0.6
_THREAD_SECOND = 0.25
_THREAD_DENSITY = 0.4
_THREAD_MAX_PEERS = 2000
# The candidates named by a unique id: a page has one of each, so it is not one post of many.
_UNIQUE_IDS = frozenset({"content", "main", "main-content", "maincontent", "article", "story"})
_TAG_NAME = re.compile(r"[a-z][a-z0-9]*")
_CLASS_NAME = re.compile(r"-?[A-Za-z_][\w-]*")


@dataclass(slots=True)
class MainContent:
    """The node to render, whether it is a chosen container, and whether it is article-like."""

    root: Node
    chosen: bool
    article_like: bool
    root_chars: int


def select_main(body: Node) -> MainContent:
    """The main-content container of ``body`` (or ``body`` itself, ``chosen=False``)."""
    # Judged by the text that is not link text (a "more stories" block can be long), skipping
    # candidates inside headers, menus and hidden dialogs: see ``tree.scored_candidates``.
    body_chars, scored = scored_candidates(body, CANDIDATES, _MIN_CHARS, _SHARE_OF_BEST)
    if not scored:
        return MainContent(body, False, False, body_chars)
    best = max(n for n, _ in scored)
    if best < _SHARE_OF_BODY * body_chars:
        return MainContent(body, False, False, body_chars)
    best_node = next(nd for n, nd in scored if n == best)
    floor = _SHARE_OF_BEST * best
    # Only candidates inside the biggest one: a smaller block elsewhere (comments, a teaser
    # rail) can hold as much text as the article, and is not a narrowing of it.
    inside: dict[int, bool] = {best_node.mem_id: True}
    chars, node = min(((n, nd) for n, nd in scored if n >= floor and _within(nd, inside)), key=lambda t: t[0])
    attrs = node.attributes
    article_like = node.tag in _ARTICLE_LIKE or (attrs.get("itemprop") or "") in ("articleBody", "text")
    thread = _thread_of(body, node, attrs)
    if thread is not None:
        return MainContent(thread[0], True, False, thread[1])
    return MainContent(node, True, article_like, chars)


def _thread_of(body: Node, node: Node, attrs: dict[str, str | None]) -> tuple[Node, int] | None:
    """The element holding every post of a thread ``node`` is one post of, and its text length.

    None unless ``node`` is one of at least ``_THREAD_POSTS`` elements with its tag and class
    tokens (those inside another of them not counted), holds under ``_THREAD_SHARE`` of their
    text, the second longest is not much shorter than the longest (``_THREAD_SECOND``), and
    together they are at least ``_THREAD_DENSITY`` of the smallest element holding them all.
    A forum thread cut to its longest post, or a blog's front page cut to one post, is what
    this widens; one article beside short teasers of the same class is left alone.
    """
    cls = attrs.get("class")
    if not cls or (attrs.get("id") or "") in _UNIQUE_IDS or _TAG_NAME.fullmatch(node.tag) is None:
        return None
    tokens = cls.split()
    if not tokens or not all(_CLASS_NAME.fullmatch(t) for t in tokens):
        return None
    want = frozenset(tokens)
    peers = [
        p for p in body.css(node.tag + "".join("." + t for t in tokens))
        if frozenset((p.attributes.get("class") or "").split()) == want
    ]
    if not _THREAD_POSTS <= len(peers) <= _THREAD_MAX_PEERS:
        return None
    posts = _outermost(peers)
    if len(posts) < _THREAD_POSTS:
        return None
    sizes = sorted((text_length(p) for p in posts), reverse=True)
    total = sum(sizes)
    if text_length(node) >= _THREAD_SHARE * total or sizes[1] < _THREAD_SECOND * sizes[0]:
        return None
    root = _common_ancestor(posts)
    if root is None:
        return None
    root_chars = text_length(root)
    if total < _THREAD_DENSITY * root_chars:
        return None
    return root, root_chars


def _outermost(nodes: list[Node]) -> list[Node]:
    """``nodes`` without those inside another of them (each node climbed past remembered once)."""
    ids = {n.mem_id for n in nodes}
    inside: dict[int, bool] = {}  # node -> a strict ancestor of it is in ``ids``
    out = []
    for n in nodes:
        path: list[int] = []
        above = n.parent
        found = False
        while above is not None:
            key = above.mem_id
            if key in inside:
                found = inside[key] or key in ids
                break
            if key in ids:
                found = True
                break
            path.append(key)
            above = above.parent
        for key in path:
            inside[key] = found
        if not found:
            out.append(n)
    return out


def _common_ancestor(nodes: list[Node]) -> Node | None:
    """The deepest element holding every node of ``nodes`` (disjoint subtrees, document order).

    The first node's ancestors are indexed by depth; each other node climbs only until it meets
    one of them or a node an earlier climb passed, so the climbs share their paths.
    """
    chain: list[Node] = []
    above = nodes[0].parent
    while above is not None:
        chain.append(above)
        above = above.parent
    if not chain:
        return None
    level = {n.mem_id: i for i, n in enumerate(chain)}
    meet: dict[int, int] = {}  # node climbed past -> the chain level it met
    highest = 0
    for n in nodes[1:]:
        path: list[int] = []
        above = n.parent
        got = len(chain) - 1
        while above is not None:
            key = above.mem_id
            if key in level:
                got = level[key]
                break
            if key in meet:
                got = meet[key]
                break
            path.append(key)
            above = above.parent
        for key in path:
            meet[key] = got
        highest = max(highest, got)
    root = chain[highest]
    return root if root.tag not in ("html", "-document") else None


def _within(node: Node, known: dict[int, bool]) -> bool:
    """True when ``node`` is the ancestor ``known`` starts with (``{id: True}``) or lies inside it.

    Each node climbed past is remembered in ``known``, so the candidates nested in one another
    (a chain 40,000 deep) climb the chain once between them, not once each.
    """
    path: list[int] = []
    result = False
    while node is not None:
        key = node.mem_id
        if key in known:
            result = known[key]
            break
        path.append(key)
        node = node.parent
    for key in path:
        known[key] = result
    return result
