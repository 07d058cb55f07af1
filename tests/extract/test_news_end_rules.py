"""h2m@9's rules from l3s-gn1's 2008 news pages (issue 40), in the compiled walk and its twin alike.

Each case runs the real ``h2m`` engine with the compiled walk and with the pure-Python twin
(``text_of`` / ``renderer_as`` swap the engines' renderer) and asserts on the text both give.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ccrawl.extract import engines, render
from tests.conftest import native_or_skip
from tests.extract.walkers import PARA, PARA2, URL, renderer_as

STORY = f"<p>{PARA}</p><p>{PARA2}</p><p>{PARA}</p>"  # 500+ characters of non-link text
AFTER = "Readers wrote in to say the quay would ruin the view from the promenade for good."


# -- a <title> never closed swallowed the page -----------------------------------------------------


@pytest.fixture(params=["twin", "native"])
def page_text(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """The text of a whole document (head included), with either walk."""
    cls = render.PyRenderer if request.param == "twin" else native_or_skip("h2mwalk").Renderer

    def run(html: str) -> str:
        with renderer_as(cls):
            return engines.HtmlExtractor("h2m").extract(html.encode(), URL).text

    return run


def test_a_title_never_closed_is_closed_at_the_next_tag(page_text: Callable[[str], str]) -> None:
    # A template that cut "</title>" to "</titlevalue=...": an HTML5 parser reads the page as the title.
    html = f'<html><head><title>Port to double</titlevalue="true" --></head><body>{STORY}</body></html>'
    text = page_text(html)
    assert PARA.strip() in text and PARA2.strip() in text
    assert "titlevalue" not in text


def test_a_closed_title_is_left_alone(page_text: Callable[[str], str]) -> None:
    text = page_text(f"<html><head><title>Port &lt;b&gt; news</title></head><body>{STORY}</body></html>")
    assert PARA.strip() in text


def test_close_runaway_title_only_touches_pages_without_a_closing_tag() -> None:
    assert engines.close_runaway_title("<title>a</title><p>b") is None
    assert engines.close_runaway_title("<p>no title</p>") is None
    assert engines.close_runaway_title("<title>a <b>x") == "<title>a </title><b>x"


# -- the comments' anchor ends the walk ----------------------------------------------------------


def test_a_comments_anchor_after_the_story_ends_it(text_of: Callable[[str], str]) -> None:
    text = text_of(f"<div>{STORY}<hr><a name='commentSection'></a><b>Comments are closed</b><br>{AFTER}</div>")
    assert PARA2.strip() in text
    assert AFTER not in text and "Comments are closed" not in text


def test_a_comments_anchor_before_the_story_ends_nothing(text_of: Callable[[str], str]) -> None:
    text = text_of(f"<div><a name='comments'></a><p>{PARA}</p><p>{AFTER}</p></div>")
    assert AFTER in text


def test_comments_anchors_after_every_post_of_a_blog_page_end_nothing(text_of: Callable[[str], str]) -> None:
    posts = "".join(f"<div class='blogPost'><h2>Post {i}</h2>{STORY}</div><a name='comments'></a>" for i in range(3))
    text = text_of(f"<div>{posts}<p>{AFTER}</p></div>")
    assert text.count(PARA2.strip()) == 3 and AFTER in text


def test_an_anchor_that_links_is_not_the_comments_anchor(text_of: Callable[[str], str]) -> None:
    text = text_of(f"<div>{STORY}<p><a name='comments' href='/c'>Comments</a> {AFTER}</p></div>")
    assert AFTER in text


# -- a rights notice or a tool line closes the story -----------------------------------------------

NOTICE = (
    "Copyright 2008 The Associated Press. All rights reserved. This material may not be published, "
    "broadcast, rewritten or redistributed."
)


@pytest.mark.parametrize("line", [NOTICE, "(c) 2007 Reuters. All rights reserved.", "E-mail this to a friend",
                                  "Print this story"])
def test_a_closing_line_after_the_story_ends_it(text_of: Callable[[str], str], line: str) -> None:
    text = text_of(f"<div>{STORY}<p>{line}</p><p>{AFTER}</p></div>")
    assert PARA2.strip() in text
    assert AFTER not in text and line not in text


def test_a_closing_line_before_the_story_ends_nothing(text_of: Callable[[str], str]) -> None:
    text = text_of(f"<div><p>{PARA}</p><p>{NOTICE}</p><p>{AFTER}</p></div>")
    assert AFTER in text


def test_a_sentence_mentioning_a_friend_is_not_a_tool_line(text_of: Callable[[str], str]) -> None:
    text = text_of(f"<div>{STORY}<p>E-mail this to a friend, the mayor urged, and come to the opening.</p>"
                   f"<p>{AFTER}</p></div>")
    assert AFTER in text


def test_a_short_notice_with_the_sign_is_dropped_as_a_credit_only(text_of: Callable[[str], str]) -> None:
    # Under 120 characters a "©" line is a credit (is_metadata_line), judged before the end rule.
    text = text_of(f"<div>{STORY}<p>© 2007 Reuters. All rights reserved.</p><p>{AFTER}</p></div>")
    assert "Reuters" not in text and AFTER in text
