"""The compiled walk (``ccrawl._native.h2mwalk``) renders exactly what the pure-Python twin does.

Both renderers run on the same parsed page, through the real engines (the engines module's
``Renderer`` is pointed at one implementation, then the other): Markdown, text, notes and the
truncation flag must be identical on every corpus page, on generated hostile HTML and on the
guard cases of ``test_extract_guards.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import engines, render
from ccrawl.extract.model import DEFAULT_BUDGET, Budget
from ccrawl.extract.urls import Resolver
from ccrawl.testing.extracteval.evaluate import load_pages
from tests.conftest import native_or_skip
from tests.extract.walkers import renderer_as as _renderer

URL = "https://example.com/news/2024/story.html"
Result = tuple[str, str, list[str], bool]


@pytest.fixture(scope="module")
def native() -> Any:
    return native_or_skip("h2mwalk")



def _extract(cls: Any, engine: str, html: bytes | str, budget: Budget = DEFAULT_BUDGET) -> Result:
    with _renderer(cls):
        x = engines.HtmlExtractor(engine).extract(html, URL, budget=budget)
    return x.markdown, x.text, x.notes, x.truncated


def _assert_same(native: Any, engine: str, html: bytes | str, budget: Budget = DEFAULT_BUDGET) -> None:
    got = _extract(native.Renderer, engine, html, budget)
    want = _extract(render.PyRenderer, engine, html, budget)
    assert got == want, f"{engine}: native and twin differ"


def test_the_engines_use_the_native_walk_and_it_reads_the_probe(native: Any) -> None:
    assert render.Renderer is native.Renderer and engines.Renderer is native.Renderer
    assert render.PyRenderer is not native.Renderer
    assert native.LOADED and native.layout_problem() == ""


# -- (a) the corpus ------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["h2m", "readability", "raw"])
def test_every_corpus_page_renders_identically(native: Any, html_eval: Path, engine: str) -> None:
    pages = load_pages(html_eval)
    differ = []
    for page in pages:
        html = (html_eval / "pages" / page.file).read_bytes()
        with _renderer(native.Renderer):
            got = engines.HtmlExtractor(engine).extract(html, page.url)
        with _renderer(render.PyRenderer):
            want = engines.HtmlExtractor(engine).extract(html, page.url)
        if (got.markdown, got.text, got.notes, got.truncated) != (want.markdown, want.text, want.notes, want.truncated):
            differ.append(page.file)
    assert len(pages) > 900
    assert differ == [], f"{len(differ)} pages differ, first: {differ[:5]}"


# -- (b) generated hostile HTML --------------------------------------------------------------

_TAGS = (
    "div", "p", "span", "a", "b", "strong", "em", "i", "del", "s", "code", "kbd", "pre", "ul", "ol",
    "li", "menu", "dir", "dl", "dt", "dd", "h1", "h2", "h3", "h6", "blockquote", "table", "thead",
    "tbody", "tfoot", "tr", "td", "th", "caption", "hr", "br", "wbr", "img", "nav", "aside", "form",
    "header", "footer", "figure", "figcaption", "main", "article", "section", "template", "svg",
    "math", "mi", "noscript", "button", "select", "option", "my-widget", "x-y", "Custom-Tag", "font",
    "center", "label", "sup", "picture", "iframe", "textarea", "dialog", "details", "summary",
)  # fmt: skip
_WORDS = (
    "nav", "menu", "footer", "share", "related", "read-more", "sr-only", "visually-hidden", "content",
    "entry-content", "has-sidebar", "tag-social", "ad", "ads", "post", "body", "x", "NAV", "Footer",
    "section--ads", "K\u212a", "nav\n", "comments_list", "\u0130d",
)  # fmt: skip
_PIECES = [
    *"abc XYZ019*_`[]<>|~&#!\\().-+=:/\t\n",
    *("\u00a0", "\u2003", "\u3000", "\u0085", "\x0b", "\x1c", "\u00e9", "\u20ac", "\U0001f600"),
    *("Foto: ", "12.3.2024", "&amp;", "&nbsp;", "&lt;", "&#x2003;", "&#160;", "&bogus;"),
    *("<!-- c -->", "<![CDATA[d]]>", "<?pi x?>"),
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)
_ATTR = st.one_of(
    st.tuples(st.sampled_from(["class", "id"]), st.lists(st.sampled_from(_WORDS), max_size=3).map(" ".join)),
    st.sampled_from(
        [
            ("hidden", None), ("aria-hidden", "true"), ("style", "display: none"), ("style", "color:red"),
            ("role", "navigation"), ("role", "Main"), ("role", "main"), ("itemprop", "articleBody"),
            ("href", "/rel path(1)"), ("href", "javascript:void(0)"), ("href", "https://x.org/a b"),
            ("href", ""), ("alt", "a *pic*"), ("src", "data:image/png;base64,x"), ("data-src", "/lazy.png"),
            ("start", "7"), ("start", " 12 "), ("class", "language-python"), ("xlink:href", "/x"),
            ("data-flag", None), ("class", ""),
        ]
    ),
)  # fmt: skip


def _element(children: list[str]) -> st.SearchStrategy[str]:
    def build(tag: str, attrs: list[tuple[str, str | None]]) -> str:
        rendered = "".join(f" {k}" if v is None else f' {k}="{v}"' for k, v in attrs)
        return f"<{tag}{rendered}>{''.join(children)}</{tag}>"

    return st.builds(build, st.sampled_from(_TAGS), st.lists(_ATTR, max_size=3))


_HTML = st.recursive(
    _TEXT,
    lambda inner: st.lists(inner, min_size=1, max_size=5).flatmap(_element),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_HTML, min_size=1, max_size=6).map("".join), st.sampled_from(["h2m", "readability", "raw"]))
def test_generated_html_renders_identically(html: str, engine: str) -> None:
    native = native_or_skip("h2mwalk")
    _assert_same(native, engine, f"<html><head><title>t</title></head><body>{html}</body></html>")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _HTML,
    st.integers(min_value=1, max_value=40),
    st.builds(
        Budget,
        max_seconds=st.just(60.0),
        max_nodes=st.integers(min_value=1, max_value=600),
        max_depth=st.integers(min_value=1, max_value=30),
        max_table_cells=st.integers(min_value=0, max_value=12),
        max_chars=st.integers(min_value=1, max_value=400),
    ),
    st.booleans(),
)
def test_guards_trip_identically_on_generated_html(html: str, nesting: int, budget: Budget, prune: bool) -> None:
    native = native_or_skip("h2mwalk")
    page = "<div><span>" * nesting + html + "</span></div>" * nesting
    body = LexborHTMLParser(page).body
    assert body is not None
    results = []
    for cls in (native.Renderer, render.PyRenderer):
        r = cls(Resolver(URL), budget, prune=prune, root_chars=len(body.text(deep=True)))
        r.in_article = prune
        results.append((r.render(body), r.notes, r.truncated, r.stopped, r.nodes, r.chars, r.table_cells))
    assert results[0] == results[1]


_CUE_PARTS = st.sampled_from(
    [
        *_WORDS,
        *("read", "more", "sr", "only", "visually", "hidden", "navigate", "nav-", "-", "_", " ", "\n", "\t"),
        *("category-", "has-", "--", "entry", "-content", "Sidebar", "\u00e9", "\u212a", "social", "\u0130"),
    ]
)
_CUE_VALUE = st.one_of(st.none(), st.lists(_CUE_PARTS, max_size=5).map("".join))


@settings(max_examples=400, deadline=None)
@given(_CUE_VALUE, _CUE_VALUE, st.sampled_from(["div", "section", "article", "span", "ul"]))
def test_class_and_id_cues_prune_identically(cls: str | None, ident: str | None, tag: str) -> None:
    native = native_or_skip("h2mwalk")

    def attr(name: str, value: str | None) -> str:
        return "" if value is None else f' {name}="{value}"'

    inner = "<li>item text</li>" if tag == "ul" else "<p>boxed text</p>"
    html = f"<body><p>lead text</p><{tag}{attr('class', cls)}{attr('id', ident)}>{inner}</{tag}><p>tail</p>"
    _assert_same(native, "h2m", html)


_META_PARTS = st.sampled_from(
    [
        *("Foto", "foto", "PHOTO", "Bild", "image", "Quelle", "Source", "credit", "Copyright", "(c)", "\u00a9"),
        *("(", ")", ":", " ", "-", ".", "/", "1", "12", "2024", "19", "20", "a", "x", "\u0661", "\u017f", "*", "_"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_META_PARTS, min_size=1, max_size=8).map("".join), min_size=1, max_size=4))
def test_dateline_and_credit_lines_drop_identically(lines: list[str]) -> None:
    native = native_or_skip("h2mwalk")
    html = "<body>" + "".join(f"<p>{line}</p><h2>{line}</h2>" for line in lines) + "<p>body text</p>"
    for engine in ("h2m", "raw"):
        _assert_same(native, engine, html)


_BYTE_PIECES = st.sampled_from(
    [
        *(b"a", b"Z", b"*", b"_", b" ", b"\n", b"\t", b"\x0b", b"\x1c", b"\xc2\xa0", b"\xc2\x85", b"\xe2\x80\x83"),
        *(b"\xe3\x80\x80", b"\xe1\x9a\x80", b"\xe2\x81\x9f", b"\xe2\x80\xaf", b"\xc2", b"\xe2\x80", b"\xe2", b"\x80"),
        *(b"\xff", b"\xf0\x9f", b"<b>", b"</b>", b"<p>", b"<li>", b"<a href=/x>", b"</a>", b"<br>", b"<code>"),
        *(b"</code>", b"<h2>", b"</h2>"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_BYTE_PIECES, max_size=40).map(b"".join), st.booleans())
def test_text_with_invalid_utf8_renders_identically(html: bytes, prune: bool) -> None:
    # Lexbor keeps bytes it cannot decode; both walks must turn them into the same U+FFFD.
    native = native_or_skip("h2mwalk")
    body = LexborHTMLParser(b"<body><ul><li>x</li></ul>" + html).body
    assert body is not None
    got = native.Renderer(Resolver(URL), DEFAULT_BUDGET, prune=prune).render(body)
    assert got == render.PyRenderer(Resolver(URL), DEFAULT_BUDGET, prune=prune).render(body)


@pytest.mark.parametrize("prune", [False, True])
def test_a_fragment_root_renders_its_whole_fragment(native: Any, prune: bool) -> None:
    root = LexborHTMLParser("<p>a <b>x</b></p><ul><li>b</li><li>c</li></ul>text", is_fragment=True).root
    got = native.Renderer(Resolver(URL), DEFAULT_BUDGET, prune=prune).render(root)
    assert got == render.PyRenderer(Resolver(URL), DEFAULT_BUDGET, prune=prune).render(root)
    assert "text" in got[1]


# -- (c) the guard cases of test_extract_guards.py --------------------------------------------

_GUARDS = [
    ("nested-divs", "<html><body>" + "<div>" * 100_000 + "deep text" + "</div>" * 100_000 + "<p>after</p>", Budget()),
    ("deep-inline", "<p>" + "<span>w " * 5000 + "end</p>", Budget(max_depth=50)),
    ("one-long-line", "<p>" + "word" * 1_000_000 + "</p>", Budget(max_chars=100_000)),
    ("huge-table", "<table>" + ("<tr>" + "<td>c</td>" * 100 + "</tr>") * 2000, Budget(max_table_cells=1000)),
    ("max-bytes", b"<p>" + b"a b " * 100_000 + b"</p>", Budget(max_bytes=10_000)),
    ("many-nodes", "".join(f"<p>p{i} <a href='/p{i}'>l</a></p>" for i in range(3000)), Budget(max_nodes=2000)),
    ("junk-bytes", b"\x00\xff" * 1000, Budget()),
    ("junk-tags", b"<<<>>></p></div><table><td>", Budget()),
    ("html-thrice", "<html>" * 3, Budget()),
]  # fmt: skip


@pytest.mark.parametrize("engine", ["h2m", "readability", "raw"])
@pytest.mark.parametrize(("html", "budget"), [g[1:] for g in _GUARDS], ids=[g[0] for g in _GUARDS])
def test_guard_cases_render_identically(native: Any, engine: str, html: bytes | str, budget: Budget) -> None:
    _assert_same(native, engine, html, budget)


def test_time_budget_stops_both_walks(native: Any) -> None:
    html = "".join(f"<p>paragraph {i} <a href='/p{i}'>link</a></p>" for i in range(60_000))
    for cls in (native.Renderer, render.PyRenderer):
        _markdown, text, notes, truncated = _extract(cls, "raw", html, Budget(max_seconds=0.05))
        assert truncated and any(n.startswith("time:") for n in notes)
        assert "paragraph 0" in text and "paragraph 59999" not in text
