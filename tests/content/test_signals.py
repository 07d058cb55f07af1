"""Each quality signal on a page that shows it, and on an ordinary page that does not."""

from __future__ import annotations

import pytest

from ccrawl.content import signals as sig
from ccrawl.content.signals import Signals, quality_signals, ramp
from ccrawl.extract.engines import get_extractor
from ccrawl.extract.model import Extraction
from tests.content import pages

URL = "http://river-town.example/"


def score(html: str, url: str = URL, extractor: str = "h2m") -> Signals:
    return quality_signals(html, get_extractor(extractor).extract(html, url), url)


def test_an_ordinary_article_scores_clean() -> None:
    s = score(pages.ARTICLE)
    assert s.main_content is True
    assert s.word_count > 250
    assert s.spam_score == 0.0 and s.spam_cues == {}
    assert s.parked is False and s.parked_cues == []


def test_word_count_is_the_extracted_texts_whitespace_tokens() -> None:
    html = "<html><body><article><p>one two  three</p><p>four-five six.</p></article></body></html>"
    ex = get_extractor("h2m").extract(html, URL)
    assert quality_signals(html, ex, URL).word_count == len(ex.text.split()) == 5


def test_title_length_counts_characters_of_the_collapsed_title() -> None:
    html = "<html><head><title>  Café   du   Port </title></head><body><p>x</p></body></html>"
    assert score(html).title_length == len("Café du Port")
    assert score("<html><body><p>no title here</p></body></html>").title_length == 0


def test_main_content_is_false_when_the_whole_body_is_rendered() -> None:
    assert score(pages.ARTICLE).main_content is True
    assert score(pages.FLAT).main_content is False


def test_description_and_canonical_pass_through() -> None:
    s = score(pages.ARTICLE)
    assert s.description == "How a ford became a market town."
    assert s.canonical == "https://town.example/history"


def test_text_ratio_is_extracted_text_over_html() -> None:
    html = pages.ARTICLE
    ex = get_extractor("h2m").extract(html, URL)
    assert quality_signals(html, ex, URL).text_ratio == round(len(ex.text) / len(html), 4)
    assert score(pages.LINK_FARM).text_ratio < 0.05


def test_keyword_stuffing_raises_the_stuffing_cue() -> None:
    s = score(pages.STUFFED)
    assert s.spam_cues["stuffing"] == 1.0
    assert s.spam_score >= sig.STUFFING[0]


def test_repeated_blocks_raise_the_repetition_cue_but_not_stuffing() -> None:
    s = score(pages.REPEATED)
    assert s.spam_cues["repetition"] == 1.0
    assert s.spam_cues.get("stuffing", 0.0) < 0.1


def test_hidden_text_is_measured_and_raises_its_cue() -> None:
    s = score(pages.HIDDEN)
    assert s.hidden_share > 0.5
    assert s.spam_cues["hidden_text"] == 1.0
    assert score(pages.ARTICLE).hidden_share == 0.0


@pytest.mark.parametrize(
    "style",
    ["display:none", "visibility: hidden", "font-size:0", "text-indent:-9999px", "position:absolute;left:-10000px"],
)
def test_each_hiding_technique_counts_as_hidden(style: str) -> None:
    hidden = " ".join(["keyword"] * 400)
    assert score(pages.article(extra_body=f'<div style="{style}">{hidden}</div>')).hidden_share > 0.5


def test_hidden_links_do_not_count_as_hidden_text() -> None:
    # Collapsed menus hide their links with display:none on every ordinary site.
    menu = "".join(f'<li><a href="/s/{i}">section number {i}</a></li>' for i in range(80))
    s = score(pages.article(extra_body=f'<ul style="display:none">{menu}</ul>'))
    assert s.hidden_share == 0.0


def test_hidden_prose_tooltips_and_furniture_do_not_count_as_hidden_text() -> None:
    # What ordinary sites hide: a cookie notice (prose), tooltips (short), slides and embeds.
    notice = " ".join(["We use cookies to run this site and to measure how it is used."] * 30)
    tips = "".join(f'<span style="display:none">Link to page {i}: more about the town</span>' for i in range(60))
    keywords = " ".join(["casino bonus poker slots jackpot"] * 60)
    for hidden in (
        f'<div style="display:none">{notice}</div>',
        tips,
        f'<div class="gallery-slide" style="display:none">{keywords}</div>',
        f'<div class="cookie-banner" hidden>{keywords}</div>',
        f'<div style="display:none">{"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 40}</div>',
    ):
        assert score(pages.article(extra_body=hidden)).hidden_share == 0.0, hidden[:40]


def test_a_link_farm_raises_link_density_and_outlinks() -> None:
    s = score(pages.LINK_FARM)
    assert s.link_density > 0.9 and s.spam_cues["link_density"] == 1.0
    assert s.external_links == 150
    assert s.spam_cues["outlinks"] == pytest.approx(ramp(150, *sig.OUTLINKS[1:]), abs=1e-3)


def test_link_density_needs_enough_links_to_count() -> None:
    html = '<html><body><p><a href="/a">Home</a> <a href="/b">About</a></p></body></html>'
    s = score(html)
    assert s.link_density > 0.9
    assert "link_density" not in s.spam_cues


