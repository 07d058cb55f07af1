"""Charset decoding: BOM, HTTP header, <meta>, detector, in that order, and which one decided."""

from __future__ import annotations

import codecs

from ccrawl.extract.decode import charset_from_content_type, decode_body, normalise_label
from ccrawl.extract.engines import get_extractor

GERMAN = "<p>Grüße aus München: schöne Straßen, große Bäume, süße Brötchen und viele Äpfel.</p>" * 4


def test_header_charset_decides_when_the_bytes_agree() -> None:
    d = decode_body(GERMAN.encode("cp1252"), "text/html; charset=windows-1252")
    assert (d.charset, d.source) == ("cp1252", "header")
    assert "Grüße" in d.text


def test_iso_8859_1_label_means_windows_1252_as_in_browsers() -> None:
    assert normalise_label("ISO-8859-1") == "cp1252"
    d = decode_body("€ Preis".encode("cp1252"), 'text/html; charset="iso-8859-1"')
    assert d.text == "€ Preis" and d.source == "header"


def test_bom_beats_a_header_that_says_otherwise() -> None:
    d = decode_body(codecs.BOM_UTF8 + "Grüße".encode(), "text/html; charset=iso-8859-1")
    assert (d.charset, d.source, d.text) == ("utf-8", "bom", "Grüße")


def test_utf16_bom_is_honoured() -> None:
    d = decode_body(codecs.BOM_UTF16_LE + "<p>Grüße</p>".encode("utf-16-le"))
    assert (d.source, d.text) == ("bom", "<p>Grüße</p>")


def test_meta_charset_decides_without_a_header() -> None:
    html = f'<html><head><meta charset="windows-1251"></head><body>{"Привет, мир! " * 10}</body></html>'
    d = decode_body(html.encode("cp1251"), "text/html")
    assert (d.charset, d.source) == ("cp1251", "meta")
    assert "Привет" in d.text


def test_meta_http_equiv_content_type_is_read() -> None:
    html = '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><p>日本語のテキスト</p>'
    d = decode_body(html.encode("shift_jis"))
    assert (d.source, d.charset) == ("meta", "shift_jis")
    assert "日本語" in d.text


def test_detector_decides_when_nothing_is_declared() -> None:
    d = decode_body(GERMAN.encode("cp1252"))
    assert d.source == "detector"
    assert "Grüße aus München" in d.text


def test_wrong_header_falls_back_to_the_detector_and_says_so() -> None:
    d = decode_body(GERMAN.encode("cp1252"), "text/html; charset=utf-8")
    assert d.source == "detector"
    assert "Grüße" in d.text
    assert d.note.startswith("charset: header said utf-8")


def test_unknown_label_is_ignored_rather_than_trusted() -> None:
    assert normalise_label("x-no-such-charset") == ""
    d = decode_body(b"plain ascii", "text/html; charset=x-no-such-charset")
    assert d.source == "detector" and d.text == "plain ascii"


def test_undecodable_bytes_are_replaced_never_raised() -> None:
    d = decode_body(b"<p>ok \xff\xfe\xfa broken</p>", "text/html; charset=utf-8")
    assert "ok" in d.text and "broken" in d.text


def test_content_type_parameter_parsing() -> None:
    assert charset_from_content_type("text/html;charset=UTF-8") == "UTF-8"
    assert charset_from_content_type("text/html; Charset = 'koi8-r'") == "koi8-r"
    assert charset_from_content_type("text/html") == ""
    assert charset_from_content_type(None) == ""


def test_extraction_records_charset_and_its_source() -> None:
    x = get_extractor("h2m").extract(GERMAN.encode("cp1252"), content_type="text/html; charset=cp1252")
    assert (x.charset, x.charset_source) == ("cp1252", "header")
    y = get_extractor("h2m").extract(GERMAN)
    assert (y.charset, y.charset_source) == ("", "given")


def test_ascii_pages_skip_the_detector_with_its_own_answer() -> None:
    # The fast path answers what uchardet answers for plain ASCII (windows-1252), on varied ASCII
    # pages; ESC (ISO-2022) and "~{" (HZ) still go to the detector, and empty bytes too.
    import random

    from resiliparse.parse.encoding import detect_encoding

    rng = random.Random(40)
    alphabet = bytes(range(1, 128)).replace(b"\x1b", b"")
    samples = [b"<html><body><p>plain</p></body></html>", b"a", b"~ {} ~~ }{", b"\t\r\n" * 50]
    samples += [bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 3000))).replace(b"~{", b"~ ")
                for _ in range(200)]
    for data in samples:
        expected = str(detect_encoding(data, max_len=64 * 1024, html5_compatible=True) or "utf-8")
        d = decode_body(data)
        assert (d.charset, d.source, d.text) == (expected, "detector", data.decode(expected)), data[:40]
    escaped = b"<p>\x1b$B$3$s$K$A$O\x1b(B</p>"
    assert decode_body(escaped).charset == str(detect_encoding(escaped, html5_compatible=True))
    assert decode_body(b"").charset == "utf-8"


def test_ascii_bytes_under_a_declared_charset_decode_as_before() -> None:
    from ccrawl.extract.decode import ascii_compatible

    page = b"<html><head><meta charset=iso-8859-2></head><body>plain ASCII &eacute;</body></html>"
    for label, codec in (("windows-1252", "cp1252"), ("iso-8859-2", "iso8859-2"), ("gbk", "gbk"),
                         ("utf-8", "utf-8"), ("koi8-r", "koi8-r")):
        d = decode_body(page, f"text/html; charset={label}")
        assert (d.charset, d.source, d.text) == (codec, "header", page.decode(codec))
        assert ascii_compatible(codec)
    for codec in ("utf-16-le", "utf-7", "hz", "iso2022_jp", "no-such-codec"):
        assert not ascii_compatible(codec)
    # A UTF-16 header over ASCII bytes is decoded as UTF-16 (the old path), not as ASCII.
    d = decode_body(b"abcd", "text/html; charset=utf-16le")
    assert d.text == b"abcd".decode("utf-16-le")
