"""The visible-text sample: the compiled walk and its pure-Python twin give identical bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.commoncrawl.news import text
from tests.conftest import native_or_skip

PIECES = [b"<", b">", b"<!--", b"-->", b"<script>", b"</script>", b"<SCRIPT type=x>", b"</Script >", b"<style>",
          b"</style>", b"<svg/>", b"</svg>", b"<noscript>", b"</noscript", b"<template>", b"</template>", b"<p>",
          b"</p>", b"<b class='x'>", b" ", b"\t", b"\n", b"\r\n", b"\x0b", b"\x0c", b"word", b"W\xc3\xb6rt", b"&amp;",
          b"/", b"<scripts>", b"<br/>", b"\xff"]


def _both() -> list[object]:
    return [text.visible_text_py, pytest.param("native", id="native")]


@pytest.mark.parametrize("impl", _both())
def test_examples(impl: object) -> None:
    f = native_or_skip("newstext").visible_text if impl == "native" else impl
    assert f(b"<p>Hello <b>world</b></p><script>var x='<p>no</p>';</script> again") == b"Hello world again"  # type: ignore[operator]
    assert f(b"a<!-- hidden -->b<STYLE>p{}</style >c") == b"a b c"  # type: ignore[operator]
    assert f(b"one two three four", limit=9) == b"one two t"
    assert f(b"one two three four", limit=8) == b"one two"  # type: ignore[operator]
    assert f(b"keep <b unterminated") == b"keep"  # type: ignore[operator]
    assert f(b"xx<body><p>t</p>", start=2) == b"t"  # type: ignore[operator]
    assert f(b"abcdef", window=3) == b"abc"  # type: ignore[operator]
    assert f(b"", limit=10) == b"" and f(b"abc", limit=0) == b""  # type: ignore[operator]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60), st.integers(0, 20), st.integers(0, 400),
       st.integers(0, 200))
def test_twin_parity_generated(parts: list[bytes], start: int, window: int, limit: int) -> None:
    native = native_or_skip("newstext")
    data = b"".join(parts)
    assert native.visible_text(data, start, window, limit) == text.visible_text_py(data, start, window, limit)


def test_twin_parity_on_real_pages(corpus_dir: Path) -> None:
    native = native_or_skip("newstext")
    pages = sorted((corpus_dir / "html-eval" / "pages").glob("*.html"))[::7]
    for page in pages:
        data = page.read_bytes()
        for start, window, limit in ((0, 49152, 4096), (100, 1 << 30, 1 << 20), (0, 2000, 50)):
            want = text.visible_text_py(data, start, window, limit)
            assert native.visible_text(data, start, window, limit) == want, page
