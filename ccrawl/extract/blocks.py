"""Rendered blocks and the helpers that stitch, flatten and prune them (used by the renderer).

A block is ``(markdown, text, kind)``; ``kind`` is ``p`` (paragraph), ``h`` (heading),
``list``, ``pre``, ``quote``, ``table``, ``hr``, or ``x`` for :data:`DROPPED`, the marker the
renderer leaves where pruning removed something, so that a heading left above it can go too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ccrawl.extract.escape import escape_inline, escape_line_starts

Node = Any  # selectolax.lexbor.LexborNode
Block = tuple[str, str, str]  # markdown, text, kind
DROPPED: Block = ("", "", "x")
#: What an image leaves in the Markdown when link targets are off (``links="text"``): a
#: placeholder, so that the blocks, and so the pruning and the text, are those of ``keep``;
#: :func:`drop_image_marks` takes it out once the pruning is done.
IMAGE_MARK = "\ue000"
_INNER_SPACES = re.compile(r"(?<=\S) {2,}")
_ITEM_PREFIX = re.compile(r" *(?:(?:[-*+]|\d{1,9}[.)]|>) +)?")


def _paragraph_without_marks(md: str) -> str:
    # Every line of a paragraph but the last ends in the "\\" of a hard break: a line that only
    # held pictures goes with its break, and a line start the mark hid is escaped.
    lines = md.split("\n")
    kept = []
    for i, line in enumerate(lines):
        if i < len(lines) - 1:
            line = line[:-1]
        line = _INNER_SPACES.sub(" ", line.replace(IMAGE_MARK, "")).strip(" ")
        if line:
            kept.append(line)
    return escape_line_starts("\\\n".join(kept))


def _ends_in_break(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1  # an odd run: the last "\\" is a hard break


def _lines_without_marks(md: str) -> str:
    # Lists, quotes, tables, headings: a line left empty (or a bare item marker) by its pictures
    # goes, and so does the hard break before it when it was the last line of its item. A bare
    # marker whose item goes on below takes the item's next line up instead; a line start the
    # mark hid is escaped.
    lines = md.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if IMAGE_MARK not in line:
            kept.append(line)
            continue
        prefix = _ITEM_PREFIX.match(line)
        head = prefix.group(0) if prefix else ""
        rest = line[len(head) :]
        content = _INNER_SPACES.sub(" ", rest.replace(IMAGE_MARK, "")).strip(" ")
        if rest.lstrip(" ").startswith(IMAGE_MARK) and content:
            content = escape_line_starts(content)
        bare = content[:-1].rstrip(" ") if _ends_in_break(content) else content
        if bare:
            kept.append(head + content)
            continue
        marker = head.strip(" ")
        if marker and marker != ">":
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            width = len(head)
            if j < len(lines) and lines[j].startswith(" " * width) and lines[j].strip():
                lines[j] = head + lines[j][width:].lstrip(" ")  # read again: it may hold marks too
                i = j
                continue
        if kept and _ends_in_break(kept[-1]) and not _ends_in_break(content):
            kept[-1] = kept[-1][:-1].rstrip(" ")
    return "\n".join(kept)


def drop_image_marks(blocks: list[Block]) -> list[Block]:
    """``blocks`` with :data:`IMAGE_MARK` removed, and the blocks and lines left empty by it.

    A paragraph's lines are re-escaped where a mark hid a line start (``1.``, ``#``, ``-``).
    """
    out: list[Block] = []
    for md, tx, kind in blocks:
        if IMAGE_MARK in md:
            if kind == "p":
                md = _paragraph_without_marks(md)
            elif kind == "h":
                md = _INNER_SPACES.sub(" ", md.replace(IMAGE_MARK, "")).rstrip(" ")
                md = md if md.strip("# ") else ""
            else:
                md = _lines_without_marks(md)
            if not md.strip():
                continue
        out.append((md, tx, kind))
    return out


def only_titles_left(blocks: list[Block], start: int) -> bool:
    """True when pruning emptied a container of everything but headings or a short label."""
    dropped = False
    for _md, tx, kind in blocks[start:]:
        if kind == "x":
            dropped = True
        elif kind != "h" and len(tx) > 40:
            return False
    return dropped


def heading_level(block: Block) -> int:
    """1-6 for a heading block, 0 for anything else."""
    return len(block[0]) - len(block[0].lstrip("#")) if block[2] == "h" else 0


def drop_orphan_headings(blocks: list[Block]) -> list[Block]:
    """Drop headings whose section was pruned away ("Related stories" over a removed link list)."""
    out: list[Block] = []
    pending_drop = False
    for block in reversed(blocks):
        if block[2] == "x":
            pending_drop = True
            continue
        if block[2] == "h" and pending_drop:
            level = heading_level(block)
            nxt = out[-1] if out else None
            if nxt is None or (nxt[2] == "h" and heading_level(nxt) <= level):
                continue
        pending_drop = False
        if block[0]:
            out.append(block)
    out.reverse()
    return out


def one_line(blocks: list[Block]) -> str:
    """Blocks flattened into one line of inline Markdown, for a heading or a table cell.

    Paragraphs keep their inline markup; other blocks (lists, quotes, code) fall back to their
    escaped text, since their block syntax would be literal text on one line.
    """
    parts = []
    for md, tx, kind in blocks:
        if kind == "p":
            parts.append(md.replace("\\\n", " "))
        elif tx:
            parts.append(escape_inline(" ".join(tx.split())))
    return " ".join(parts).strip()


def has_nested_table(table: Node) -> bool:
    """True when ``table`` holds another table (a layout table, rendered as blocks)."""
    # css() on a node matches the node itself too, so look for a second table.
    own = table.mem_id
    return any(t.mem_id != own for t in table.css("table"))


def table_rows(table: Node, max_cells: int) -> list[tuple[bool, list[Node]]]:
    """Rows of ``table`` (not of tables nested in it) as (all cells are th, cells).

    Collection stops past ``max_cells`` cells, so a million-cell table never becomes a million
    Python objects; the caller notes the cut.
    """
    rows: list[tuple[bool, list[Node]]] = []
    cells_seen = 0

    def trs() -> Iterator[Node]:
        for part in table.iter():
            if part.tag == "tr":
                yield part
            elif part.tag in ("thead", "tbody", "tfoot"):
                yield from (tr for tr in part.iter() if tr.tag == "tr")

    for tr in trs():
        cells = [c for c in tr.iter() if c.tag in ("td", "th")]
        if cells:
            rows.append((all(c.tag == "th" for c in cells), cells))
            cells_seen += len(cells)
            if cells_seen > max_cells:
                break
    return rows


def indent(text: str, width: int) -> str:
    """Every non-empty line of ``text`` indented by ``width`` spaces."""
    pad = " " * width
    return "\n".join((pad + line) if line else "" for line in text.split("\n"))


def join_item(blocks: list[Block], width: int) -> str:
    """Blocks of one list item, continuation lines indented to the item's content column."""
    out = blocks[0][0]
    for b in blocks[1:]:
        sep = "\n" if b[2] == "list" else "\n\n"
        out += sep + b[0]
    first, _, rest = out.partition("\n")
    return first + ("\n" + indent(rest, width) if rest else "")


