"""Markdown against text, word by word (issue 40): the Markdown's extra words are markup, never selection.

Every case runs the real ``h2m`` engine with the compiled walk and with the pure-Python twin.
``mdclasses.extra_tokens`` names the kind of each token the Markdown string has and the text
has not; the walk renders both from the same blocks, so ``selection`` must stay zero, and
with ``links="text"`` only the structure that spells words (list numbers, a fence's language,
escapes) may be left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccrawl.extract import engines, render
from ccrawl.testing.extracteval.articles import Article, tokens
from ccrawl.testing.extracteval.evaluate import load_pages, sample
from ccrawl.testing.extracteval.mdclasses import KINDS, extra_tokens, strip_markup_words
from tests.conftest import native_or_skip
from tests.extract.walkers import renderer_as as _renderer

URL = "https://example.com/news/story.html"
PARA = (
    "The harbour authority said on Tuesday that the new quay, built over three years at a cost of "
    "forty million, would open to container ships in the spring, doubling what the port can handle. "
)
# One page with every kind of markup that spells words, and the furniture the issue suspected
# the Markdown of keeping (a menu kept as a list, a boilerplate heading over related links, a
# caption, a byline): the pruning must take those out of both renderings alike.
PAGE = (
    "<html><body><nav><ul><li><a href='/a'>Home</a></li><li><a href='/b'>World</a></li>"
    "<li><a href='/c'>Sport</a></li></ul></nav><article><h1>Port to double its capacity</h1>"
    "<div class='byline'>By Wilhelmina Zorndorf</div>"
    f"<p>{PARA}See <a href='https://b.test/report/quay-plan'>the quay plan</a> and <b>Schweste</b>r.</p>"
    "<figure><img src='/pic/quay.jpg' alt='Cranes over the quay'><figcaption>Quartermaster "
    "photographed</figcaption></figure>"
    f"<ol><li>Dredge the channel</li><li>Build the berth</li></ol><p>{PARA}</p>"
    "<pre><code class='language-python'>print(__init__)</code></pre>"
    "<table><tr><th>year</th><th>ships</th></tr><tr><td>2024</td><td>310</td></tr></table>"
    f"<p>The __init__ of it all. {PARA}</p>"
    "<h2>Related articles</h2><ul><li><a href='/r1'>Ferry fares rise</a></li><li><a href='/r2'>Lighthouse"
    "</a></li><li><a href='/r3'>Bridge closed</a></li></ul></article></body></html>"
)
FURNITURE = ("home", "sport", "wilhelmina", "zorndorf", "quartermaster", "related", "ferry", "lighthouse")



@pytest.fixture(params=["twin", "native"])
def walker(request: pytest.FixtureRequest) -> Any:
    return render.PyRenderer if request.param == "twin" else native_or_skip("h2mwalk").Renderer


def _extract(walker: Any, html: str | bytes, url: str, links: str) -> Any:
    with _renderer(walker):
        return engines.HtmlExtractor("h2m", links).extract(html, url)


def test_each_kind_of_extra_word_is_named(walker: Any) -> None:
    x = _extract(walker, PAGE, URL, "keep")
    kinds = extra_tokens(x.markdown, x.text)
    assert kinds["selection"] == 0, (kinds, x.markdown)
    # "b.test/report/quay-plan" and "example.com/pic/quay.jpg": every word of each is extra
    assert kinds["link_destination"] >= 5 and kinds["image_source"] >= 4, kinds
    assert kinds["image_alt"] == 4  # "cranes over the quay": the text has each word as often without it
    assert kinds["list_number"] == 2 and kinds["code_info"] == 1, kinds
    assert kinds["split_word"] == 2, kinds  # "**Schweste**r" reads "schweste", "r"
    assert sum(kinds.values()) == sum((tokens(x.markdown) - tokens(x.text)).values())
    # The structure is all there, and the furniture is in neither rendering.
    for mark in ("# Port to double", "[the quay plan](https://b.test/report/quay-plan)", "1. Dredge", "```python",
                 "| year | ships |", "![Cranes over the quay](https://example.com/pic/quay.jpg)"):  # fmt: skip
        assert mark in x.markdown, (mark, x.markdown)
    for word in FURNITURE:
        assert word not in x.markdown.lower() and word not in x.text.lower(), word


def test_text_links_leave_only_structure_words(walker: Any) -> None:
    keep = _extract(walker, PAGE, URL, "keep")
    plain = _extract(walker, PAGE, URL, "text")
    kinds = extra_tokens(plain.markdown, plain.text)
    only = {k for k, v in kinds.items() if v}
    assert only <= {"list_number", "code_info", "escape", "split_word"}, kinds
    assert plain.text == keep.text
    # Taking images and destinations out of the kept Markdown is what links="text" renders.
    assert tokens(strip_markup_words(keep.markdown)) == tokens(plain.markdown)


def test_native_and_twin_name_the_same_extra_words() -> None:
    native = native_or_skip("h2mwalk").Renderer
    a = _extract(render.PyRenderer, PAGE, URL, "keep")
    b = _extract(native, PAGE, URL, "keep")
    assert (a.markdown, a.text) == (b.markdown, b.text)
    assert extra_tokens(a.markdown, a.text) == extra_tokens(b.markdown, b.text)


def test_kinds_of_a_handmade_markdown() -> None:
    md = (
        "1. See [the plan](https://b.test/x-y) ![Alt words](https://c.test/p.jpg)\n\n```rust\nfn main\n```\n\n"
        "snake\\_case **Sch**ule"  # "snake", "_case": an escape splits the word
    )
    text = "See the plan\nfn main\nsnake_case Schule"
    kinds = extra_tokens(md, text)
    assert kinds == {
        "link_destination": 5, "image_alt": 2, "image_source": 5, "list_number": 1,
        "code_info": 1, "escape": 2, "split_word": 2, "selection": 0,
    }  # fmt: skip
    assert set(kinds) == set(KINDS)
    assert extra_tokens("Extra words here", "here")["selection"] == 2


def test_markdown_selects_nothing_the_text_does_not_on_html_eval(html_eval: Path, walker: Any) -> None:
    """Every 10th annotated page, both link modes: selection under 0.01% of the text's tokens."""
    selected = total = 0
    plain_md = plain_common = 0
    for page in sample(load_pages(html_eval), 10):
        html = (html_eval / "pages" / page.file).read_bytes()
        keep = _extract(walker, html, page.url, "keep")
        plain = _extract(walker, html, page.url, "text")
        selected += extra_tokens(keep.markdown, keep.text)["selection"]
        total += sum(tokens(keep.text).values())
        md, tx = tokens(plain.markdown), tokens(plain.text)
        plain_md += sum(md.values())
        plain_common += sum((md & tx).values())
    assert total > 50_000 and selected <= total * 0.0001, (selected, total)
    assert plain_common / plain_md >= 0.99, (plain_common, plain_md)


def test_default_markdown_is_as_precise_as_the_text_on_corpus2(corpus2: list[Article]) -> None:
    from ccrawl.testing.extracteval.articles import TokenScore, score_text

    text, md = TokenScore(), TokenScore()
    for a in corpus2:
        x = engines.get_extractor("h2m").extract(a.html.read_bytes(), a.url)
        assert extra_tokens(x.markdown, x.text)["selection"] == 0, a.stem
        text.add(score_text(x.text, a.expected))
        md.add(score_text(x.markdown, a.expected))
    assert abs(md.precision - text.precision) <= 0.01, (md.as_dict(), text.as_dict())
