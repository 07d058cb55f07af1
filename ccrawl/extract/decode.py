"""Turn a body's bytes into text, recording which step chose the charset.

Order: a byte-order mark, then the HTTP ``Content-Type`` charset, then ``<meta charset>`` /
``<meta http-equiv="content-type">`` in the first 4 KB, then uchardet (resiliparse). The BOM
goes first, ahead of the header, because it cannot be wrong about the bytes that follow it and
browsers (WHATWG "encoding sniffing") let it win; on pages without a BOM the order is the
header's, as the capture schema documents. Labels are mapped the WHATWG way (``iso-8859-1``
and ``ascii`` mean windows-1252, ``gb2312`` means GBK), since that is what the page's author
saw in a browser.

A declared charset the bytes do not decode under (a ``utf-8`` header over windows-1252 bytes
is common) is not trusted: the detector decides instead and the result carries a note naming
what was declared. Undecodable bytes are replaced, never raised.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import lru_cache

from resiliparse.parse.encoding import detect_encoding, map_encoding_to_html5

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:+-]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9._:+-]+)""", re.IGNORECASE)
_META_SCAN_BYTES = 4096
_DETECT_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Decoded:
    """Decoded text, the Python codec used, the step that chose it, and any repair note."""

    text: str
    charset: str
    source: str
    note: str = ""


def charset_from_content_type(content_type: str | None) -> str:
    """The ``charset`` parameter of a Content-Type value, or ``""``."""
    if not content_type:
        return ""
    m = _HEADER_CHARSET.search(content_type)
    return m.group(1) if m else ""


def normalise_label(label: str) -> str:
    """A charset label as the Python codec a browser would use, or ``""`` when unknown."""
    label = label.strip().strip("\"'").lower()
    if not label:
        return ""
    try:
        codecs.lookup(label)
    except LookupError:
        return ""
    mapped = map_encoding_to_html5(label)
    return str(mapped) if mapped else ""


def sniff_bom(data: bytes) -> tuple[str, int]:
    """The encoding named by a byte-order mark and the mark's length, or ``("", 0)``."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    return "", 0


def charset_from_meta(data: bytes) -> str:
    """The charset a ``<meta>`` tag declares in the first 4 KB, or ``""``."""
    m = _META_CHARSET.search(data, 0, _META_SCAN_BYTES)
    if not m:
        return ""
    label = m.group(1).decode("ascii", "replace")
    # A page that reached us as ASCII-compatible bytes cannot really be UTF-16 (WHATWG rule).
    if label.lower().startswith("utf-16"):
        return "utf-8"
    return label


_ASCII = bytes(range(128))
_STATEFUL = ("utf_7", "utf-7", "hz", "iso2022", "iso-2022")


@lru_cache(maxsize=64)
def ascii_compatible(codec: str) -> bool:
    """True when ``codec`` decodes every ASCII byte string to the same characters (windows-125x,
    ISO 8859, UTF-8, GBK...): not UTF-16/32, nor a codec whose escapes are ASCII (UTF-7, HZ, ISO-2022)."""
    try:
        name = codecs.lookup(codec).name
        return not name.startswith(_STATEFUL) and _ASCII.decode(codec) == _ASCII.decode("ascii")
    except (UnicodeDecodeError, LookupError):
        return False


#: What uchardet (``detect_encoding(..., html5_compatible=True)``) answers for non-empty ASCII
#: bytes without an escape (ESC starts ISO-2022, ``~{`` HZ): its "ASCII", which WHATWG maps to
#: windows-1252. Every one of the 1,093 ASCII pages of the labelled corpora, and
#: tests/extract/test_decode_charset.py pins it against the detector.
_ASCII_DETECTED = "cp1252"


def _escape_free(data: bytes) -> bool:
    """For ASCII bytes: non-empty, no ESC and no ``~{`` (where the detector's answer is fixed)."""
    return bool(data) and b"\x1b" not in data and b"~{" not in data


def _strict(data: bytes, codec: str, ascii_only: bool = False) -> str | None:
    # ASCII bytes decode to the same text under any ASCII-compatible codec, and the ASCII codec
    # copies them where a charmap codec (windows-1252) maps them one by one.
    if ascii_only and ascii_compatible(codec):
        return data.decode("ascii")
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_body(data: bytes, content_type: str | None = None) -> Decoded:
    """Decode an HTML body; see the module docstring for the order of the steps."""
    bom_codec, bom_len = sniff_bom(data)
    if bom_codec:
        return Decoded(data[bom_len:].decode(bom_codec, "replace"), bom_codec, "bom")

    declared: list[tuple[str, str]] = []
    header = normalise_label(charset_from_content_type(content_type))
    if header:
        declared.append((header, "header"))
    meta = normalise_label(charset_from_meta(data))
    if meta:
        declared.append((meta, "meta"))

    ascii_only = data.isascii()
    rejected = ""
    for codec, source in declared:
        text = _strict(data, codec, ascii_only)
        if text is not None:
            return Decoded(text, codec, source)
        rejected = rejected or f"charset: {source} said {codec} but the bytes are not {codec}"

    if ascii_only and _escape_free(data):
        return Decoded(data.decode("ascii"), _ASCII_DETECTED, "detector", rejected)
    detected = str(detect_encoding(data, max_len=_DETECT_BYTES, html5_compatible=True) or "utf-8")
    text = _strict(data, detected, ascii_only)
    if text is not None:
        return Decoded(text, detected, "detector", rejected)
    # Nothing decodes cleanly: keep the first declared charset (or the detector's) and replace.
    codec, source = declared[0] if declared else (detected, "detector")
    note = f"charset: bytes are not valid {codec} ({source}); undecodable bytes replaced"
    return Decoded(data.decode(codec, "replace"), codec, source, note)
