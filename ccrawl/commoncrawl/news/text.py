"""The visible-text sample language identification reads: the hot path of indexing, compiled with a twin.

``visible_text(data, start, window, limit)`` walks ``data[start:start+window]`` once:

* a tag becomes a space; ``<!-- ... -->`` is dropped;
* a ``script``, ``style``, ``noscript``, ``template`` or ``svg`` element is dropped from its start tag
  to the end of its closing tag (names matched ASCII case-insensitively);
* a ``<`` with no ``>`` after it in the window, an unclosed comment or an unclosed dropped element
  ends the walk (the text before it stands);
* runs of ASCII whitespace (and tags) collapse to one space, with none leading or trailing;
* the result is at most ``limit`` bytes (the first ``limit`` of the collapsed text, trailing space
  removed).

Bytes in, bytes out: the caller decodes with the page's charset. ``csrc/newstext.pyx`` is the compiled
version (memchr over the window, stops at ``limit``); :func:`visible_text_py` is the twin, and the tests
hold them to identical output.
"""

from __future__ import annotations

from collections.abc import Callable

from ccrawl import accel

_DROPPED = (b"script", b"style", b"noscript", b"template", b"svg")
_WS = b" \t\n\r\x0b\x0c"


def visible_text_py(data: bytes, start: int = 0, window: int = 49152, limit: int = 4096) -> bytes:
    """Pure-Python twin of the compiled walk (see the module docstring)."""
    if limit <= 0:
        return b""
    start = min(max(start, 0), len(data))
    w = data[start : start + window]
    low = w.lower()
    end = len(w)
    parts: list[bytes] = []
    pos = 0
    while pos < end:
        lt = w.find(b"<", pos)
        if lt < 0:
            parts.append(w[pos:])
            break
        parts.append(w[pos:lt])
        parts.append(b" ")
        if w.startswith(b"<!--", lt):
            close = w.find(b"-->", lt + 4)
            pos = end if close < 0 else close + 3
            continue
        gt = w.find(b">", lt + 1)
        if gt < 0:
            break
        name_end = lt + 1
        while name_end < gt and w[name_end] not in _WS and w[name_end] != 0x2F:
            name_end += 1
        name = low[lt + 1 : name_end]
        if name not in _DROPPED:
            pos = gt + 1
            continue
        close = low.find(b"</" + name, gt + 1)
        if close < 0:
            break
        gt2 = w.find(b">", close)
        if gt2 < 0:
            break
        pos = gt2 + 1
    text = b" ".join(b"".join(parts).split())
    return text[:limit].rstrip(b" ")


_native = accel.native("newstext")
visible_text: Callable[..., bytes] = _native.visible_text if _native else visible_text_py
