"""Fuzz targets over the parsers that meet hostile bytes: the WARC reader, the gzip member scan,
URL canonicalisation and SURT, and the HTML-to-Markdown walk.

Each :class:`Target` is a hypothesis strategy and a check that raises ``AssertionError`` when a
property fails. The tests (``tests/fuzz``) run every target for a few seconds; ``bench/fuzz.py
--target NAME --minutes M`` runs one for as long as asked and prints how many examples it tried.
The properties:

* ``warc``: hand-made WARC files, gzipped per record, as one stream or plain, with empty members,
  lying Content-Lengths, and then cut, flipped, spliced or padded. Reading never raises anything
  but :class:`~ccrawl.errors.InputError`; with ``skip_bad_records`` it raises nothing past offset
  0; the strict read is a prefix of the skipping one; every ``(offset, length)`` it gives slices
  out a file that reads back as that one record; an undamaged file reads back whole.
* ``members``: concatenations of gzip members (empty ones too), junk, cut and flipped bytes: the
  native scan and its pure-Python twin yield the same members and fail with the same message,
  whatever the chunk size; on undamaged input the members tile the input.
* ``url``: URL-shaped and arbitrary text: canonicalisation and SURT give the same answer (or the
  same InputError) natively and in Python, and raise nothing else.
* ``h2m``: hostile HTML (deep nesting, broken tags, huge attributes, odd bytes): the ``h2m``
  extractor returns strings, within a time budget per input byte, natively and in Python alike.

hypothesis is a development dependency: import this module from tests and benchmarks only.
"""

from __future__ import annotations

import gzip
import io
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.errors import InputError

if TYPE_CHECKING:
    from ccrawl.warc.reader import Record as WarcRecord

