"""The engine interface: names, versions, and the fields of an Extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl.errors import UsageError
from ccrawl.extract.engines import ENGINE_VERSION, ENGINES, get_extractor

ARTICLE = (Path(__file__).parent / "golden" / "article.html").read_bytes()
URL = "https://example.com/blog/post.html#top"


def test_every_in_house_engine_labels_rows_name_at_version() -> None:
    for name in ("h2m", "readability", "raw", "wet"):
        engine = get_extractor(name)
        assert engine.name == name
        assert engine.label == f"{name}@{engine.version}"
        assert engine.extract("<p>x</p>").extractor == engine.label


def test_unknown_engine_is_a_usage_error_naming_the_choices() -> None:
    with pytest.raises(UsageError, match="h2m"):
        get_extractor("nope")
    assert "trafilatura" in ENGINES


def test_h2m_fills_the_row() -> None:
    x = get_extractor("h2m").extract(ARTICLE, URL, content_type="text/html; charset=utf-8")
    assert x.title == "Zitronenkuchen vom Blech | Backblog"
    assert x.description == "Ein saftiger Zitronenkuchen."
    assert x.main_content is True
    assert x.markdown.startswith("# Saftiger Zitronenkuchen vom Blech")
    assert x.word_count == len(x.text.split()) > 40
    assert x.language == "deu" and 0 < x.language_confidence <= 1
    assert x.declared_language == "de"
    assert not x.truncated and x.notes == []
    record = x.as_record()
    assert record["markdown_length"] == len(x.markdown.encode()) and record["extractor"] == f"h2m@{ENGINE_VERSION}"


def test_outlinks_are_absolute_deduplicated_and_unfragmented() -> None:
    html = (
        '<base href="https://cdn.example.net/root/"><a href="a.html#x">1</a><a href="a.html">2</a>'
        '<a href="/b">3</a><a href="//other.org/c">4</a><a href="javascript:void(0)">5</a>'
        '<a href="mailto:x@y.z">6</a><a href="https://x.org/p q">7</a>'
    )
    x = get_extractor("raw").extract(html, "https://example.com/page")
    assert x.outlinks == [
        "https://cdn.example.net/root/a.html",
        "https://cdn.example.net/b",
        "https://other.org/c",
        "https://x.org/p%20q",
    ]


def test_simhash_is_set_for_long_markdown_and_absent_for_short() -> None:
    long = get_extractor("raw").extract(ARTICLE, URL)
    assert len(long.markdown.encode()) >= 512 and isinstance(long.simhash, int)
    assert get_extractor("h2m").extract("<p>short</p>").simhash is None


def test_wet_passes_text_through_unchanged() -> None:
    text = "Zeile eins *nicht fett*\n\nZeile zwei [kein Link]"
    x = get_extractor("wet").extract(text.encode("utf-8"))
    assert x.markdown == x.text == text
    assert x.charset == "utf-8" and x.extractor.startswith("wet@")


def test_readability_keeps_the_article_and_drops_the_furniture() -> None:
    x = get_extractor("readability").extract(ARTICLE, URL)
    assert "echter Klassiker" in x.text and "Zitronenguss" in x.text
    assert "Impressum" not in x.text and "Über mich" not in x.text


def test_raw_keeps_everything_but_scripts() -> None:
    html = "<nav>Menu</nav><script>var x=1;</script><style>p{}</style><p>Body</p><footer>Foot</footer>"
    x = get_extractor("raw").extract(html)
    assert x.text.split("\n") == ["Menu", "Body", "Foot"]


def test_trafilatura_engine_when_installed() -> None:
    pytest.importorskip("trafilatura", reason="trafilatura is an optional extra (pip install 'ccrawl[bench]')")
    x = get_extractor("trafilatura").extract(ARTICLE, URL)
    assert x.extractor.startswith("trafilatura@")
    assert "echter Klassiker" in x.text and x.language == "deu"


def test_a_page_of_nothing_but_links_has_no_main_text() -> None:
    links = "".join(f'<li><a href="https://site{i}.example/">partner site number {i}</a></li>' for i in range(50))
    html = f"<html><body><p>Useful resources.</p><ul>{links}</ul></body></html>"
    assert get_extractor("h2m").extract(html).text == "Useful resources."
    assert "partner site number 49" in get_extractor("raw").extract(html).text
