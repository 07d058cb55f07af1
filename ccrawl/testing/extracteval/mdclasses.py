"""Where the Markdown has words the text does not: its tokens beyond the text's, by kind (issue 40).

h2m renders Markdown and text from the same blocks in one walk, so the two carry the same
selection; what a word-level scorer (``articles.tokens``: lower-cased ``\\w`` runs) finds in the
Markdown string and not in the text can only be markup that spells words. :func:`extra_tokens`
takes the Markdown apart and names every such token's kind:

* ``link_destination``: the URL of ``[text](url)``, outside the link text
* ``image_alt`` and ``image_source``: ``![alt](src)``, an image's alt words and its URL
  (images are in the Markdown only: the text has no pictures)
* ``list_number``: the ``1.`` of an ordered list item (the text has the item, not its number)
* ``code_info``: the language after a code fence (```` ```python ````)
* ``escape``: a word split by a backslash escape (``\\_init\\_`` reads ``_init_``)
* ``split_word``: a word that emphasis, a link or a code span covers only part of
  (``**Schweste**r``, ``[Schweste](url)r``): a word-level scorer reads two words
* ``selection``: anything else, words the Markdown selected and the text did not. The tests
  hold it to zero: a difference here is a bug in one rendering, not markup.

``strip_markup_words`` is the Markdown with the first three taken out (what
``h2m+textlinks`` renders, up to where a line break falls), for scoring what each class costs.
"""

from __future__ import annotations

import re
from collections import Counter

from ccrawl.testing.extracteval.articles import tokens

KINDS = (
    *("link_destination", "image_alt", "image_source", "list_number"),
    *("code_info", "escape", "split_word", "selection"),
)

# A link destination as escape.link_destination writes it: no spaces, parentheses escaped.
_DEST = r"(?:\\.|[^\s()\\])*"
_IMAGE = re.compile(r"(?<!\\)!\[((?:\\.|[^\]\\])*)\]\((" + _DEST + r")\)")
_LINK_DEST = re.compile(r"(?<!\\)\]\((" + _DEST + r")\)")
_FENCE = re.compile(r"^([ >]*)(`{3,}|~{3,})(.*)$")
_LIST_NUMBER = re.compile(r"^((?:[ ]*>)*[ ]*)(\d{1,9})[.)](?= |$)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# Inline markup that can stand inside a word: emphasis and strikethrough runs, link brackets, code fences.
_INLINE_MARKS = re.compile(r"(?<!\\)(?:\*+|~~|\[|\]|`+)")


def _count(c: Counter[str]) -> int:
    return sum(c.values())


def _split_code(markdown: str) -> tuple[list[str], Counter[str], Counter[str]]:
    """The Markdown's lines outside code fences, the fences' info tokens, and list-number tokens."""
    lines: list[str] = []
    info: Counter[str] = Counter()
    numbers: Counter[str] = Counter()
    fence = ""
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(2).startswith(fence) and not m.group(3).strip():
                fence = ""
            else:
                lines.append(line)  # code: the text has it as is
            continue
        if m and (m.group(2)[0] == "~" or "`" not in m.group(3)):
            fence = m.group(2)
            info += tokens(m.group(3))
            continue
        n = _LIST_NUMBER.match(line)
        if n:
            numbers += tokens(n.group(2))
            line = n.group(1) + line[n.end() :]
        lines.append(line)
    return lines, info, numbers


def strip_markup_words(markdown: str) -> str:
    """``markdown`` without images and link destinations (the link text stays)."""
    return _LINK_DEST.sub("]", _IMAGE.sub("", markdown))


def extra_tokens(markdown: str, text: str) -> dict[str, int]:
    """How many of ``markdown``'s tokens the ``text`` does not have, by kind (see the module doc).

    Counts are multiset differences, so a word the text also has is not extra until the
    Markdown has it more often: the sum over the kinds is ``|tokens(markdown) - tokens(text)|``
    up to the ``escape`` kind's rounding (it never goes below zero).
    """
    want = tokens(text)
    out = dict.fromkeys(KINDS, 0)
    images = _IMAGE.findall(markdown)
    rest = _IMAGE.sub("", markdown)
    dests = _LINK_DEST.findall(rest)
    rest = _LINK_DEST.sub("]", rest)
    lines, info, numbers = _split_code(rest)
    body = "\n".join(lines)
    plain = _ESCAPE.sub(r"\1", body)
    joined = _ESCAPE.sub(r"\1", _INLINE_MARKS.sub("", body))
    out["selection"] = _count(tokens(joined) - want)
    out["split_word"] = max(0, _count(tokens(plain) - want) - out["selection"])
    out["escape"] = max(0, _count(tokens(body) - want) - out["selection"] - out["split_word"])
    # Markup words are extra only beyond what the text (less what the body already matched) has.
    room = want - tokens(plain)
    for kind, found in (
        ("list_number", numbers),
        ("code_info", info),
        ("image_alt", sum((tokens(alt) for alt, _ in images), Counter())),
        ("image_source", sum((tokens(src) for _, src in images), Counter())),
        ("link_destination", sum((tokens(d) for d in dests), Counter())),
    ):
        kept = found & room
        room -= kept
        out[kind] = _count(found - kept)
    return out