#: Pruning at the document's edges: a paragraph under this many characters of text ends the
#: document only as furniture ("Share this article", "Read more:", "Source:", "Back to top"),
#: and one under :data:`LEAD_CHARS` starts it only as a kicker, a dateline or a breadcrumb.
TAIL_CHARS = 40
#: ... and so does a list or table there whose whole text is under this many characters.
TAIL_LIST_CHARS = 120
LEAD_CHARS = 30
#: ... and only in a document that keeps at least this many characters of text without them:
#: a short document is not a body with furniture around it.
MIN_KEPT_CHARS = 250


def finish_blocks(blocks: list[Block]) -> list[Block]:
    """The document's blocks after the pruning rules that need the whole document.

    * Headings and rules at the end head nothing ("Related articles" over a rail that was not
      rendered), and short paragraphs, lists and tables there that do not end a sentence are
      furniture (see :data:`TAIL_CHARS`, :data:`TAIL_LIST_CHARS`): they go, from the end back
      to the first block that is none of these.
    * Short paragraphs at the start go too (see :data:`LEAD_CHARS`).
    * Labels (see :data:`LABEL_CHARS`) go anywhere, unless a list, table, code block or quote
      follows them.

    Nothing is trimmed from a document that would keep less than :data:`MIN_KEPT_CHARS`.
    """
    if any(_label(b) for b in blocks):
        blocks = [b for i, b in enumerate(blocks) if not (_label(b) and _introduces_nothing(blocks, i + 1))]
    end = len(blocks)
    while end and _trailing_furniture(blocks[end - 1]):
        end -= 1
    start = 0
    while start < end and _short(blocks[start], LEAD_CHARS):
        start += 1
    if start == 0 and end == len(blocks):
        return blocks
    if sum(len(b[1]) for b in blocks[start:end]) < MIN_KEPT_CHARS:
        return blocks
    return blocks[start:end]


def _trailing_furniture(block: Block) -> bool:
    kind = block[2]
    if kind in ("h", "hr"):
        return True
    if kind in ("list", "table"):  # tags, "print | e-mail", a row of sponsors
        return len(block[1]) < TAIL_LIST_CHARS and not _sentence(block)
    return _short(block, TAIL_CHARS) and not _sentence(block)


_SENTENCE_ENDS = (".", "!", ")", '"', "\u201c", "\u201d", "\u00bb")


def _sentence(block: Block) -> bool:
    """True when a paragraph ends like a sentence: a signature or a last line, not a label."""
    return block[1].rstrip().endswith(_SENTENCE_ENDS)


#: A paragraph this short that ends in ":" is a label ("Kontakt:", "Read more:", "Source:").
LABEL_CHARS = 25


def _label(block: Block) -> bool:
    return block[2] == "p" and len(block[1]) < LABEL_CHARS and block[1].endswith(":")


def _introduces_nothing(blocks: list[Block], after: int) -> bool:
    """True unless a list, table, code or quote follows: what "Ingredients:" introduces."""
    return after == len(blocks) or blocks[after][2] not in ("list", "table", "pre", "quote")


def _short(block: Block, limit: int) -> bool:
    # A paragraph of markup only (an image with its alt text) has no text, and is not a label.
    return block[2] == "p" and len(block[1]) < limit and (bool(block[1]) or not block[0])
