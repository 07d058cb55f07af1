"""The compiled DOM helpers (``ccrawl._native.lxbtree``) answer exactly as their twins do.

The twins in ``ccrawl.extract.tree`` ask selectolax; the native module walks lexbor's tree by
address. Both run on the same parsed page: head fields and hrefs, the main-content candidates
(with their text lengths), and text length, link text and furniture per node, on every corpus
page and on generated hostile HTML (quirks and standards mode, foreign content, bytes that are
not UTF-8, attributes without values, duplicate matches). Then the engines themselves run with
one implementation and the other, and their whole output must be the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import engines, mainsel, readability, tree
from ccrawl.testing.extracteval.evaluate import load_pages
from tests.conftest import native_or_skip

URL = "https://example.com/news/2024/story.html"
NODE_FUNCS = ("text_length", "link_text_length", "in_furniture")


@pytest.fixture(scope="module")
def native() -> Any:
    return native_or_skip("lxbtree")


class Twins:
    """The pure-Python functions under the names the native module exports."""

    text_length = staticmethod(tree.text_length_py)
    link_text_length = staticmethod(tree.link_text_length_py)
    in_furniture = staticmethod(tree.in_furniture_py)
    head_and_hrefs = staticmethod(tree.head_and_hrefs_py)
    scored_candidates = staticmethod(tree.scored_candidates_py)
    readable_scores = staticmethod(tree.readable_scores_py)


def _parse(html: bytes | str) -> Any:
    parsed = LexborHTMLParser(html)
    parsed.strip_tags(engines._STRIP)
    return parsed


def _walk(node: Any) -> Iterator[Any]:
    """Every node under ``node``, itself included: elements, text, comments."""
    yield node
    child = node.first_child
    while child is not None:
        yield from _walk(child)
        child = child.next


def _page_answers(impl: Any, parsed: Any, min_chars: int) -> tuple[Any, ...]:
    body = parsed.body if parsed.body is not None else parsed.root
    body_chars, scored = impl.scored_candidates(body, mainsel.CANDIDATES, min_chars, 0.75)
    final, top = impl.readable_scores(body, readability._TAG_WEIGHT, readability._class_weight)
    return (
        impl.head_and_hrefs(parsed.root),
        body_chars,
        [(n, node.mem_id) for n, node in scored],
        final,
        list(final),  # the order ties are broken in
        top.mem_id if top is not None else None,
    )


def _node_answers(impl: Any, nodes: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(getattr(impl, f)(node) for f in NODE_FUNCS) for node in nodes]


def _assert_same(native: Any, parsed: Any, nodes: list[Any], min_chars: int, what: str) -> None:
    assert _page_answers(native, parsed, min_chars) == _page_answers(Twins, parsed, min_chars), what
    assert _node_answers(native, nodes) == _node_answers(Twins, nodes), what


def test_the_engines_use_the_native_helpers_and_the_probe_reads_right(native: Any) -> None:
    assert native.layout_problem() == ""
    names = (
        "text_length",
        "link_text_length",
        "in_furniture",
        "head_and_hrefs",
        "scored_candidates",
        "readable_scores",
    )
    for name in names:
        assert getattr(tree, name) is getattr(native, name), name


def test_known_page_answers(native: Any) -> None:
    html = (
        "<title> T </title><meta name=description content=d><link rel=CANONICAL href=/c>"
        "<body><nav><a href=/n>nav</a></nav><div class='Content'>" + "x" * 300 + "<a href>ab</a></div>"
    )
    for impl in (native, Twins):
        parsed = _parse(html)
        entries, hrefs = impl.head_and_hrefs(parsed.root)
        assert entries == [("title", " T "), ("description", "d"), ("canonical", "/c")]
        assert hrefs == ["/n", ""]
        body_chars, scored = impl.scored_candidates(parsed.body, mainsel.CANDIDATES, 250, 0.75)
        assert body_chars == 305 and [(n, node.tag) for n, node in scored] == [(300, "div")]  # quirks: .content
        assert impl.in_furniture(parsed.css_first("nav a")) and not impl.in_furniture(parsed.css_first("div"))
        assert impl.link_text_length(parsed.body) == 5


def test_corpus_pages_get_the_same_answers(native: Any, html_eval: Path) -> None:
    pages = load_pages(html_eval)
    assert len(pages) >= 900
    for i, page in enumerate(pages):
        parsed = _parse((html_eval / "pages" / page.file).read_bytes())
        elements = (parsed.body or parsed.root).css("*")
        # Every page's answers; per-node answers on a spread of elements (all of them would
        # take minutes through the twins' CSS queries).
        _assert_same(native, parsed, elements[i % 11 :: 11], 250, page.file)


_TAGS = (
    "div", "a", "article", "main", "p", "span", "section", "header", "nav", "aside", "footer",
    "dialog", "title", "meta", "link", "base", "table", "tr", "td", "pre", "math", "mi", "template", "li", "b", "svg",
)  # fmt: skip
_ATTRS = (
    " href", ' href="/x?a=1&amp;b=2"', " HREF=/y", " xlink:href=/m", ' class="content"',
    " class='Post  entry-content\tx'", " class=CONTENT", " class=text", " id=main", " id=Main",
    ' id="content"', " id=story", " itemprop=articleBody", " itemprop=Text", " itemprop", " role=main",
    " role=Navigation", " hidden", ' style="display: none"', " aria-hidden=true", " rel=Canonical",
    " rel=canonical", " name=description", " NAME=Description", " property=og:title",
    " property=og:description", ' content=" a  b "', " content", " lang=de",
)  # fmt: skip
_TEXTS = (
    "word ", "x" * 40, "&amp; &lt;", "é ", "\U0001f600", "<!-- c -->", "<![CDATA[cd]]>", ", , ",
    "   ", "<br>", "<a>", "a, b, c\uff0c d " * 3, "\xa0" * 3, "y" * 120,
)  # fmt: skip
# Quirks, standards, quirks by public id, limited quirks (class and id match as in standards).
_DOCTYPES = (
    "",
    "<!DOCTYPE html>",
    "<!DOCTYPE html PUBLIC '-//W3C//DTD HTML 4.01 Transitional//EN'>",
    "<!DOCTYPE html PUBLIC '-//W3C//DTD XHTML 1.0 Transitional//EN' 'http://www.w3.org/TR/xhtml1/DTD/x.dtd'>",
)
_BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82")


def _element(draw: Any, children: list[str]) -> str:
    tag = draw(st.sampled_from(_TAGS))
    attrs = "".join(draw(st.lists(st.sampled_from(_ATTRS), max_size=4)))
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>" if draw(st.booleans()) else f"<{tag}{attrs}>{''.join(children)}"


@st.composite
def _html(draw: Any) -> bytes:
    def node(depth: int) -> str:
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(_TEXTS))
        return _element(draw, [node(depth - 1) for _ in range(draw(st.integers(0, 3)))])

    doctype = draw(st.sampled_from(_DOCTYPES))
    data = (doctype + "".join(node(5) for _ in range(draw(st.integers(1, 4))))).encode()
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from(_BAD_BYTES)) + data[at:]
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(html=_html(), min_chars=st.integers(0, 60))
def test_generated_hostile_html_gets_the_same_answers(native: Any, html: bytes, min_chars: int) -> None:
    parsed = _parse(html)
    nodes = list(_walk(parsed.root.parent or parsed.root))
    _assert_same(native, parsed, nodes, min_chars, repr(html))
    # Scoring from any element: the best node may then lie above the one searched.
    for node in nodes[1::3]:
        got, want = (_readable(impl, node) for impl in (native, Twins))
        assert got == want, repr(html)


def _readable(impl: Any, node: Any) -> tuple[Any, ...]:
    final, top = impl.readable_scores(node, readability._TAG_WEIGHT, readability._class_weight)
    return final, list(final), top.mem_id if top is not None else None


@contextmanager
def _helpers(impl: Any) -> Iterator[None]:
    """Run the engines with ``impl``'s helpers (the import-time choice, swapped)."""
    bound = [
        (engines, "head_and_hrefs"), (engines, "text_length"), (mainsel, "scored_candidates"),
        (readability, "readable_scores"), (readability, "link_text_length"),
    ]  # fmt: skip
    saved = [getattr(module, name) for module, name in bound]
    for module, name in bound:
        setattr(module, name, getattr(impl, name))
    try:
        yield
    finally:
        for (module, name), value in zip(bound, saved, strict=True):
            setattr(module, name, value)


def _extract(impl: Any, engine: str, html: bytes) -> dict[str, Any]:
    with _helpers(impl):
        out = dataclasses.asdict(engines.HtmlExtractor(engine).extract(html, URL))
    out.pop("elapsed_ms")
    return out


def test_engine_output_is_the_same_with_either_implementation(native: Any, html_eval: Path) -> None:
    pages = load_pages(html_eval)[::3]
    fell_back = 0
    for page in pages:
        html = (html_eval / "pages" / page.file).read_bytes()
        for engine in ("h2m", "readability"):
            got = _extract(native, engine, html)
            assert got == _extract(Twins, engine, html), f"{engine} on {page.file}"
            fell_back += engine == "h2m" and not got["main_content"]
    assert len(pages) >= 300 and fell_back < len(pages)
