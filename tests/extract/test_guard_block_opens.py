"""The nesting guard's shortcut: ``block_opens`` bounds the opening block tags ``_BLOCK_TAG`` finds.

A page with many tags skips the guard's regex pass when it cannot open more block tags than the
limit; the compiled count and its twin must agree, and the count must never fall below the
openings the regex finds (or a page nested past the limit would reach the parser whole).
"""

from __future__ import annotations

import pytest

from ccrawl.extract import guards
from tests.conftest import native_or_skip

CASES = [
    b"", b"<", b"<d", b"<div", b"<DIV>", b"<Div class='a'>", b"<divx>", b"<div_>", b"<div1>", b"<div-x>",
    b"<div\xc3\xa9>", b"<div\xc2\xa0>", b"</div>", b"<dir>", b"<dl>", b"<details open>", b"<search>",
    b"<searchx>", b"<ul>", b"<ul->", b"<<div>>", b"<div title='<div>'>", b"<p><section><aside></aside></section>",
]


@pytest.mark.parametrize("data", CASES)
def test_compiled_count_and_twin_agree(data: bytes) -> None:
    native = native_or_skip("h2mwalk")
    assert native.block_opens(data) == guards.block_opens_py(data)


@pytest.mark.parametrize("data", CASES)
def test_the_count_bounds_the_regex_openings(data: bytes) -> None:
    text = data.decode("utf-8")
    opens = sum(1 for m in guards._BLOCK_TAG.finditer(text) if not m.group(1))
    assert guards.block_opens(data) >= opens


def test_a_page_nested_past_the_limit_is_still_flattened() -> None:
    html = "<div>" * 60 + "deep" + "</div>" * 60 + "<span></span>" * 200
    utf8 = html.encode()
    assert guards.flatten_deep_nesting(html, 50, utf8=utf8) == guards.flatten_deep_nesting(html, 50)
    assert guards.flatten_deep_nesting(html, 50, utf8=utf8)[1] == 20  # 10 openings and 10 closings


def test_a_page_of_many_tags_but_few_blocks_skips_the_pass_unchanged() -> None:
    html = "<div><p>" + "<span>x</span>" * 300 + "</p></div>"
    assert guards.flatten_deep_nesting(html, 50, utf8=html.encode()) == (html, 0)
