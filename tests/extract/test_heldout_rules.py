"""h2m's rules from the public-corpora failures (issue 40), in the compiled walk and its twin alike.

Each case runs the real ``h2m`` engine with the compiled walk and with the pure-Python twin (the
engines' renderer swapped) and asserts on the text both produce. The container choice and the
``noscript`` re-parse happen before the walk, so both walks see the same tree; the whole file
also runs under ``CCRAWL_NO_EXTENSIONS=1``, where the candidate search is the twin's too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract import engines
from ccrawl.extract.boilerplate import CAPTION, CAPTION_MAX_CHARS, FURNITURE, KEEP, names_furniture, verdict
from tests.extract.walkers import PARA, PARA2

# -- <noscript> holding escaped markup -------------------------------------------------------------

AD = (
    '&lt;div&gt;&lt;a href="http://ad.example.net/jump/mac;sz=500x500" target="_blank"&gt;'
    '&lt;img alt="" src="http://ad.example.net/ad/mac;sz=500x500" /&gt;&lt;/a&gt;&lt;/div&gt;'
)


def test_escaped_markup_in_noscript_is_parsed_not_shown(text_of: Any) -> None:
    text = text_of(
        f"<article><h1>Port to double its capacity</h1><p>{PARA}</p><noscript>{AD}</noscript><p>{PARA2}</p></article>"
    )
    assert PARA.strip() in text and PARA2.strip() in text
    assert "<div>" not in text and "ad.example" not in text and "href" not in text


def test_escaped_noscript_text_keeps_its_words_without_tags(text_of: Any) -> None:
    note = "&lt;p&gt;Readers without JavaScript can find the full timetable at the harbour office.&lt;/p&gt;"
    text = text_of(f"<article><h1>Port to double its capacity</h1><p>{PARA}</p><noscript>{note}</noscript></article>")
    assert "Readers without JavaScript can find the full timetable at the harbour office." in text
    assert "<p>" not in text


def test_noscript_with_real_markup_is_left_alone(text_of: Any) -> None:
    # Blogger-style: the post itself inside <noscript>, parsed as elements already.
    text = text_of(f"<div><noscript><div class='post-body'><p>{PARA}</p><p>{PARA2}</p></div></noscript></div>")
    assert PARA.strip() in text and PARA2.strip() in text


def test_noscript_that_merely_mentions_a_tag_is_not_reparsed() -> None:
    tree = LexborHTMLParser("<body><noscript>Use JavaScript; &lt;noscript&gt; is a tag.</noscript></body>")
    assert engines.reparse_escaped_noscript(tree) == 0
    assert tree.css_first("noscript").text() == "Use JavaScript; <noscript> is a tag."


def test_escaped_noscript_reparse_counts_and_replaces() -> None:
    tree = LexborHTMLParser(f"<body><p>a</p><noscript>{AD}</noscript><noscript>{AD}</noscript></body>")
    assert engines.reparse_escaped_noscript(tree) == 2
    noscripts = tree.css("noscript")
    assert all(n.css_first("a") is not None and "<" not in n.text() for n in noscripts)


# -- a container named as furniture is not the main content --------------------------------------

COMMENT = (
    '<div class="comment"><p class="who">Reader {i} said on Saturday at 9:1{i} am</p>'
    "<p>I tried this at home and it worked, though I would add more salt next time and bake it a "
    "little longer than the recipe says, since my oven runs cold. Thanks for sharing it with us all!</p></div>"
)


def test_a_comment_thread_named_post_comments_is_not_taken_for_the_post(text_of: Any) -> None:
    comments = "".join(COMMENT.format(i=i) for i in range(8))
    page = (
        f'<div class="entry"><div class="post"><h1>Chocolate day</h1><p>{PARA}</p><p>{PARA2}</p></div>'
        f'<div class="post comments-width">{comments}</div></div>'
    )
    text = text_of(page)
    assert PARA.strip() in text and PARA2.strip() in text
    assert "I tried this at home" not in text


def test_names_furniture_spares_the_post_and_flags_the_comments() -> None:
    assert names_furniture({"class": "post no-fade comments-width"})
    assert names_furniture({"id": "comments", "class": "post"})
    assert not names_furniture({"class": "post hentry author-matt"})
    assert not names_furniture({"class": "entry-content"})
    assert not names_furniture({"class": "feat-image-with-caption"})  # a caption is judged by its size


# -- captions: furniture only while they are short -------------------------------------------------


def test_caption_words_are_their_own_kind() -> None:
    assert verdict({"class": "wp-caption-text"}) == CAPTION
    assert verdict({"class": "caption photo-credit"}) == FURNITURE  # "credit" is furniture at any size
    assert verdict({"class": "caption share"}) == FURNITURE
    assert verdict({"class": "category-caption"}) == KEEP


def test_a_short_caption_is_pruned(text_of: Any) -> None:
    text = text_of(
        f"<article><h1>Port to double its capacity</h1><p>{PARA}</p>"
        "<div class='caption'>The new quay at dusk, seen from the old harbour wall.</div>"
        f"<p>{PARA2}</p></article>"
    )
    assert PARA.strip() in text and PARA2.strip() in text
    assert "seen from the old harbour wall" not in text


def test_a_story_inside_an_unclosed_caption_span_is_kept(text_of: Any) -> None:
    # WordPress's caption paragraph with its attribution span never closed: the span swallows the story.
    story = (PARA + PARA2) * 2
    assert len(story) >= CAPTION_MAX_CHARS
    page = (
        f"<div class='entry-content'>{f'<p>{PARA}</p><p>{PARA2}</p>' * 3}<div class='feat-image-with-caption'>"
        f"<p class='wp-caption-text'>Are we better off? <span class='wp-caption-text attribution'>({story}"
        "</p></div></div>"
    )
    text = text_of(page)
    assert text.count(PARA.strip()) == 5 and text.count(PARA2.strip()) == 5


# -- threads: the chosen post is one of several of its kind ---------------------------------------


def _post(i: int, paras: int) -> str:
    body = "".join(f"<p>Post {i}, paragraph {k}: {PARA}</p>" for k in range(paras))
    return (
        f"<tr><td class='poster'>member{i}<br>Posts: {100 + i}</td>"
        "<td class='td_headerandpost'><div class='subject'>Re: the new quay</div>"
        f"<div class='post'>{body}</div></td></tr>"
    )


def test_a_forum_thread_keeps_every_post_not_only_the_longest(text_of: Any) -> None:
    thread = "".join(_post(i, n) for i, n in enumerate((4, 3, 2, 1, 1)))
    text = text_of(f"<div id='bodyarea'><table class='thread'>{thread}</table></div><div class='footer'>(c)</div>")
    for i, n in enumerate((4, 3, 2, 1, 1)):
        assert f"Post {i}, paragraph {n - 1}:" in text


def test_one_article_among_short_teasers_of_its_class_is_not_widened(text_of: Any) -> None:
    teaser = "<div class='post'><h3><a href='/t{i}'>Older story {i}</a></h3><p>A short summary of story {i}.</p></div>"
    article = f"<div class='post'><h1>Port to double its capacity</h1><p>{PARA}</p><p>{PARA2}</p><p>{PARA}</p></div>"
    text = text_of(f"<div class='blog'>{article}{''.join(teaser.format(i=i) for i in range(5))}</div>")
    assert PARA2.strip() in text
    assert "A short summary of story" not in text


def test_a_container_named_by_a_unique_id_is_not_one_post_of_many(text_of: Any) -> None:
    box = "<div class='pageContainer'><p>Box {i}: sign up for e-mail alerts and get the news first, {para}</p></div>"
    page = (
        f"<div id='story' class='pageContainer'><h1>Port to double its capacity</h1><p>{PARA}</p><p>{PARA2}</p></div>"
        + "".join(box.format(i=i, para=PARA[: 150 + 40 * i]) for i in range(4))
    )
    text = text_of(page)
    assert PARA2.strip() in text and "Box 1: sign up" not in text


def test_a_long_list_of_linked_names_goes_whatever_its_length(text_of: Any) -> None:
    names = ", ".join(f"<a href='/users/reader{i}'>reader_number_{i}</a>" for i in range(60))
    text = text_of(f"<article><h1>Port to double its capacity</h1><p>{PARA}</p><p>{PARA2}</p><p>{names}</p></article>")
    assert PARA2.strip() in text and "reader_number_" not in text


def test_a_paragraph_with_many_links_in_its_prose_stays(text_of: Any) -> None:
    prose = " ".join(f"The <a href='/q{i}'>quay</a> plan, part {i}, was read in the council." for i in range(12))
    text = text_of(f"<article><h1>Port to double its capacity</h1><p>{PARA}</p><p>{prose}</p></article>")
    assert "part 11, was read in the council." in text


# -- comment threads longer than the article -------------------------------------------------------

COMMENT = (
    "I have lived by that harbour all my life and I will believe the jobs when I see them; the last "
    "scheme promised as much and left us a car park, two empty units and a roundabout nobody needed. "
)


def _thread(n: int) -> str:
    # A 2008 blog layout: no container names itself, the thread is one div named "comments".
    posts = "".join(
        f'<div class="individualcomment"><div class="commentsleft"><span class="byline">reader{i}</span>'
        f'</div><div class="commentsright"><p>{COMMENT}</p><p>{COMMENT}</p></div></div>'
        for i in range(n)
    )
    return f'<div id="comments"><div class="commentheader"><h3>Comments</h3></div>{posts}</div>'


def test_a_comment_thread_after_the_article_is_pruned_however_long(text_of: Any) -> None:
    text = text_of(f"<div><h2>Port to double its capacity</h2><p>{PARA}</p><p>{PARA2}</p></div>{_thread(20)}")
    assert PARA.strip() in text and PARA2.strip() in text
    assert "car park" not in text and "reader3" not in text


def test_a_page_that_is_only_a_comment_thread_keeps_it(text_of: Any) -> None:
    # Nothing rendered before it: the thread is the page, not furniture after an article.
    text = text_of(_thread(5))
    assert "car park" in text


def test_a_comments_element_holding_the_headline_is_kept(text_of: Any) -> None:
    body = f'<p>{PARA}</p><div class="comments-wrap"><h1>Port to double its capacity</h1><p>{PARA2}</p></div>'
    assert PARA2.strip() in text_of(body)


# -- <select> menus -----------------------------------------------------------------------------------


def test_a_jump_menu_does_not_make_its_container_the_article(text_of: Any) -> None:
    # A "jump to" <select> of page titles inside div.content beside the post: its options were
    # counted as text, the menu's container was chosen, and the post (elsewhere) was lost.
    options = "".join(f"<option value='/list/{i}'>The best cheap eats and late night cafes, list {i}</option>"
                      for i in range(200))
    body = (
        f'<div class="content"><div class="links"><form><select>{options}</select></form></div></div>'
        f'<div class="blog"><h2>Port to double its capacity</h2><p>{PARA}</p><p>{PARA2}</p></div>'
    )
    text = text_of(body)
    assert PARA.strip() in text and PARA2.strip() in text
    assert "late night cafes" not in text


# -- a "Comments" heading ends the article ----------------------------------------------------------


def _unnamed_thread(heading: str) -> str:
    # A 2008 blog: the comments are siblings of the story's paragraphs, in classes the cue words
    # do not name (camelCase "commentText"), under a heading.
    posts = "".join(
        f'<div class="commentText"><p>{COMMENT}</p></div><p class="posted">Posted by: reader{i} | January 14, 2008</p>'
        for i in range(12)
    )
    return f'<div class="sectionhed"><h3>{heading}</h3></div>{posts}'


def test_a_comments_heading_after_the_story_ends_it(text_of: Any) -> None:
    for heading in ("Comments", "12 Comments", "Comments (26)", "Leave a Reply"):
        text = text_of(f'<div class="story"><h1>Port to double its capacity</h1><p>{PARA}</p><p>{PARA2}</p>'
                       f"<p>{PARA2}</p>{_unnamed_thread(heading)}</div>")
        assert PARA.strip() in text and PARA2.strip() in text, heading
        assert "car park" not in text and heading not in text, heading


def test_a_comments_heading_before_any_story_ends_nothing(text_of: Any) -> None:
    # Under 500 characters of text before it: a page about comments, or a thread page.
    text = text_of(f"<div><h1>Port</h1>{_unnamed_thread('Comments')}</div>")
    assert "car park" in text


def test_a_section_merely_mentioning_comments_is_kept(text_of: Any) -> None:
    text = text_of(f"<div><h1>Port</h1><p>{PARA}</p><p>{PARA2}</p><h2>Response</h2><p>{COMMENT}</p>"
                   f"<h2>Comments on the plan from the council</h2><p>{COMMENT}</p></div>")
    assert text.count("car park") == 2


def test_a_documentation_section_whose_id_is_its_heading_s_slug_is_kept(text_of: Callable[[str], str]) -> None:
    # docutils/Sphinx: div.section#<slug of its heading>; "sharing" is a cue word (share bars).
    doc = (
        f'<div class="content"><div class="section" id="evolve"><h1>Evolve</h1><p>{PARA}</p>'
        f'<div class="section" id="sharing-with-a-single-developer"><h2>Sharing with a single developer</h2>'
        f"<p>{PARA2}</p></div></div></div>"
    )
    text = text_of(doc)
    assert PARA.strip() in text and PARA2.strip() in text and "Sharing with a single developer" in text
    assert verdict({"class": "section", "id": "sharing-with-a-single-developer"}) == KEEP
    assert verdict({"class": "section level2", "id": "share-this-post-now"}) == KEEP
    # A short id, or another class beside the slug, still names furniture.
    assert verdict({"class": "section", "id": "sharing"}) == FURNITURE
    assert verdict({"class": "widget", "id": "sharing-with-a-single-developer"}) == FURNITURE


_ARCHIVE = "".join(
    f"<li>Week ahead number {i} in the archive of this blog "
    f"and a summary of what happened that week in Brussels, in a sentence or two, number {i}.</li>"
    for i in range(60)
)


def _no_candidate_page(story_class: str) -> str:
    # No container names itself (no article/main/#content), so the paragraph scorer decides: the
    # post is under 15% of the page's text, the rest an archive of summaries in a list.
    return (
        f'<div class="blog"><div class="col"><div class="{story_class}"><div class="inner">'
        f"<h1>Week Ahead</h1><p>{PARA}</p><p>{PARA2}</p></div></div></div>"
        f'<div class="archive"><ul>{_ARCHIVE}</ul></div></div>'
    )


def test_a_short_scored_region_named_as_the_story_wins_over_the_page(text_of: Callable[[str], str]) -> None:
    text = text_of(_no_candidate_page("article story"))
    assert PARA.strip() in text and PARA2.strip() in text
    assert "archive of this blog" not in text


def test_a_short_scored_region_without_such_a_name_is_not_trusted(text_of: Callable[[str], str]) -> None:
    text = text_of(_no_candidate_page("box"))
    assert PARA.strip() in text and "archive of this blog" in text  # the whole body, as before
