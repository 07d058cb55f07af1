"""CommonMark escaping for text that must read back as the same text, not as Markup.

Inline: backslash, backtick, ``*``, brackets, angle brackets, ``|`` (GFM tables), ``~`` (GFM
strikethrough), ``&`` before something that looks like an entity, and ``_`` only where it could
open or close emphasis (``snake_case`` stays readable: an intraword ``_`` never does).
Line starts: ``#``, ``>``, ``+``, ``-``, ``=`` and ``1.``/``1)`` would start a heading, quote,
list or setext underline, so the first character (or the dot) is escaped.
"""

from __future__ import annotations

import re

_INLINE = re.compile(r"[\\`*\[\]<>|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|&(?=#?[A-Za-z0-9]+;)")
# Every character _INLINE can match starts with one of these: a plain character-class scan
# (fast in sre) settles the common case of text with nothing to escape.
_INLINE_CHARS = re.compile(r"[\\`*\[\]<>|~_&]")
_LINE_START = re.compile(r"^(?:([#>+=-])|(\d{1,9})([.)]))", re.MULTILINE)
_TRAILING_HASHES = re.compile(r"(\s)(#+)$")


def escape_inline(text: str) -> str:
    """Backslash-escape every character of ``text`` that CommonMark/GFM could read as markup."""
    if _INLINE_CHARS.search(text) is None:
        return text
    return _INLINE.sub(r"\\\g<0>", text)


def _line_start(m: re.Match[str]) -> str:
    if m.group(1):
        return "\\" + m.group(1)
    return m.group(2) + "\\" + m.group(3)


def escape_line_starts(text: str) -> str:
    """Escape the characters at the start of each line that would begin a block construct."""
    return _LINE_START.sub(_line_start, text)


def escape_heading_end(text: str) -> str:
    """Escape a trailing run of ``#``, which an ATX heading would otherwise swallow."""
    return _TRAILING_HASHES.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def code_span(text: str) -> str:
    """``text`` as an inline code span whose fence is longer than any backtick run inside."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_fence(text: str) -> str:
    """A fence of backticks longer than any run of three or more inside ``text``."""
    longest = max((len(r) for r in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


_DEST_UNSAFE = re.compile(r"[\s()<>\\]")


def link_destination(url: str) -> str:
    """A URL as a CommonMark link destination: spaces percent-encoded, parentheses escaped."""
    if not _DEST_UNSAFE.search(url):
        return url
    return (
        url.replace("\\", "%5C")
        .replace(" ", "%20")
        .replace("\t", "%09")
        .replace("\n", "")
        .replace("\r", "")
        .replace("<", "%3C")
        .replace(">", "%3E")
        .replace("(", "\\(")
        .replace(")", "\\)")
    )
