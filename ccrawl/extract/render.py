"""Render a selectolax (lexbor) subtree as GitHub-flavoured Markdown and plain text in one walk.

The walk is recursive over ``Node.iter(include_text=True)``, depth-capped by the budget, and
builds *blocks* (``(markdown, text, kind)``); inline content gathers in a buffer that a block
element flushes. Containers that change line prefixes (list items, blockquotes, table cells,
headings) render into a child context and are stitched into the parent afterwards, which is
what makes nesting come out right.

Pruning (``prune=True``, the ``h2m`` and ``readability`` engines) happens in the same walk:

* before descending: furniture tags, ARIA roles, hidden elements and class/id cues (see
  :mod:`ccrawl.extract.boilerplate`) skip the subtree, unless it holds most of the root's text;
* after rendering a block: a block whose text is mostly link text (menus, tag lists, "related"
  rails) is rolled back. The renderer counts text and link characters as it goes, so link
  density costs two subtractions per block, not a second pass.

Guards from :class:`~ccrawl.extract.model.Budget` stop the walk (time, nodes, output size),
flatten what lies below ``max_depth`` to text, and cut tables past ``max_table_cells``; each
guard that trips adds one note.

This module is the pure-Python walk (``PyRenderer``). ``ccrawl._native.h2mwalk``
(``csrc/h2mwalk.pyx``) is the same walk compiled over lexbor's structs, with identical output;
:mod:`ccrawl.accel` makes it ``Renderer`` when it is built and reads selectolax's lexbor.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ccrawl import accel
from ccrawl.extract.blocks import (
    DROPPED,
    IMAGE_MARK,
    Block,
    drop_image_marks,
    drop_orphan_headings,
    finish_blocks,
    has_nested_table,
    indent,
    join_item,
    one_line,
    only_titles_left,
    table_rows,
)
from ccrawl.extract.boilerplate import BOILERPLATE_TAGS, CAPTION, CAPTION_MAX_CHARS, COMMENTS, HIDDEN, KEEP, verdict
from ccrawl.extract.escape import (
    code_fence,
    code_span,
    escape_heading_end,
    escape_inline,
    escape_line_starts,
    link_destination,
)
from ccrawl.extract.model import Budget
from ccrawl.extract.urls import Resolver
from ccrawl.extract.urls import outlinks as urls_outlinks

Node = Any  # selectolax.lexbor.LexborNode: typed loosely, the extension ships no stubs

SKIP_TAGS = frozenset(
    {
        "script", "style", "template", "svg", "math", "canvas", "iframe", "object", "embed",
        "head", "title", "meta", "link", "base", "button", "select", "option", "optgroup", "input",
        "textarea", "video", "audio", "source", "track", "map", "area", "frame", "frameset", "param",
        "-comment", "!doctype", "datalist", "progress", "meter", "output",
    }
)  # fmt: skip
INLINE_TAGS = frozenset(
    {
        "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "del", "em",
        "font", "i", "img", "ins", "kbd", "label", "mark", "nobr", "picture", "q", "rp", "rt", "ruby",
        "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
        "br",
    }
)  # fmt: skip
_EMPHASIS = {"b": "**", "strong": "**", "em": "*", "i": "*", "del": "~~", "s": "~~", "strike": "~~"}
_CODE_INLINE = frozenset({"code", "kbd", "samp", "tt"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LISTS = frozenset({"ul", "ol", "menu", "dir"})
_SPACES = re.compile(r" {2,}")
_BREAKS = re.compile(r" *\n[ \n]*")
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language|lang|highlight-source|brush:?)-?\s*([A-Za-z0-9_+#.-]+)")
# Leading punctuation (text, so escaped or plain, never our own * or ~ delimiters), a core that
# starts and ends on a word character, and trailing punctuation. No match (no word character,
# or a nested emphasis run at an edge, whose flanking depends on characters not known yet)
# means the text is kept without this emphasis.
_EDGE_PUNCT = re.compile(
    r"^((?:\\[!-/:-@\[-`{-~]|[^\w\s*~\\])*)([^\W_](?:.*[^\W_])?)((?:\\[!-/:-@\[-`{-~]|[^\w\s*~\\])*)$",
    re.DOTALL,
)
# A short line that is a date stamp or a picture credit is metadata, not content. One regex
# of both kinds is slow on the common line that is neither (sre tries every alternative at
# every position): the credit words are tried at the start only, the dates only when the
# line has a digit. Together they match what the single pattern (``_METADATA_LINE``) does.
_METADATA_WORDS = (
    r"\W*(?:foto|fotos|photo|photos|bild|bilder|image|quelle|source|credit|credits|©|\(c\)|copyright)\b\s*:?"
)
_METADATA_DATES = (
    r"\b\d{1,2}\.\s?\d{1,2}\.\s?(?:19|20)\d\d\b|\b(?:19|20)\d\d-\d\d-\d\d\b|\b\d{1,2}/\d{1,2}/(?:19|20)\d\d\b"
)
_METADATA_LINE = re.compile(f"^{_METADATA_WORDS}|{_METADATA_DATES}", re.IGNORECASE)
_METADATA_START = re.compile(_METADATA_WORDS, re.IGNORECASE)
_METADATA_DATE = re.compile(_METADATA_DATES, re.IGNORECASE)
_DIGIT = re.compile(r"\d")
# A picture credit inside a caption ("The new plant. (Photo: Getty)", "... © CAE"): lines up to
# _METADATA_MAX characters; the date and credit-first forms above only under 80.
_CREDIT_INSIDE = re.compile(r"\b(?:foto|fotos|photo|photos|bild|credit|credits)\s*:|©|getty images", re.IGNORECASE)
_METADATA_MAX = 120


def is_metadata_line(text: str) -> bool:
    """True when ``text`` is a date stamp or a picture credit.

    Under 80 characters: ``_METADATA_LINE`` matches, or a credit appears anywhere
    (``_CREDIT_INSIDE``); from 80 on only the latter.
    """
    if _CREDIT_INSIDE.search(text) is not None:
        return True
    if len(text) >= 80:
        return False
    if _METADATA_START.match(text) is not None:
        return True
    return _DIGIT.search(text) is not None and _METADATA_DATE.search(text) is not None


def _ends_with_bare(text: str, char: str) -> bool:
    """True when ``text`` ends with ``char`` unescaped: after an even run of backslashes (or none).

    ``0\\\\!`` (an escaped backslash, then "!") ends with a bare "!", although it ends with "\\!".
    """
    if not text.endswith(char):
        return False
    before = text[:-1]
    return (len(before) - len(before.rstrip("\\"))) % 2 == 0


_LINE_START_CHARS = frozenset("#>+=-0123456789")
_CONTAINERS = frozenset({"article", "main", "body"})
_CONTENT_MARKERS = 'main, h1, [itemprop="articleBody"], [role="main"]'
_PRECHECK_TAGS = frozenset({"ul", "ol", "nav", "menu"})
# The text (not link text) rendered before a block named as comments, from which the block is
# a thread after the article and pruned whatever its size.
_COMMENTS_AFTER = 150
# A heading that says the comments begin ("Comments", "12 Comments", "Comments (26)", "Leave a
# reply") after this much non-link text ends the walk: the thread below it is often unnamed
# (``div.commentText``, bare paragraphs) and nothing of the article follows it.
_THREAD_AFTER = 500
# A block that closes a story after _THREAD_AFTER characters of non-link text ends the walk: a
# wire story's rights notice ("Copyright 2008 The Associated Press. All rights reserved. ...") or
# a lone tool line ("E-mail this to a friend", "Print this story"); what follows them on 2008-era
# news pages is lists of other stories and reader comments (since h2m@9).
_ARTICLE_END_FIRST = "CcEePpSs\u00a9("
_ARTICLE_END = re.compile(
    r"(?i)(?:(?:e-?mail|print|send) this (?:to a friend|story|article)$"
    r"|(?:copyright\s*(?:©|\(c\))?|©|\(c\))\s*(?:\d{4}[-–\d, ]*)?[^.\n]{0,60}\.?\s*all rights reserved)"
)
# A link-less anchor named as the comments' jump target (``<a name="commentSection">``) ends the
# walk the same way, unless the page has three or more (a blog's front page: one after each post).
_COMMENTS_ANCHOR = re.compile(
    r"(?i)(?:user|reader|post|article|story)?[-_]?comments?(?:[-_]?(?:section|area|list|top|start|thread))?"
)


def _comments_anchor(node: Node) -> bool:
    """A link-less ``a`` whose name (or id) names the comments (``_COMMENTS_ANCHOR``)."""
    attrs = node.attributes
    if "href" in attrs:
        return False
    name = attrs.get("name") or attrs.get("id")
    return bool(name) and _COMMENTS_ANCHOR.fullmatch(name) is not None


_COMMENTS_HEADING = re.compile(
    r"(?i)(?:\d+\s+)?(?:reader\s+|user\s+|your\s+)?comments(?:\s*\(\d+\)|\s*:)?"
    r"|leave a (?:comment|reply)|kommentare|commentaires|comentarios"
)
# A teaser card (a linked heading over a line or two of summary) once the article has begun:
# the non-link characters rendered before it, and those it may hold per linked heading.
_TEASER_AFTER = 1000
_TEASER_TEXT = 500
_PRUNED_TAGS = frozenset({"footer", "figcaption"})
# A block of this many links or more that is mostly link text is a link list at any length.
_LINK_LIST_LINKS = 10
_LINK_LIST_DENSITY = 0.8


class _Ctx:
    """Output of one container: finished blocks and the inline run being gathered."""

    __slots__ = ("blocks", "md", "tx")

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.md: list[str] = []
        self.tx: list[str] = []


class Renderer:
    """One document's walk; create one per document (it holds counters and notes)."""

    def __init__(
        self,
        resolver: Resolver,
        budget: Budget,
        *,
        prune: bool,
        root_chars: int = 0,
        started: float | None = None,
        link_targets: bool = True,
    ) -> None:
        self.resolver = resolver
        # False: a link renders as its text alone, no "[text](url)" (see docs/extract.md).
        self.link_targets = link_targets
        self.budget = budget
        self.prune = prune
        self.root_chars = root_chars
        self.in_article = False
        self.notes: list[str] = []
        self.truncated = False
        self.stopped = False
        self.comment_anchors = -1  # link-less anchors named as comments on the page, once counted
        self.nodes = 0
        self.chars = 0
        self.link_chars = 0
        self.links = 0
        self.table_cells = 0
        self.in_link = 0
        self.in_table = 0
        self.in_emphasis: set[str] = set()
        self.flushes = 0
        self.drops = 0
        self.linked_headings = 0
        self.destinations: dict[str, str] = {}
        self.markup = 0
        self.floor = 0  # index in the inline buffer where the innermost open span began
        # The budget covers the whole extraction, so the clock starts where the caller started it.
        self.deadline = (time.perf_counter() if started is None else started) + budget.max_seconds
        self._depth_noted = False

    # -- entry point -------------------------------------------------------------------------

    def render(self, root: Node) -> tuple[str, str]:
        """Markdown and plain text of ``root``'s content."""
        ctx = _Ctx()
        self._children(root, ctx, 0)
        self._flush(ctx)
        blocks = drop_orphan_headings(ctx.blocks)
        if self.prune:
            blocks = finish_blocks(blocks)
        while blocks and blocks[-1][2] == "hr":
            blocks.pop()
        while blocks and blocks[0][2] == "hr":
            blocks.pop(0)
        if not self.link_targets:
            blocks = drop_image_marks(blocks)
        markdown = "\n\n".join(b[0] for b in blocks)
        text = "\n".join(b[1] for b in blocks if b[1])
        limit = self.budget.max_chars
        if len(markdown) > limit or len(text) > limit:
            # One text node can be megabytes long; the node-count checks never see inside it.
            if not any(n.startswith("chars:") for n in self.notes):
                self.notes.append(f"chars: output cut at {limit} characters")
            self.truncated = True
            markdown, text = markdown[:limit], text[:limit]
        return markdown, text

    # -- guards ------------------------------------------------------------------------------

    def _stop(self, note: str) -> None:
        self.stopped = True
        self.truncated = True
        self.notes.append(note)

    def _tick(self) -> bool:
        """Count a node; every 256 nodes check the budget. False once the walk must stop."""
        self.nodes += 1
        if not self.nodes & 255:
            return self._tick_check()
        return not self.stopped

    def _tick_check(self) -> bool:
        b = self.budget
        if self.nodes >= b.max_nodes:
            self._stop(f"nodes: stopped after {self.nodes} nodes")
        elif time.perf_counter() > self.deadline:
            self._stop(f"time: stopped after {b.max_seconds:g} s")
        elif self.chars >= b.max_chars:
            self._stop(f"chars: stopped after {self.chars} characters")
        return not self.stopped

    # -- walking -----------------------------------------------------------------------------

    def _children(self, node: Node, ctx: _Ctx, depth: int) -> None:
        # The hot loop: _tick is inlined (count, and look at the clock every 256 elements), and
        # so is _text's case of a whitespace-only node (most text nodes on most pages).
        max_depth = self.budget.max_depth
        md, tx = ctx.md, ctx.tx
        for child in node.iter(include_text=True):
            if self.stopped:
                return
            tag = child.tag
            if tag == "-text":
                raw = child.text_content
                if raw:
                    if raw.isspace():
                        md.append(" ")
                        tx.append(" ")
                    else:
                        self._text(raw, ctx)
                continue
            if tag in SKIP_TAGS:
                continue
            self.nodes += 1
            if not self.nodes & 255 and not self._tick_check():
                return
            if depth >= max_depth:
                self._flatten(child, ctx)
            elif tag in INLINE_TAGS:
                self._inline(child, tag, ctx, depth + 1)
            else:
                self._block(child, tag, ctx, depth + 1)

    def _flatten(self, node: Node, ctx: _Ctx) -> None:
        if not self._depth_noted:
            self._depth_noted = True
            self.truncated = True
            self.notes.append(f"depth: content nested deeper than {self.budget.max_depth} kept as flat text")
        self._text(node.text(deep=True, separator=" "), ctx)

    def _text(self, raw: str | None, ctx: _Ctx) -> None:
        if not raw:
            return
        if raw.isspace():  # the indentation between tags: most text nodes on most pages
            ctx.md.append(" ")
            ctx.tx.append(" ")
            return
        words = raw.split()
        plain = " ".join(words)
        n = len(plain)
        self.chars += n
        if self.in_link:
            self.link_chars += n
        lead = " " if raw[0].isspace() else ""
        trail = " " if raw[-1].isspace() else ""
        ctx.md.append(lead + escape_inline(plain) + trail)
        ctx.tx.append(lead + plain + trail)

    def _flush(self, ctx: _Ctx, kind: str = "p") -> None:
        if not ctx.md:
            return
        md = "".join(ctx.md).strip()
        tx = "".join(ctx.tx).strip()
        ctx.md.clear()
        ctx.tx.clear()
        self.flushes += 1
        if not md:
            return
        if "  " in md:
            md = _SPACES.sub(" ", md)
            tx = _SPACES.sub(" ", tx)
        if "\n" in md:
            md = _BREAKS.sub("\\\\\n", md)
            tx = _BREAKS.sub("\n", tx)
        # (A date in a table cell is data, not a dateline.)
        if self.prune and len(tx) < _METADATA_MAX and not self.in_table and is_metadata_line(tx):
            return
        if (self.prune and tx and tx[0] in _ARTICLE_END_FIRST and not self.in_table
                and self.chars - self.link_chars >= _THREAD_AFTER and _ARTICLE_END.match(tx) is not None):
            self.stopped = True  # a rights notice or a tool line: the article has ended
            return
        if md[0] in _LINE_START_CHARS or "\n" in md:
            md = escape_line_starts(md)
        ctx.blocks.append((md, tx, kind))

    # -- inline ------------------------------------------------------------------------------

    def _inline(self, node: Node, tag: str, ctx: _Ctx, depth: int) -> None:
        if tag == "br":
            ctx.md.append("\n")
            ctx.tx.append("\n")
            return
        if tag == "img":
            self._image(node, ctx)
            return
        if tag == "wbr":
            return
        if self.prune and self._skip_furniture(node, tag):
            return
        if tag in _CODE_INLINE:
            code = " ".join(node.text(deep=True).split())
            if code:
                self.chars += len(code)
                if self.in_link:
                    self.link_chars += len(code)
                if ctx.md and ctx.md[-1].endswith("`"):
                    # Two code spans touching would form one longer backtick run: plain text it is.
                    ctx.md.append(escape_inline(code))
                else:
                    ctx.md.append(code_span(code))
                    self.markup += 1
                ctx.tx.append(code)
            return
        start, flushes, floor = len(ctx.md), self.flushes, self.floor
        self.floor = start
        if tag == "a":
            if (self.prune and self.chars - self.link_chars >= _THREAD_AFTER and _comments_anchor(node)
                    and self._one_comments_anchor(node)):
                self.stopped = True  # the comments' anchor: the article has ended
                return
            self.in_link += 1
            self.links += 1
            self._children(node, ctx, depth)
            self.in_link -= 1
            self.floor = floor
            if self.in_link == 0 and flushes == self.flushes:
                self._wrap_link(node, ctx, start)
            return
        marker = _EMPHASIS.get(tag)
        if marker is None or marker in self.in_emphasis:
            self._children(node, ctx, depth)
            self.floor = floor
            return
        self.in_emphasis.add(marker)
        markup = self.markup
        self._children(node, ctx, depth)
        self.in_emphasis.discard(marker)
        self.floor = floor
        # Emphasis around a link or code span cannot always be closed in CommonMark (a link ends
        # in ")", punctuation), so such spans keep their text and lose the emphasis.
        if flushes == self.flushes and markup == self.markup:
            self._wrap(ctx, start, marker)

    def _one_comments_anchor(self, node: Node) -> bool:
        """True when the page has at most two link-less ``a`` named as the comments (a top and a bottom one)."""
        if self.comment_anchors < 0:
            top = node
            while top.parent is not None:
                top = top.parent
            self.comment_anchors = sum(1 for a in top.css("a") if _comments_anchor(a))
        return self.comment_anchors <= 2

    @staticmethod
    def _split_space(ctx: _Ctx, start: int) -> tuple[str, str, str]:
        content = "".join(ctx.md[start:])
        inner = content.strip()
        lead = " " if inner and content[0] == " " else ""
        trail = " " if inner and content[-1] == " " else ""
        return lead, inner, trail

    def _wrap(self, ctx: _Ctx, start: int, marker: str) -> None:
        lead, inner, trail = self._split_space(ctx, start)
        if not inner or "\n" in inner:
            return
        # CommonMark only opens emphasis before, and closes it after, a non-punctuation
        # character when the outside neighbour is a letter: keep punctuation outside the markers.
        m = _EDGE_PUNCT.match(inner)
        if m is None:
            return
        head, core, tail = m.group(1), m.group(2), m.group(3)
        if head.endswith("\\") or core.endswith("\\"):
            return
        prev = ctx.md[start - 1] if start else ""
        if not lead and not head and prev.endswith(marker[0]) and not prev.endswith("\\" + marker[0]):
            run = len(prev) - len(prev.rstrip(marker[0]))
            # Only with a run inside the same enclosing span (a link, an outer emphasis).
            if run == len(marker) and start - 1 >= self.floor:
                # <b>r</b><b>eactivación</b>: "**r****eactivación**" would not parse; continue the run.
                ctx.md[start - 1] = prev[: -len(marker)]
                ctx.md[start:] = [f"{core}{marker}{tail}{trail}"]
            # Otherwise two different delimiter runs would touch ("**0***0*"): keep the text only.
            return
        ctx.md[start:] = [f"{lead}{head}{marker}{core}{marker}{tail}{trail}"]

    def _wrap_link(self, node: Node, ctx: _Ctx, start: int) -> None:
        if not self.link_targets:
            return
        lead, inner, trail = self._split_space(ctx, start)
        if not inner:
            return
        href = node.attrs.get("href")  # one attribute: cheaper than building the attributes dict
        url = self.resolver.resolve(href) if href else ""
        if not url or "\n" in inner:
            return
        if not lead and start and _ends_with_bare(ctx.md[start - 1], "!"):
            ctx.md[start - 1] = ctx.md[start - 1][:-1] + "\\!"  # "!" + "[x](y)" would be an image
        ctx.md[start:] = [f"{lead}[{inner}]({self._destination(url)}){trail}"]
        self.markup += 1

    def _destination(self, url: str) -> str:
        # Menus and teaser lists repeat their links: each URL is made a destination once.
        dest = self.destinations.get(url)
        if dest is None:
            dest = self.destinations[url] = link_destination(url)
        return dest

    def _image(self, node: Node, ctx: _Ctx) -> None:
        attrs = node.attributes
        alt = " ".join((attrs.get("alt") or "").split())
        if not alt:
            return
        if not self.link_targets:
            # Without its target an image would be its alt words alone: words the text never
            # has (mostly credits and ad labels on html-eval), so it goes, after the pruning.
            ctx.md.append(IMAGE_MARK)
            self.markup += 1
            return
        src = attrs.get("src") or attrs.get("data-src") or ""
        url = "" if src.startswith("data:") else self.resolver.resolve(src)
        ctx.md.append(f"![{escape_inline(alt)}]({link_destination(url)})")
        self.markup += 1

    # -- blocks ------------------------------------------------------------------------------

    def _skip_furniture(self, node: Node, tag: str) -> bool:
        """True when a subtree is page furniture and small enough to be sure of it."""
        if tag in BOILERPLATE_TAGS:
            return self._small(node)
        attrs = node.attributes
        if not attrs:
            return False
        # The content container itself often carries taxonomy classes ("tag-social"): trust the tag.
        kind = verdict(attrs, tag not in _CONTAINERS)
        if kind == KEEP:
            return False
        if kind == CAPTION:  # short, or it is no caption (a story inside an unclosed caption span)
            return self._small(node) and len(node.text(deep=True)) < CAPTION_MAX_CHARS
        if kind == COMMENTS and self.chars - self.link_chars >= _COMMENTS_AFTER:
            # A comment thread after the article's text, however long: unless the article is in it.
            return node.css_first(_CONTENT_MARKERS) is None
        return kind == HIDDEN or self._small(node)

    def _small(self, node: Node) -> bool:
        # A furniture cue on an element that holds most of the text is a wrapper (class
        # "has-sidebar" on the page body): keep it and prune inside it instead.
        # Nor is furniture what holds the headline or the article body (class "below-banner").
        if node.css_first(_CONTENT_MARKERS) is not None:
            return False
        if self.root_chars < 500:
            return True
        return len(node.text(deep=True)) < 0.5 * self.root_chars

    def _block(self, node: Node, tag: str, ctx: _Ctx, depth: int) -> None:
        if self.prune and (
            self._skip_furniture(node, tag) or tag in _PRUNED_TAGS or (tag == "header" and not self.in_article)
        ):
            if ctx.blocks and ctx.blocks[-1][2] == "h":
                self._drop(ctx)
            return
        if ctx.md:
            self._flush(ctx)
        before_blocks = len(ctx.blocks)
        if self.prune and tag in _PRECHECK_TAGS and self._dense_before_walk(node):
            # Judged in C before walking: a menu or link list costs a scan, not a render.
            self._drop(ctx)
            return
        chars, link_chars, links, drops = self.chars, self.link_chars, self.links, self.drops
        heading = _HEADINGS.get(tag)
        if heading:
            self._heading(node, heading, ctx, depth)
        elif tag in _LISTS:
            self._list(node, tag, ctx, depth)
        elif tag == "pre":
            self._pre(node, ctx)
        elif tag == "blockquote":
            self._quote(node, ctx, depth)
        elif tag == "table":
            self._table(node, ctx, depth)
        elif tag == "hr":
            ctx.blocks.append(("---", "", "hr"))
        else:
            teasers = self.linked_headings
            self._children(node, ctx, depth)
            if ctx.md:
                self._flush(ctx)
            if self.prune and self.linked_headings != teasers and self._teasers(chars, link_chars, teasers):
                # Cards of other articles ("### [Title](url)" and a summary) after this one's text.
                del ctx.blocks[before_blocks:]
                self._drop(ctx)
                self.chars, self.link_chars, self.links = chars, link_chars, links
                return
        if not self.prune:
            return
        # Both checks are skipped when they cannot hold: a block without links is not link
        # dense, and only a block in which something was dropped can be left with only titles.
        if self.links != links and self._link_dense(
            self.chars - chars, self.link_chars - link_chars, self.links - links, tag
        ):
            del ctx.blocks[before_blocks:]
            self._drop(ctx)
            # Forget what was dropped, so an ancestor's density is judged on what it keeps.
            self.chars, self.link_chars, self.links = chars, link_chars, links
        elif self.drops != drops and only_titles_left(ctx.blocks, before_blocks):
            # A "Related articles" box whose list was pruned: its title goes with it.
            del ctx.blocks[before_blocks:]
            self._drop(ctx)

    def _teasers(self, chars: int, link_chars: int, teasers: int) -> bool:
        """True when the block just rendered is teaser cards: linked headings with little text of their own.

        Only once the document has ``_TEASER_AFTER`` characters of text that is not link text
        before the block: a linked headline at the top is the article's own title.
        """
        own = (self.chars - chars) - (self.link_chars - link_chars)
        return chars - link_chars >= _TEASER_AFTER and own < _TEASER_TEXT * (self.linked_headings - teasers)

    def _drop(self, ctx: _Ctx) -> None:
        """Leave the marker of a pruned block (and count it, see :meth:`_block`)."""
        self.drops += 1
        ctx.blocks.append(DROPPED)

    def _dense_before_walk(self, node: Node) -> bool:
        anchors = node.css("a")
        if len(anchors) < 3:
            return False
        chars = len(" ".join(node.text(deep=True).split()))
        linked = sum(len(" ".join(a.text(deep=True).split())) for a in anchors)
        return self._link_dense(chars, min(linked, chars), len(anchors), "ul")

    @staticmethod
    def _link_dense(chars: int, link_chars: int, links: int, tag: str) -> bool:
        """A block that is mostly link text: a menu, a tag list, a "more stories" rail."""
        if links == 0 or chars == 0:
            return False
        density = link_chars / chars
        if links >= 3 and density > 0.6 and chars - link_chars < 400:
            return True
        if links >= _LINK_LIST_LINKS and density > _LINK_LIST_DENSITY:
            # A link list whatever its length (thousands of names who left "kudos").
            return True
        if tag in _HEADINGS:
            return False
        # "Read more: <link>" lines, a lone linked teaser, a caption that is only a credit link.
        return (density > 0.9 and chars < 120) or (density >= 0.5 and chars - link_chars < 40)

    def _sub(self, node: Node, depth: int) -> list[Block]:
        sub = _Ctx()
        floor, self.floor = self.floor, 0
        self._children(node, sub, depth)
        if sub.md:
            self._flush(sub)
        self.floor = floor
        return drop_orphan_headings(sub.blocks) if self.prune else [b for b in sub.blocks if b[0]]

    def _heading(self, node: Node, level: int, ctx: _Ctx, depth: int) -> None:
        chars, link_chars = self.chars, self.link_chars
        blocks = self._sub(node, depth)
        if self.chars != chars and self.chars - chars == self.link_chars - link_chars:
            self.linked_headings += 1  # "### [Title](url)": a teaser's headline (see _teasers)
        md = one_line(blocks)
        tx = " ".join(b[1].replace("\n", " ") for b in blocks).strip()
        if self.prune and chars - link_chars >= _THREAD_AFTER and _COMMENTS_HEADING.fullmatch(tx):
            self.stopped = True  # the comments begin: the article has ended
            return
        if md:
            ctx.blocks.append(("#" * level + " " + escape_heading_end(md), tx, "h"))

    def _pre(self, node: Node, ctx: _Ctx) -> None:
        code = node.text(deep=True).strip("\n")
        if not code.strip():
            return
        self.chars += len(code)
        lang = ""
        for el in (node, node.child):
            if el is not None and el.tag in ("pre", "code"):
                m = _LANG_CLASS.search(el.attributes.get("class") or "")
                if m:
                    lang = m.group(1)
                    break
        fence = code_fence(code)
        ctx.blocks.append((f"{fence}{lang}\n{code}\n{fence}", code, "pre"))

    def _quote(self, node: Node, ctx: _Ctx, depth: int) -> None:
        blocks = self._sub(node, depth)
        if not blocks:
            return
        body = "\n\n".join(b[0] for b in blocks)
        md = "\n".join(("> " + line) if line else ">" for line in body.split("\n"))
        ctx.blocks.append((md, "\n".join(b[1] for b in blocks if b[1]), "quote"))

    def _list(self, node: Node, tag: str, ctx: _Ctx, depth: int) -> None:
        ordered = tag == "ol"
        number = 1
        if ordered:
            start = (node.attributes.get("start") or "").strip()
            number = int(start) if start.isdigit() and len(start) < 9 else 1
        items: list[str] = []
        texts: list[str] = []
        width = 2
        # Whitespace between items is skipped in C (skip_empty: ASCII whitespace only; other
        # blank text, such as a lone no-break space, is skipped below).
        for child in node.iter(include_text=True, skip_empty=True):
            if self.stopped:
                break
            ctag = child.tag
            if ctag == "-text":
                raw = child.text_content
                if raw and raw.strip():
                    sub = _Ctx()
                    self._text(raw, sub)
                    self._flush(sub)
                    blocks = sub.blocks
                else:
                    continue
            elif ctag in SKIP_TAGS or not self._tick() or (self.prune and self._skip_furniture(child, ctag)):
                continue
            elif ctag in _LISTS and items:
                # A list nested straight into a list (invalid, common): it belongs to the item before.
                nested = self._sub_list(child, ctag, depth + 1)
                if nested:
                    items[-1] += "\n" + indent(nested[0], width)
                    texts[-1] += "\n" + nested[1]
                continue
            else:
                blocks = self._sub(child, depth + 1)
            if not blocks:
                continue
            marker = f"{number}. " if ordered else "- "
            width = len(marker)
            number += 1
            items.append(marker + join_item(blocks, len(marker)))
            texts.append("\n".join(b[1] for b in blocks if b[1]))
        if items:
            ctx.blocks.append(("\n".join(items), "\n".join(t for t in texts if t), "list"))

    def _sub_list(self, node: Node, tag: str, depth: int) -> tuple[str, str] | None:
        sub = _Ctx()
        if depth >= self.budget.max_depth:  # as in _children: what is nested deeper is kept as flat text
            self._flatten(node, sub)
            self._flush(sub)
        else:
            self._list(node, tag, sub, depth)
        return (sub.blocks[0][0], sub.blocks[0][1]) if sub.blocks else None

    def _table(self, node: Node, ctx: _Ctx, depth: int) -> None:
        rows = table_rows(node, self.budget.max_table_cells - self.table_cells + 1)
        ncols = max((len(cells) for _, cells in rows), default=0)
        if ncols < 2 or len(rows) < 2 or has_nested_table(node):
            # A layout table (one column, one row, or tables inside): its cells are just blocks.
            self._children(node, ctx, depth)
            self._flush(ctx)
            return
        md_rows: list[list[str]] = []
        tx_rows: list[str] = []
        header_is_th = rows[0][0]
        for _, cells in rows:
            if self.stopped:
                break
            if self.table_cells + len(cells) > self.budget.max_table_cells:
                if not any(n.startswith("table:") for n in self.notes):
                    self.notes.append(f"table: cut after {self.table_cells} cells")
                self.truncated = True
                self.table_cells = self.budget.max_table_cells
                break
            self.table_cells += len(cells)
            md_cells: list[str] = []
            tx_cells: list[str] = []
            plain_at: list[int] = []
            for cell in cells:
                first = cell.child
                if first is not None and first.next is None and first.tag == "-text":
                    # Most cells are one text node: skip the child context (big tables spend
                    # most of their time there). Same result as the general path below; the
                    # row's plain cells are escaped together after the loop.
                    plain = " ".join((first.text_content or "").split())
                    self.chars += len(plain)
                    plain_at.append(len(md_cells))
                    md_cells.append(plain)
                    tx_cells.append(plain)
                    continue
                self.in_table += 1
                blocks = self._sub(cell, depth + 2)
                self.in_table -= 1
                md_cells.append(one_line(blocks))
                tx_cells.append(" ".join(b[1].replace("\n", " ") for b in blocks).strip())
            if plain_at:
                # NUL separates the cells: not alphanumeric, so escaping is unchanged (and lexbor
                # turns NUL in text into U+FFFD, so the split is exact; checked all the same).
                joined = "\0".join(md_cells[i] for i in plain_at)
                escaped = escape_inline(joined).split("\0")
                if len(escaped) != len(plain_at):
                    escaped = [escape_inline(md_cells[i]) for i in plain_at]
                for i, value in zip(plain_at, escaped, strict=True):
                    md_cells[i] = value
            if not any(md_cells):
                continue
            md_rows.append(md_cells + [""] * (ncols - len(md_cells)))
            tx_rows.append("\t".join(c for c in tx_cells if c))
        if not md_rows:
            return
        if header_is_th:
            header, body = md_rows[0], md_rows[1:]
        else:
            header, body = [""] * ncols, md_rows
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * ncols]
        lines.extend("| " + " | ".join(r) + " |" for r in body)
        ctx.blocks.append(("\n".join(lines), "\n".join(tx_rows), "table"))


def word_count_py(text: str) -> int:
    """The number of words in ``text``: ``len(text.split())``, whitespace as ``str.isspace`` has it."""
    return len(text.split())


def count_lt_py(data: bytes) -> int:
    """How many ``<`` bytes ``data`` holds."""
    return data.count(b"<")


def strip_tags_py(tree: Any, tags: list[str]) -> None:
    """Remove the elements named ``tags``, with all they hold, from a parsed document."""
    tree.strip_tags(tags)


#: The pure-Python walk, kept importable under its own name for the parity tests.
PyRenderer = Renderer
word_count = word_count_py
strip_tags = strip_tags_py
count_lt = count_lt_py
outlinks = urls_outlinks
_native = accel.native("h2mwalk")
# The compiled walk over lexbor's structs (csrc/h2mwalk.pyx): same output, same notes. It
# imports this module, so when it is imported first this runs while it is still loading,
# before its layout check has passed: then the twin stays (LOADED is not yet set).
if _native is not None and getattr(_native, "LOADED", False):
    Renderer = _native.Renderer  # type: ignore[misc]
    word_count = _native.word_count
    strip_tags = _native.strip_tags
    count_lt = _native.count_lt
    outlinks = _native.outlinks
