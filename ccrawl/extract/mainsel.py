"""Main-content selection for ``h2m``: pick the container that holds the page's content.

Tuned for recall: a container is chosen only when it clearly holds the bulk of the text, and
the smallest candidate that still holds 75% of the largest candidate's text wins, so a
``<main>`` wrapping one ``<article>`` yields the article while a ``<main>`` wrapping ten
teasers stays whole. When nothing qualifies the body is rendered and pruning inside the walk
does the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ccrawl.extract.tree import scored_candidates

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
    return MainContent(node, True, article_like, chars)


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