__all__ = ["TARGETS", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    """A fuzz target: what to generate and what must hold for every example."""

    name: str
    strategy: st.SearchStrategy[Any]
    check: Callable[[Any], None]


# -- WARC files ----------------------------------------------------------------------------------

_WARC_TYPES = ["response", "request", "resource", "warcinfo", "metadata", "revisit", "conversion"]


@st.composite
def _record(draw: st.DrawFn, i: int) -> tuple[bytes, bool]:
    """One WARC record, and whether its Content-Length tells the truth."""
    wtype = draw(st.sampled_from(_WARC_TYPES))
    body = draw(st.binary(max_size=200) | st.sampled_from([b"", b"WARC/1.1\r\n", b"\r\n\r\n", b"HTTP/1.1 200"]))
    if wtype in ("response", "revisit"):
        enc = draw(st.sampled_from([b"", b"Content-Encoding: gzip\r\n", b"Transfer-Encoding: chunked\r\n"]))
        if enc.startswith(b"Content-Encoding") and draw(st.booleans()):
            body = gzip.compress(body, mtime=0)
        body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + enc + b"\r\n" + body
    lie = draw(st.one_of(st.none(), st.none(), st.none(), st.integers(0, 400)))
    honest = lie is None or lie == len(body)
    length = len(body) if lie is None else lie
    head = (
        b"WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:fuzz-%d>\r\n" % (wtype.encode(), i)
        + b"WARC-Target-URI: http://example.com/%d\r\nContent-Length: %d\r\n\r\n" % (i, length)
    )
    return head + body + b"\r\n\r\n", honest


class Trickle(io.RawIOBase):
    """A stream that hands out at most ``step`` bytes per read, as a socket or a pipe may."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        n = self.step if size < 0 else min(size, self.step)
        chunk = self.data[self.pos : self.pos + n]
        self.pos += len(chunk)
        return chunk


@st.composite
def warc_files(draw: st.DrawFn) -> tuple[bytes, int, bool, int]:
    """(file bytes, records written, True when undamaged and every length honest, bytes per read)."""
    n = draw(st.integers(0, 6))
    made = [draw(_record(i)) for i in range(n)]
    records = [r for r, _ in made]
    clean = all(h for _, h in made)
    layout = draw(st.sampled_from(["members", "members", "plain", "one-stream"]))
    empty = gzip.compress(b"", mtime=0)
    if layout == "members":
        parts: list[bytes] = []
        for r in records:
            parts.extend([empty] * draw(st.integers(0, 2)))
            parts.append(gzip.compress(r, mtime=0))
        parts.extend([empty] * draw(st.integers(0, 1)))
        data = b"".join(parts)
    elif layout == "one-stream":
        data = gzip.compress(b"".join(records), mtime=0)
    else:
        data = b"".join(records)
    damage = draw(st.sampled_from(["none", "none", "cut", "flip", "splice", "pad"]))
    if data and damage != "none":
        clean = False
        at = draw(st.integers(0, len(data) - 1))
        if damage == "cut":
            data = data[:at]
        elif damage == "flip":
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif damage == "splice":
            data = data[:at] + draw(st.binary(min_size=1, max_size=40) | st.just(empty)) + data[at:]
        else:
            data = data + draw(st.binary(min_size=1, max_size=40))
    step = draw(st.sampled_from([1 << 30, 1 << 30, 1, 3, 17, 100]))
    return data, n, clean, step


def _read(data: bytes, skip: bool, step: int = 1 << 30) -> tuple[list[WarcRecord], InputError | None]:
    from ccrawl.warc.reader import iter_records

    got: list[WarcRecord] = []
    try:
        for rec in iter_records(Trickle(data, step), skip_bad_records=skip, on_skip=lambda _: None):  # type: ignore[arg-type]
            got.append(rec)
    except InputError as exc:
        return got, exc
    return got, None


def check_warc(example: tuple[bytes, int, bool, int]) -> None:
    from ccrawl.warc.reader import iter_records

    data, n, clean, step = example
    strict, strict_error = _read(data, False, step)
    loose, loose_error = _read(data, True, step)
    if loose_error is not None:  # only the sniff of the first bytes may refuse the whole input
        assert "at offset 0" in str(loose_error) or "ARC file" in str(loose_error), loose_error
    ids = [r.record_id for r in loose]
    assert [r.record_id for r in strict] == ids[: len(strict)], "the strict read is not a prefix"
    if strict_error is None:
        assert len(strict) == len(loose)
    if clean:
        assert strict_error is None, strict_error
        assert [r.url for r in strict] == [f"http://example.com/{i}" for i in range(n)]
    for rec in loose:
        if rec.offset is None or rec.length is None:
            continue
        assert rec.length > 0
        alone = list(iter_records(io.BytesIO(data[rec.offset : rec.offset + rec.length])))
        assert len(alone) == 1 and alone[0].record_id == rec.record_id and alone[0].block == rec.block


# -- gzip members --------------------------------------------------------------------------------


@st.composite
def gzip_streams(draw: st.DrawFn) -> tuple[bytes, int, bool]:
    """(bytes, chunk size, True when undamaged)."""
    parts = draw(
        st.lists(
            st.binary(max_size=300).map(lambda b: gzip.compress(b, mtime=0))
            | st.just(gzip.compress(b"", mtime=0))
            | st.binary(min_size=1, max_size=20),
            max_size=8,
        )
    )
    data = b"".join(parts)
    clean = True
    for p in parts:
        try:
            clean = clean and p[:2] == b"\x1f\x8b" and gzip.decompress(p) is not None
        except Exception:
            clean = False
    damage = draw(st.sampled_from(["none", "none", "cut", "flip"]))
    if data and damage != "none":
        clean = False
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] if damage == "cut" else data[:at] + bytes([data[at] ^ 0x55]) + data[at + 1 :]
    chunk = draw(st.sampled_from([1, 2, 3, 7, 64, 4096, 1 << 20]))
    return data, chunk, clean


def _scan(
    fn: Callable[[BinaryIO, int], Iterable[tuple[int, int]]], data: bytes, chunk: int
) -> tuple[list[tuple[int, int]], str | None]:
    got: list[tuple[int, int]] = []
    try:
        for offset, length in fn(io.BytesIO(data), chunk):
            got.append((offset, length))
    except InputError as exc:
        return got, str(exc)
    return got, None


def check_members(example: tuple[bytes, int, bool]) -> None:
    from ccrawl.warc import members

    data, chunk, clean = example
    twin = _scan(members.iter_members_py, data, chunk)
    native = accel.native("gzmembers")
    if native is not None:
        assert _scan(native.iter_members, data, chunk) == twin, "native and twin differ"
    got, error = twin
    pos = 0
    for offset, length in got:
        assert offset == pos and length > 0
        pos += length
    if clean:
        assert error is None and pos == len(data), (error, pos)


# -- URLs ----------------------------------------------------------------------------------------

_URL_PIECES = [
    "http://", "https://", "HTTP://", "ftp://", "//", "/", "?", "#", "&", "=", ":", "@", ".", "..", "%", "%2e",
    "%zz", "%00", "%C3%A9", "www.", "Example.COM", "a", "xn--", "xn--fiqs8s", "食狮", "é", "ß", "\u0130",
    "[::1]", "[", "]", "127.0.0.1", "0x7f.1", "999.1.1.1", ":80", ":443", ":0", ":99999", ";jsessionid=",
    "utm_source", "fbclid", "(S(abcdefghijklmnopqrstuvwx))", " ", "\t", "\n", "\\", "\x00", "\ud800", "~",
]

urls = st.lists(st.sampled_from(_URL_PIECES) | st.text(max_size=6), max_size=14).map("".join) | st.text(max_size=60)


def _outcome(fn: Callable[[str], str], url: str) -> tuple[str, str]:
    try:
        return "ok", fn(url)
    except InputError as exc:
        return "error", str(exc)


def check_url(url: str) -> None:
    from ccrawl.url import canon, surt

    rules = canon.tracking_rules()
    py = [_outcome(canon.canonicalize_py, url), _outcome(surt.surt_py, url)]
    native_canon, native_surt = accel.native("canon"), accel.native("surt")
    if native_canon is not None:
        fn = native_canon.Canonicalizer(rules.names, rules.prefixes, rules.token_names).canonicalize
        assert _outcome(fn, url) == py[0], "canon: native and twin differ"
    if native_surt is not None:
        assert _outcome(native_surt.surt, url) == py[1], "surt: native and twin differ"
    if py[0][0] == "ok":  # a canonical URL is a fixed point
        assert _outcome(canon.canonicalize_py, py[0][1]) == py[0]


# -- HTML to Markdown ----------------------------------------------------------------------------

_TAGS = ["div", "p", "span", "a", "table", "tr", "td", "ul", "li", "pre", "code", "h1", "h3", "b", "i", "img",
         "br", "script", "style", "nav", "article", "blockquote", "svg", "math", "template", "select", "option"]
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30) | st.sampled_from(
    ["&amp;", "&#0;", "&#x110000;", "&lt;", "<!--", "-->", "<![CDATA[", "]]>", "*", "_", "`", "#", "|", "\\", "\r"]
)


@st.composite
def _element(draw: st.DrawFn, inner: str) -> str:
    tag = draw(st.sampled_from(_TAGS))
    attr = draw(st.sampled_from(["", ' href="/x"', ' href="javascript:x"', ' class="nav sidebar"', " colspan=99999",
                                 ' src="data:,x"', ' href="' + "a" * 300 + '"', " hidden", ' lang="de"']))
    close = draw(st.sampled_from([f"</{tag}>", f"</{tag}>", "", "</div>"]))
    return f"<{tag}{attr}>{inner}{close}"


html_pages = st.recursive(
    _TEXT,
    lambda inner: st.lists(inner, min_size=1, max_size=5).map("".join).flatmap(_element),
    max_leaves=50,
).flatmap(
    lambda body: st.tuples(st.just(body), st.integers(0, 300), st.booleans())
).map(
    lambda t: ("<div><b>" * t[1]) + t[0] + ("</b></div>" * (t[1] if t[2] else 0))
) | st.binary(max_size=400)

#: CPU seconds an extraction may take: a fixed start-up plus a budget per input byte (generous; a
#: hang or a quadratic walk blows through it by orders of magnitude). CPU time, not wall time: a
#: run under ``nice`` on a loaded machine waits for the CPU without being slow itself.
H2M_SECONDS_BASE = 2.0
H2M_SECONDS_PER_BYTE = 50e-6


def check_h2m(html: str | bytes) -> None:
    from ccrawl.extract import engines as engines_module
    from ccrawl.extract import render

    engines: Any = engines_module  # its Renderer is swapped for one implementation, then the other

    size = len(html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html)
    results = []
    renderers = [render.PyRenderer]
    native = accel.native("h2mwalk")
    if native is not None:
        renderers.append(native.Renderer)
    saved = engines.Renderer
    try:
        for cls in renderers:
            engines.Renderer = cls
            started = time.thread_time()
            x = engines.HtmlExtractor("h2m").extract(html, "https://example.com/a/b.html")
            took = time.thread_time() - started
            assert isinstance(x.markdown, str) and isinstance(x.text, str)
            assert took < H2M_SECONDS_BASE + H2M_SECONDS_PER_BYTE * size, f"{took:.2f} CPU s for {size} bytes"
            results.append((x.markdown, x.text, x.notes, x.truncated))
    finally:
        engines.Renderer = saved
    if len(results) == 2:
        assert results[0] == results[1], "h2m: native and twin differ"


TARGETS = {
    "warc": Target("warc", warc_files(), check_warc),
    "members": Target("members", gzip_streams(), check_members),
    "url": Target("url", urls, check_url),
    "h2m": Target("h2m", html_pages, check_h2m),
}
