"""h2m's precision rules (issue 21): what each prunes, what each keeps, in the walk and its twin alike.

Each case runs the real ``h2m`` engine with the compiled walk and with the pure-Python twin
(the engines' renderer swapped), and asserts on the text both produce.
"""

from __future__ import annotations

from typing import Any

import pytest

from ccrawl.extract import engines, render
from ccrawl.extract.blocks import finish_blocks
from tests.conftest import native_or_skip
from tests.extract.walkers import renderer_as as _renderer

URL = "https://example.com/news/story.html"
PARA = (
    "The harbour authority said on Tuesday that the new quay, built over three years at a cost of "
    "forty million, would open to container ships in the spring, doubling what the port can handle "
    "and bringing some two hundred jobs back to a town that lost its shipyard a decade ago. "
)




def _article(inner: str, after: str = "") -> str:
    return f"<article><h1>Port to double its capacity</h1>{inner}{after}</article>"


CARDS = (
    "<h2>More from the coast</h2>"
    '<div class="grid"><div><h3><a href="/a">Ferry fares rise again</a></h3><p>Operators blame fuel.</p></div>'
    '<div><h3><a href="/b">Lighthouse for sale</a></h3><p>The keeper retires in May.</p></div>'
    '<div><h3><a href="/c">Storm closes the bridge</a></h3><p>Traffic was diverted.</p></div></div>'
)


def test_teaser_cards_after_the_article_go_with_their_heading(text_of: Any) -> None:
    text = text_of(_article("".join(f"<p>{PARA}</p>" for _ in range(6)), CARDS))
    assert "doubling what the port can handle" in text and "Port to double its capacity" in text
    for gone in ("Ferry fares", "Operators blame fuel", "Lighthouse", "Storm closes", "More from the coast"):
        assert gone not in text


def test_a_linked_headline_before_the_text_is_the_article_s_own(text_of: Any) -> None:
    body = '<article><h2><a href="/story">Port to double its capacity</a></h2><p>Short lead.</p>'
    body += "".join(f"<p>{PARA}</p>" for _ in range(3)) + "</article>"
    text = text_of(body)
    assert "Port to double its capacity" in text and "Short lead." in text


def test_labels_and_furniture_lines_at_the_edges_go_signatures_stay(text_of: Any) -> None:
    inner = (
        "".join(f"<p>{PARA}</p>" for _ in range(3))
        + "<p>Contact us:</p><p>Ingredients:</p><ul><li>flour</li><li>salt</li></ul>"
        + "<p>Anna Berg, Oslo.</p><p>Share this article</p><ul><li>harbour</li><li>shipping</li></ul>"
        + "<h3>Read next</h3>"
    )
    text = text_of("<article><p>Breaking</p>" + _article(inner)[9:])  # a kicker above the headline
    assert "Ingredients:" in text and "flour" in text and "Anna Berg, Oslo." in text
    for gone in ("Breaking", "Contact us:", "Share this article", "shipping", "Read next"):
        assert gone not in text


def test_a_short_document_keeps_its_short_lines(text_of: Any) -> None:
    text = text_of("<p>Opening hours</p><p>Mon to Fri, 9 to 5</p><p>Closed on Sundays</p>")
    assert text.split("\n") == ["Opening hours", "Mon to Fri, 9 to 5", "Closed on Sundays"]


def test_picture_credits_inside_captions_go_long_paragraphs_with_them_stay(text_of: Any) -> None:
    credit = "<p>The new quay at dawn, seen from the old lighthouse. (Photo: Jane Doe)</p>"
    long_one = f"<p>{PARA} Photo: the harbour office published pictures of the works.</p>"
    text = text_of(_article(f"<p>{PARA}</p>{credit}{long_one}<p>{PARA}</p>"))
    assert "seen from the old lighthouse" not in text
    assert "published pictures of the works" in text


@pytest.mark.parametrize("cls", ["textwidget", "teasers", "contact-box", "buybox", "donate"])
def test_new_furniture_class_names_are_pruned(text_of: Any, cls: str) -> None:
    inner = (
        "".join(f"<p>{PARA}</p>" for _ in range(3)) + f'<div class="{cls}"><p>Something else entirely here.</p></div>'
    )
    text = text_of(_article(inner, f"<p>{PARA}</p>"))
    assert "Something else entirely" not in text and "doubling" in text


def test_finish_blocks_trims_edges_only_around_a_body() -> None:
    body = ("x" * 300, "x" * 300, "p")
    blocks = [("Top", "Top", "p"), body, ("Tags:", "Tags:", "p"), ("## More", "More", "h")]
    assert finish_blocks(blocks) == [body]
    small = [("Top", "Top", "p"), ("y" * 100, "y" * 100, "p"), ("## More", "More", "h")]
    assert finish_blocks(small) == small
    tags = ("- a\n- b", "a\nb", "list")
    steps = ("1. Mix.\n2. Bake.", "Mix.\nBake.", "list")
    assert finish_blocks([body, tags]) == [body] and finish_blocks([body, steps]) == [body, steps]
    picture = ("![a](https://e.test/a.jpg)", "", "p")
    assert finish_blocks([body, picture]) == [body, picture]


LINKED = (
    '<article><h1>Notes</h1><p>See <a href="/docs/a">the first guide</a> and <b><a href="https://b.test/x">'
    f"the second</a></b>, then the <a href='/c'>appendix</a>, which lists every berth, crane and shed that the "
    f"authority runs along the river today.</p><p>{PARA}</p></article>"
)


