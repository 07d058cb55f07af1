"""The shortcuts that make h2m fast give the same answers as the plain ways they replace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import boilerplate
from ccrawl.extract.boilerplate import FURNITURE, KEEP, verdict
from ccrawl.extract.engines import _is_body, get_extractor
from ccrawl.extract.escape import _INLINE, escape_inline
from ccrawl.extract.render import _CREDIT_INSIDE, _METADATA_LINE, is_metadata_line


def test_body_is_recognised_by_identity_not_by_serialised_html() -> None:
    tree = LexborHTMLParser("<body><p>a</p><p>a</p></body>")
    first, second = tree.css("p")
    body = tree.body
    assert _is_body([tree.body], body)
    assert not _is_body([first], body) and not _is_body([first, second], body)
    assert not _is_body([], body)


@pytest.mark.parametrize(
    "line",
    [
        "Foto: dpa",
        "  (c) Agentur",
        "Posted on 12.03.2019 by admin",
        "2021-04-05",
        "on 4/5/2020",
        "Read more about our products",
        "Photographs of the coast",
        "1.2.3 version 2019",
        "The new plant near Bremen, opened in May (Photo: dpa)",
        "A long caption that goes on and on about the picture above it, ending © Agentur Foto",
        "Getty Images",
        "",
    ],
)
def test_metadata_line_check_agrees_with_the_single_pattern(line: str) -> None:
    assert is_metadata_line(line) == _reference(line)


def _reference(line: str) -> bool:
    """The definition: a credit anywhere, or (under 80 characters) the single pattern."""
    return bool(_CREDIT_INSIDE.search(line)) or (len(line) < 80 and bool(_METADATA_LINE.search(line)))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789./-: ©()cCfFoOtTsSuUrReEpPhH \n\t٣")), max_size=30))
def test_metadata_line_check_agrees_on_any_text(line: str) -> None:
    assert is_metadata_line(line) == _reference(line)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1_ &#;*`[]<>|~\\é")), max_size=25))
def test_inline_escaping_shortcut_changes_nothing(text: str) -> None:
    assert escape_inline(text) == _INLINE.sub(r"\\\g<0>", text)


def test_cached_cue_verdicts_match_fresh_ones() -> None:
    cases = [
        ({"class": "site-footer"}, FURNITURE),
        ({"class": "entry-content read-more"}, KEEP),
        ({"class": "category-newsletter post"}, KEEP),
        ({"id": "nav", "class": None}, FURNITURE),
        ({"class": "navigate"}, KEEP),
        ({"class": "section--ads box"}, KEEP),
    ]
    boilerplate._cue_cache.clear()
    for attrs, expected in cases:
        assert verdict(attrs) == expected  # fresh
        assert verdict(attrs) == expected  # cached
    # A full cache is emptied rather than grown.
    boilerplate._cue_cache.update({(str(i), None): False for i in range(boilerplate._CUE_CACHE_SIZE)})
    assert verdict({"class": "sidebar"}) == FURNITURE
    assert len(boilerplate._cue_cache) == 1


@pytest.mark.parametrize("engine", ["h2m", "raw", "readability"])
def test_utf8_bytes_and_their_text_extract_alike(engine: str) -> None:
    html = (Path(__file__).parent / "golden" / "article.html").read_text(encoding="utf-8")
    extractor = get_extractor(engine)
    from_bytes = extractor.extract(html.encode("utf-8"), "https://example.com/a")
    from_text = extractor.extract(html, "https://example.com/a")
    assert from_bytes.markdown == from_text.markdown and from_bytes.text == from_text.text
    assert from_bytes.title == from_text.title
    assert from_bytes.charset == "utf-8"


def test_non_utf8_bytes_are_parsed_from_their_decoded_text() -> None:
    html = b'<meta charset="windows-1252"><p>Gr\xfc\xdfe aus K\xf6ln, 5 \x80</p>'
    x = get_extractor("raw").extract(html)
    assert x.text == "Grüße aus Köln, 5 €"
    assert re.fullmatch(r"cp1252|windows-1252", x.charset)