def test_outlinks_to_the_pages_own_registered_domain_are_not_external() -> None:
    links = "".join(f'<a href="http://www{i}.river-town.example/">w{i}</a>' for i in range(60))
    assert score(f"<html><body><p>{links}</p></body></html>").external_links == 0


def test_capitals_raise_the_all_caps_cue() -> None:
    s = score(pages.ALL_CAPS)
    assert s.spam_cues["all_caps"] == 1.0
    assert s.spam_score == pytest.approx(sig.ALL_CAPS[0], abs=1e-3)


def test_spam_score_is_the_noisy_or_of_weighted_cues() -> None:
    s = score(pages.LINK_FARM)
    expected = 1.0
    for name, value in s.spam_cues.items():
        weight = {"link_density": sig.LINK_DENSITY, "outlinks": sig.OUTLINKS}[name][0]
        expected *= 1.0 - weight * value
    assert s.spam_score == pytest.approx(1.0 - expected, abs=1e-3)
    assert 0.0 <= s.spam_score < 1.0


def test_word_statistics_stay_silent_on_short_texts() -> None:
    ex = Extraction(extractor="t", text="buy buy buy buy buy", word_count=5)
    s = quality_signals("<html><body><p>buy buy buy buy buy</p></body></html>", ex, URL)
    assert s.spam_cues == {}


def test_ramp_is_zero_below_floor_one_above_full_and_linear_between() -> None:
    assert ramp(0.1, 0.2, 0.6) == 0.0
    assert ramp(0.4, 0.2, 0.6) == pytest.approx(0.5)
    assert ramp(0.9, 0.2, 0.6) == 1.0


def test_a_for_sale_notice_is_parked() -> None:
    s = score(pages.PARKED_FOR_SALE)
    assert s.parked is True and s.parked_cues == ["for_sale"]


@pytest.mark.parametrize(
    "phrase",
    [
        "Buy this domain today",
        "The domain river-town.example is for sale",
        "Diese Domain steht zum Verkauf",
        "Ce domaine est à vendre",
        "This web page is parked free, courtesy of a registrar",
    ],
)
def test_for_sale_phrases_in_several_forms_are_recognised(phrase: str) -> None:
    assert "for_sale" in score(f"<html><body><p>{phrase}.</p></body></html>").parked_cues


def test_a_parking_service_script_is_parked() -> None:
    s = score(pages.PARKED_SERVICE)
    assert s.parked is True and "parking_service" in s.parked_cues


def test_parking_service_names_match_as_hosts_only() -> None:
    html = '<html><body><p>See <a href="https://jordan.com/">jordan.com</a> and ssedo.community.</p></body></html>'
    assert "parking_service" not in score(html).parked_cues
    html = '<html><body><iframe src="https://dan.com/buy-domain/x.example"></iframe></body></html>'
    assert "parking_service" in score(html).parked_cues


@pytest.mark.parametrize(
    ("html", "named"),
    [
        ('<a href="https://www.dan.com/buy">', True),
        ("<script src='//sedoparking.com/x.js'>", True),
        ('<img src="https://img1.wsimg.com/parking-lander/static/js/main.js">', True),
        ("Visit Sedo.com today", True),
        ('<a href="https://jordan.com/">', False),
        ('<a href="https://mysedo.com/">', False),
        ("sedo.community", False),
        ("abc.dan.com.evil", False),
    ],
)
def test_names_parking_service_matches_whole_host_names(html: str, named: bool) -> None:
    assert sig.names_parking_service(html) is named


def test_a_tiny_page_that_redirects_off_site_is_a_parked_shell() -> None:
    s = score(pages.PARKED_SHELL)
    assert s.parked is True and s.parked_cues == ["redirect_shell"]


def test_a_full_page_frame_to_another_site_is_a_parked_shell() -> None:
    html = '<html><frameset><frame src="http://lander.parking-network.example/?d=x"></frameset></html>'
    assert score(html).parked_cues == ["redirect_shell"]


def test_a_meta_refresh_off_site_on_an_empty_page_is_a_parked_shell() -> None:
    html = '<html><head><meta http-equiv="Refresh" content="0; url=http://other.example/"></head><body></body></html>'
    assert score(html).parked_cues == ["redirect_shell"]


def test_a_same_site_redirect_shell_is_not_parked() -> None:
    s = score(pages.SAME_SITE_SHELL)
    assert s.parked is False and s.parked_cues == []


def test_a_long_article_about_domain_sales_is_not_parked() -> None:
    s = score(pages.ABOUT_DOMAIN_SALES)
    assert s.word_count > sig.PARKED_MAX_WORDS
    assert s.parked is False


def test_signals_work_with_every_html_engine() -> None:
    for engine in ("h2m", "readability", "raw"):
        s = score(pages.STUFFED, extractor=engine)
        assert s.spam_cues["stuffing"] == 1.0, engine
        assert score(pages.PARKED_FOR_SALE, extractor=engine).parked, engine


def test_as_record_carries_every_signal() -> None:
    record = score(pages.ARTICLE).as_record()
    assert set(record) == {
        "word_count", "title_length", "main_content", "text_ratio", "link_density", "hidden_share",
        "external_links", "spam_score", "spam_cues", "parked", "parked_cues", "description", "canonical",
    }  # fmt: skip
