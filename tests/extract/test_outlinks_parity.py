"""The native ``outlinks`` (the resolver's common cases in C) matches ``urls.outlinks`` exactly:
the same list, and the same resolver cache left behind for the render walk that reads it."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import engines, render, urls
from ccrawl.testing.extracteval.evaluate import load_pages
from tests.conftest import native_or_skip

_SPACES = "".join(chr(cp) for cp in range(sys.maxunicode + 1) if chr(cp).isspace())


def _both(hrefs: list[str], base: str, limit: int = 10_000) -> tuple[tuple[list[str], dict[str, str]], ...]:
    native = native_or_skip("h2mwalk")
    twin_resolver, native_resolver = urls.Resolver(base), urls.Resolver(base)
    twin = urls.outlinks(hrefs, twin_resolver, limit)
    fast = native.outlinks(hrefs, native_resolver, limit)
    return (twin, twin_resolver.cache), (fast, native_resolver.cache)


def test_the_engines_take_the_native_outlinks_when_built() -> None:
    native = native_or_skip("h2mwalk")
    assert render.outlinks is native.outlinks and engines.outlinks is native.outlinks


def test_every_rule_of_the_resolver_on_chosen_hrefs() -> None:
    hrefs = [
        "", "   ", "#top", " #x", "javascript:void(0)", "JavaScript:go()", "\tMAILTO:a@b", "tel:1", "Data:x",
        "about:blank", "http://a.test/x#frag", "https://a.test/y z", " https://a.test/y z ", "//cdn.test/p",
        "/root?q=1#f", "rel/path", "../up", "?q=2", "http://a.test/x#other", "HTTP://A.TEST/caps",
        "\u00a0/nbsp-stripped", "javascr\u0130pt:x", "\u212aavascript:x", "j\u00e1vascript:x", "\u3000//wide",
        "ftp://f.test/", "http:/one-slash", "https://a.test/" + "\u00e9",
    ]
    for base in ("https://site.test/dir/page.html", "http://site.test", "", "not a url", "//x"):
        (twin, twin_cache), (fast, fast_cache) = _both(hrefs, base)
        assert fast == twin, base
        assert fast_cache == twin_cache, base
    (twin, _), (fast, _) = _both(["http://a.test/1", "http://a.test/2", "http://a.test/1", "http://a.test/3"],
                                 "http://a.test/", limit=2)
    assert fast == twin == ["http://a.test/1", "http://a.test/2"]


def test_a_cached_href_is_not_resolved_again() -> None:
    native = native_or_skip("h2mwalk")
    resolver = urls.Resolver("https://site.test/")
    resolver.cache["/planted"] = "https://elsewhere.test/planted"
    assert native.outlinks(["/planted"], resolver, 10) == ["https://elsewhere.test/planted"]


_PIECES = ["http://", "https://", "//", "/", "#", "javascript:", "MAILTO:", "tel:", "data:", "about:", "a", "B",
           ".", "..", "?", "=", " ", "%", "\u00e9", "\u0130", "\u212a", "\U0001f600", *_SPACES[:8], "\u3000"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_PIECES), max_size=6).map("".join), max_size=12),
    st.sampled_from(["https://site.test/a/b.html", "http://h.test", "", "mailto:x", "https://h.test/?q#f"]),
    st.integers(min_value=1, max_value=8),
)
def test_native_outlinks_match_the_twin_on_generated_hrefs(hrefs: list[str], base: str, limit: int) -> None:
    (twin, twin_cache), (fast, fast_cache) = _both(hrefs, base, limit)
    assert fast == twin
    assert fast_cache == twin_cache


def test_native_outlinks_match_the_twin_on_the_corpus(html_eval: Path) -> None:
    for page in load_pages(html_eval):
        tree = LexborHTMLParser((html_eval / "pages" / page.file).read_bytes())
        _, hrefs = engines._head_and_hrefs(tree)
        for limit in (10_000, 7):
            (twin, twin_cache), (fast, fast_cache) = _both(hrefs, page.url, limit)
            assert fast == twin, page.file
            assert fast_cache == twin_cache, page.file


def test_a_budget_without_links_changes_nothing_but_the_links(html_eval: Path) -> None:
    import dataclasses

    from ccrawl.extract.model import NO_LINKS_BUDGET, Budget

    pages = load_pages(html_eval)[:40]
    collected = 0
    for name in ("h2m", "readability", "raw"):
        ex = engines.get_extractor(name)
        for page in pages:
            html = (html_eval / "pages" / page.file).read_bytes()
            full = dataclasses.asdict(ex.extract(html, page.url))
            lean = dataclasses.asdict(ex.extract(html, page.url, budget=NO_LINKS_BUDGET))
            capped = ex.extract(html, page.url, budget=Budget(max_outlinks=3)).outlinks
            collected += len(full["outlinks"])
            assert lean["outlinks"] == []
            assert capped == full["outlinks"][:3], page.file
            for key in ("elapsed_ms", "outlinks"):
                full.pop(key), lean.pop(key)
            assert lean == full, (name, page.file)
    assert collected > 1000  # the default budget does collect them


def test_plain_relative_paths_resolve_as_urljoin_does_without_it() -> None:
    from urllib.parse import urljoin

    from ccrawl.extract.urls import Resolver

    hrefs = ["c", "c/d.html", "c/d?x=1#y", "c#f", "é/ü", "a b", "%20x", "c;p", "c?", "c#", "c?#f", "./c",
             "../c", "a/../b", "a/./b", "a//b", "x:y", "a\tb", ".hidden", "a/.b"]
    bases = ["https://h", "https://h/", "http://h/a/b.html?q=1#f", "https://H:8080/A/b;p", "https://h/a/./b/c",
             "https://h//a/b", "ftp://h/a/b"]
    for base in bases:
        r = Resolver(base)
        for h in hrefs:
            assert r._resolve(h) == urljoin(base, h), (base, h)
    # the fast path is taken where it can be, and only there
    assert Resolver("http://h/a/b.html").directory == "http://h/a/"
    assert Resolver("https://h/a/./b").directory == "" and Resolver("ftp://h/a").directory == ""
