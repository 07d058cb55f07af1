"""Furniture cues: which class, id, role and style values mark an element as page furniture."""

from __future__ import annotations

import pytest

from ccrawl.extract.boilerplate import COMMENTS, FURNITURE, HIDDEN, KEEP, names_furniture, verdict


@pytest.mark.parametrize(
    "attrs",
    [
        {"class": "site-footer"},
        {"id": "main-nav"},
        {"class": "share_buttons"},
        {"class": "wp_rp related_post"},
        {"role": "navigation"},
        {"class": "author-box"},
    ],
)
def test_furniture_words_and_roles_are_recognised(attrs: dict[str, str]) -> None:
    assert verdict(attrs) == FURNITURE


@pytest.mark.parametrize(
    "attrs", [{"class": "comments-area"}, {"id": "comments"}, {"class": "commentlist"}, {"id": "disqus_thread"}]
)
def test_comment_threads_are_furniture_of_their_own_kind(attrs: dict[str, str]) -> None:
    # COMMENTS: pruned however long once the article's text is rendered (render._COMMENTS_AFTER).
    assert verdict(attrs) == COMMENTS
    assert names_furniture(attrs)


@pytest.mark.parametrize(
    "attrs",
    [
        {"class": "post category-newsletter tag-social has-sidebar"},  # WordPress taxonomy on the article
        {"class": "entry-content entry-content-read-more"},  # content class wins
        {"class": "TestReport__Section--Ads"},  # a BEM modifier, not a part
        {"class": "navigate-here canvas"},  # "nav" only as a whole component
        {"class": "elementor-widget elementor-widget-text-editor"},
        {"class": "field--label-hidden"},
    ],
)
def test_content_is_not_mistaken_for_furniture(attrs: dict[str, str]) -> None:
    assert verdict(attrs) == KEEP


def test_hidden_elements_are_hidden_whatever_their_class() -> None:
    assert verdict({"style": "DISPLAY: none"}) == HIDDEN
    assert verdict({"hidden": None}) == HIDDEN  # type: ignore[dict-item]
    assert verdict({"aria-hidden": "true", "class": "content"}) == HIDDEN


def test_cues_can_be_switched_off_for_containers() -> None:
    assert verdict({"class": "sidebar"}, use_cues=False) == KEEP
    assert verdict({"class": "sidebar", "role": "complementary"}, use_cues=False) == FURNITURE
