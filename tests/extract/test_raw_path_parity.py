"""The native kernels behind the engines' per-page tail match their twins exactly.

``word_count`` (``len(text.split())``), ``escape_inline`` (the walk's CommonMark escaping),
``strip_tags`` (selectolax's, in one walk) and ``simhash64``'s on-the-fly lowercasing each have
a compiled version in ``ccrawl._native``; here every one is held against its twin on the corpus
and on generated input built around its edge cases (every whitespace character, every
character whose lowercase differs, nested and namespaced tags to strip).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import engines, escape, render, simhash
from ccrawl.testing.extracteval.evaluate import load_pages
from tests.conftest import native_or_skip

_SPACES = "".join(chr(cp) for cp in range(sys.maxunicode + 1) if chr(cp).isspace())
_STRIP = ["script", "style", "template", "svg"]


def _corpus_pages(html_eval: Path) -> list[tuple[bytes, str]]:
    return [((html_eval / "pages" / p.file).read_bytes(), p.url) for p in load_pages(html_eval)]


# -- word_count ------------------------------------------------------------------------------


def test_the_engines_count_words_with_the_native_kernels_when_built() -> None:
    native = native_or_skip("h2mwalk")
    assert render.word_count is native.word_count and engines.word_count is native.word_count
    assert render.strip_tags is native.strip_tags and engines.strip_tags is native.strip_tags


def test_every_whitespace_character_separates_words() -> None:
    text = _SPACES.join(["a", "b\U0001f600", "\u00e9", "日本"]) + _SPACES
    assert render.word_count_py(text) == 4 == render.word_count(text)
    for ch in _SPACES:
        assert render.word_count(f"x{ch}y") == 2, hex(ord(ch))
    # Look-alikes that are not whitespace: zero-width space, word joiner, BOM, Mongolian vowel sep.
    for ch in "\u200b\u2060\ufeff\u180e":
        assert render.word_count(f"x{ch}y") == 1, hex(ord(ch))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from([*_SPACES, "a", "Z", "\u00e9", "\u0100", "日", "\U0001f600", "\ud800"])))
def test_native_word_count_is_split_length(text: str) -> None:
    native = native_or_skip("h2mwalk")
    assert native.word_count(text) == len(text.split()) == render.word_count_py(text)


def test_word_count_on_every_corpus_text(html_eval: Path) -> None:
    native = native_or_skip("h2mwalk")
    pages = _corpus_pages(html_eval)
    raw = engines.get_extractor("raw")
    for html, url in pages:
        text = raw.extract(html, url).text
        assert native.word_count(text) == len(text.split()), url


# -- escape_inline ---------------------------------------------------------------------------

_ESCAPE_CASES = [
    "", "plain", "a_b", "_a", "a_", "__init__", "snake_case_", "é_é", "x_\u212a", "日本_語", "&amp;",
    "&#123;", "&#;", "&x", "& amp;", "&a1;b", "&#x1F;", "&&amp;", "a&#b;", "\\`*[]<>|~", "\U0001f600*_",
    "[link](url)", "a|b|c", "~~s~~", "\u00e9*\u0100_\U0001f600&q;",
]  # fmt: skip


@pytest.mark.parametrize("text", _ESCAPE_CASES)
def test_native_escape_matches_the_regex_on_cases(text: str) -> None:
    native = native_or_skip("h2mwalk")
    assert native.escape_inline(text) == escape.escape_inline(text)


_ESCAPE_ALPHABET = [*"a_&#;1 Z\\*`[]<>|~x!\n", "\u00e9", "日", "\U0001f600", "\u212a"]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(_ESCAPE_ALPHABET), max_size=24))
def test_native_escape_matches_the_regex(text: str) -> None:
    native = native_or_skip("h2mwalk")
    got = native.escape_inline(text)
    assert got == escape.escape_inline(text)
    # Same code points plus backslashes: the string is built at the width its characters need.
    assert got.replace("\\", "") == text.replace("\\", "")


# -- strip_tags ------------------------------------------------------------------------------


def _stripped(fn: Any, html: bytes | str, tags: list[str]) -> str:
    tree = LexborHTMLParser(html)
    fn(tree, tags)
    return str(tree.html)


_STRIP_DOCS = [
    "<html><head><script>x</script><style>a{}</style></head><body><p>a<svg><script>1</script><g/></svg>b"
    "<template><p>t</p></template><SCRIPT>y</SCRIPT><div><svg><svg></svg></svg><math><style>q</style></math>"
    "</div></body></html>",
    "<p>x<script>1</script></p>",
    "",
    "<!-- c --><script>z</script>",
    "<svg:svg>a</svg:svg><my-el><script></script></my-el><xmp><script></xmp><noscript><style>s</style></noscript>",
    "<table><tr><td><style>t</style>cell</td></tr><script>in table</script></table>",
    "<frameset><frame></frameset><script>after</script>",
]


@pytest.mark.parametrize("html", _STRIP_DOCS)
@pytest.mark.parametrize(
    "tags", [_STRIP, ["script"], ["svg", "script"], ["p", "td", "math"], ["my-el"], ["head"], ["frame"], []]
)
def test_native_strip_tags_leaves_the_same_document(html: str, tags: list[str]) -> None:
    native = native_or_skip("h2mwalk")
    assert _stripped(native.strip_tags, html, tags) == _stripped(render.strip_tags_py, html, tags)


class _Recording(LexborHTMLParser):
    """A parser that records what its own ``strip_tags`` was asked to remove."""

    calls: list[list[str]]

    def strip_tags(self, tags: list[str], recursive: bool = False) -> None:
        self.calls.append(list(tags))
        super().strip_tags(tags, recursive)


def test_native_strip_tags_walks_documents_itself() -> None:
    # A whole document with static tags takes the one-walk path: selectolax is only told that
    # its document changed (an empty strip), and the result is what its own strip leaves.
    native = native_or_skip("h2mwalk")
    tree = _Recording(_STRIP_DOCS[0])
    tree.calls = []
    native.strip_tags(tree, _STRIP)
    assert tree.calls == [[]]
    assert tree.html == _stripped(render.strip_tags_py, _STRIP_DOCS[0], _STRIP)
    custom = _Recording(_STRIP_DOCS[4])
    custom.calls = []
    native.strip_tags(custom, ["my-el"])
    assert custom.calls == [["my-el"]]


def test_native_strip_tags_leaves_fragments_to_selectolax() -> None:
    native = native_or_skip("h2mwalk")
    for html in ["<p>a<script>x</script>b</p><svg></svg>", "<script>only</script>", "text"]:
        want = LexborHTMLParser(html, is_fragment=True)
        got = LexborHTMLParser(html, is_fragment=True)
        render.strip_tags_py(want, _STRIP)
        native.strip_tags(got, _STRIP)
        assert got.html == want.html


def test_native_strip_tags_on_every_corpus_page(html_eval: Path) -> None:
    native = native_or_skip("h2mwalk")
    pages = _corpus_pages(html_eval)
    differ = [
        url
        for html, url in pages
        if _stripped(native.strip_tags, html, _STRIP) != _stripped(render.strip_tags_py, html, _STRIP)
    ]
    assert differ == [], f"{len(differ)} pages differ, first: {differ[:5]}"


_PIECE = st.sampled_from(["a", " ", "<p>", "</p>", "<div>", "</div>", "<svg>", "</svg>", "<script>", "</script>",
                          "<style>", "</style>", "<template>", "</template>", "<SVG>", "<math>", "</math>",
                          "<table>", "<td>", "<title>", "<textarea>", "<!--", "-->", "<head>", "<body>"])  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECE, max_size=40).map("".join))
def test_native_strip_tags_on_generated_markup(html: str) -> None:
    native = native_or_skip("h2mwalk")
    assert _stripped(native.strip_tags, html, _STRIP) == _stripped(render.strip_tags_py, html, _STRIP)


# -- simhash64 lowercases one code point at a time --------------------------------------------


def test_native_simhash_lowercases_every_cased_character_like_str_lower() -> None:
    # Every code point whose lowercase differs, and all of Latin-1, as "Q<c>q" probes in blocks
    # small enough that one disagreement shows. U+0130 and U+03A3 are left to the cases below:
    # either one sends its whole block through str.lower() instead.
    native = native_or_skip("simhash")
    probes = [
        cp
        for cp in range(sys.maxunicode + 1)
        if not 0xD800 <= cp <= 0xDFFF and (cp < 256 or chr(cp).lower() != chr(cp)) and cp not in (0x130, 0x3A3)
    ]
    assert len(probes) > 1400 and 0x212A in probes
    for i in range(0, len(probes), 48):
        text = " ".join(f"Q{chr(cp)}q {chr(cp)}" for cp in probes[i : i + 48])
        assert native.simhash64(text) == simhash.simhash64_py(text), hex(probes[i])


@pytest.mark.parametrize(
    "text",
    [
        "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ Σ ΑΣΑ ΟΔΟΣ",  # capital sigma: its lowercase depends on the neighbours
        "İstanbul İzmir iİi Kİ",  # U+0130 lowercases to two code points
        "ok then " * 40 + "ΟΔΟΣ",  # a sigma at the end sends the whole text to str.lower()
        "Kelvin \u212a \u212b Ångström",  # lowercase to Latin-1 / ASCII
        "µ ÿ Ÿ ß ẞ ǅ ǈ",
        "a\U0001d400b C\U0001d41a d e \ud800 f",  # astral word characters and a lone surrogate
        "plain ascii only here",
        "latin-1 only: Ça va? Él está aquí.",
    ],
)
def test_native_simhash_matches_twin_on_casing_edge_cases(text: str) -> None:
    native = native_or_skip("simhash")
    for t in (text, text * 7, text.upper(), text.lower()):
        assert native.simhash64(t) == simhash.simhash64_py(t)


def test_native_simhash_on_every_corpus_markdown(html_eval: Path) -> None:
    native = native_or_skip("simhash")
    pages = _corpus_pages(html_eval)[::7]
    raw = engines.get_extractor("raw")
    for html, url in pages:
        markdown = raw.extract(html, url).markdown
        assert native.simhash64(markdown) == simhash.simhash64_py(markdown), url
