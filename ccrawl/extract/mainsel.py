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

from ccrawl.extract.boilerplate import has_boilerplate_role, is_hidden

Node = Any

#: Semantic containers first, then the class/id names CMSs (WordPress, Drupal, news sites) use.
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
    body_chars = len(body.text(deep=True))
    scored: list[tuple[int, Node]] = []
    raw: list[tuple[int, Node]] = []
    for node in body.css(CANDIDATES):
        n = len(node.text(deep=True))
        if n >= _MIN_CHARS:
            raw.append((n, node))
    # Judge by the text that is not link text (a "more stories" block can be long), and skip
    # candidates inside headers, menus and hidden dialogs. Both cost a walk, so go from the
    # longest down and stop once no remaining candidate could reach the floor.
    raw.sort(key=lambda t: -t[0])
    best_so_far = 0
    for n, node in raw:
        if n < _SHARE_OF_BEST * best_so_far:
            break
        if _in_furniture(node):
            continue
        n -= sum(len(a.text(deep=True)) for a in node.css("a"))
        if n >= _MIN_CHARS:
            scored.append((n, node))
            best_so_far = max(best_so_far, n)
    if not scored:
        return MainContent(body, False, False, body_chars)
    best = max(n for n, _ in scored)
    if best < _SHARE_OF_BODY * body_chars:
        return MainContent(body, False, False, body_chars)
    best_node = next(nd for n, nd in scored if n == best)
    floor = _SHARE_OF_BEST * best
    # Only candidates inside the biggest one: a smaller block elsewhere (comments, a teaser
    # rail) can hold as much text as the article, and is not a narrowing of it.
    chars, node = min(((n, nd) for n, nd in scored if n >= floor and _within(nd, best_node)), key=lambda t: t[0])
    attrs = node.attributes
    article_like = node.tag in _ARTICLE_LIKE or (attrs.get("itemprop") or "") in ("articleBody", "text")
    return MainContent(node, True, article_like, chars)


def _within(node: Node, ancestor: Node) -> bool:
    """True when ``node`` is ``ancestor`` or lies inside it."""
    target = ancestor.mem_id
    while node is not None:
        if node.mem_id == target:
            return True
        node = node.parent
    return False


_FURNITURE_TAGS = frozenset({"header", "footer", "nav", "aside", "dialog"})


def _in_furniture(node: Node) -> bool:
    """True when ``node`` or an ancestor is a header, footer, menu, dialog or hidden element."""
    while node is not None and node.tag not in ("body", "html"):
        if node.tag in _FURNITURE_TAGS:
            return True
        attrs = node.attributes
        if attrs and (is_hidden(attrs) or has_boilerplate_role(attrs)):
            return True
        node = node.parent
    return False