@pytest.mark.parametrize("cls", ["twin", "native"])
def test_links_are_their_text_by_default_and_kept_with_plus_links(cls: str) -> None:
    renderer = render.PyRenderer if cls == "twin" else native_or_skip("h2mwalk").Renderer
    with _renderer(renderer):
        keep = engines.get_extractor("h2m+links").extract(LINKED, URL)
        plain = engines.get_extractor("h2m").extract(LINKED, URL)
        assert engines.get_extractor("h2m+textlinks") is engines.get_extractor("h2m")
        assert engines.get_extractor("h2m", links="keep") is engines.get_extractor("h2m+links")
    assert "[the first guide](https://example.com/docs/a)" in keep.markdown
    assert "](" not in plain.markdown and "See the first guide and **the second**, then" in plain.markdown
    assert plain.text == keep.text and len(plain.markdown) < len(keep.markdown)
    version = engines.ENGINE_VERSION
    assert plain.extractor == f"h2m@{version}" and keep.extractor == f"h2m@{version}+links"


PICTURED = (
    f"<article><h1>Port</h1><p>{PARA}</p><figure><img src='/q.jpg' alt='Photo: Agency / Credit'></figure>"
    f"<ul><li><img src='/a.jpg' alt='icon'></li><li>Second berth</li></ul>"
    f"<p><img src='/b.jpg' alt='Advert'>1. Not a list, and <b>bold</b> <img src='/c.jpg' alt='x'> after. {PARA}</p>"
    f"<p>{PARA}</p><figure><img src='/d.jpg' alt='Trailing picture'></figure><p>Tags:</p></article>"
)


@pytest.mark.parametrize("cls", ["twin", "native"])
def test_images_are_dropped_by_default_after_the_pruning(cls: str) -> None:
    from markdown_it import MarkdownIt

    renderer = render.PyRenderer if cls == "twin" else native_or_skip("h2mwalk").Renderer
    with _renderer(renderer):
        keep = engines.get_extractor("h2m+links").extract(PICTURED, URL)
        plain = engines.get_extractor("h2m").extract(PICTURED, URL)
    assert "![Photo: Agency / Credit](https://example.com/q.jpg)" in keep.markdown
    assert "![" not in plain.markdown and "Photo" not in plain.markdown and "\ue000" not in plain.markdown
    # The pictures shaped the pruning in both modes alike, so the text is the same.
    assert plain.text == keep.text and "Tags:" not in plain.text
    assert "\n\n\n" not in plain.markdown and "  " not in plain.markdown
    assert "\n1\\. Not a list, and **bold** after." in plain.markdown
    html = MarkdownIt("commonmark").render(plain.markdown)
    assert "<ol" not in html and "<li></li>" not in html and "Second berth" in html


def test_links_mode_is_checked() -> None:
    from ccrawl.errors import UsageError

    with pytest.raises(UsageError, match="no links mode"):
        engines.get_extractor("wet+textlinks")
    with pytest.raises(UsageError, match="no links mode"):
        engines.get_extractor("trafilatura+links")
    with pytest.raises(UsageError, match="unknown links mode"):
        engines.get_extractor("h2m", links="none")


def test_image_marks_go_with_the_lines_and_breaks_they_emptied() -> None:
    from ccrawl.extract.blocks import IMAGE_MARK as M
    from ccrawl.extract.blocks import drop_image_marks

    blocks = [
        (f"a\\\n{M}\\\n{M}1. b\\\nc {M} d\\\n{M}", "t", "p"),
        (f"- {M}\n\n  {M}\n\n  x\n- y\\\n  {M}\n- {M}", "t", "list"),
        (f"## {M}", "", "h"),
        (M, "", "p"),
    ]
    assert drop_image_marks(blocks) == [("a\\\n1\\. b\\\nc d", "t", "p"), ("- x\n- y", "t", "list")]


# Comments and a sidebar: furniture, each under half of the container, together over half of it.
COMMENTS = (
    "<div id='comments'>" + "".join(f"<p>Comment {i}: {PARA}</p>" for i in range(2)) + "</div>"
    f"<div class='sidebar'><p>Sidebar: {PARA}</p></div>"
)


@pytest.mark.parametrize(
    "post",
    [
        "<div class='post-7 post hentry author-matt category-news' id='post-7'>",  # WordPress (hAtom)
        "<div class='entry-author-john_turri entry-type-post entry' id='entry-6a00d8'>",  # TypePad
    ],
)
def test_a_post_naming_its_author_in_its_classes_is_not_a_byline(text_of: Any, post: str) -> None:
    # The post's classes name its author ("author-matt"): taxonomy, as "category-news" is. It
    # used to read as a byline box and, under half the container's text, went whole.
    html = f"<div id='content'>{post}<h2>Quay opens</h2><p>{PARA}</p><p>{PARA}</p></div>{COMMENTS}</div>"
    text = text_of(html)
    assert "Quay opens" in text and "doubling" in text and "Comment 1" not in text


def test_author_boxes_and_related_posts_stay_furniture(text_of: Any) -> None:
    html = (
        f"<div id='content'><div class='post hentry author-matt'><h2>Quay opens</h2><p>{PARA}</p><p>{PARA}</p>"
        "<div class='author-bio'>Matt writes about harbours and ships for the paper.</div></div>"
        "<div class='post hentry related-story'><p>Ferry fares rise again as operators blame fuel.</p></div>"
        f"{COMMENTS}</div>"
    )
    text = text_of(html)
    assert "doubling" in text and "harbours and ships" not in text and "Ferry fares" not in text
