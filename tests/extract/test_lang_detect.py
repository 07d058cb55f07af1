"""Language identification: ISO 639-3 codes, a confidence in 0..1, and what "unknown" means."""

from __future__ import annotations

import re

from resiliparse.parse.lang import supported_langs

from ccrawl.extract.engines import get_extractor
from ccrawl.extract.lang import ISO639_3, confidence, detect_language, to_iso639_3

GERMAN = (
    "Die Bundesregierung hat am Mittwoch einen Gesetzentwurf beschlossen, der die Förderung "
    "erneuerbarer Energien neu regelt. Kritiker bemängeln, dass die Ausbauziele zu niedrig seien "
    "und die Genehmigungsverfahren weiterhin viel zu lange dauerten. "
) * 3
VIETNAMESE = (
    "Báo tiếng Việt nhiều người xem nhất. Thời sự, thế giới, kinh doanh, giải trí, thể thao, "
    "pháp luật, giáo dục, sức khỏe, đời sống, du lịch và khoa học được cập nhật liên tục mỗi ngày. "
) * 3


def test_every_detector_language_maps_to_a_three_letter_code() -> None:
    for code in supported_langs():
        assert re.fullmatch(r"[a-z]{3}", ISO639_3[code]), code


def test_codes_map_through_region_subtags() -> None:
    assert to_iso639_3("pt-BR") == "por"
    assert to_iso639_3("en_US") == "eng"
    assert to_iso639_3("xx") == ""


def test_long_text_is_identified_with_high_confidence() -> None:
    assert detect_language(GERMAN)[0] == "deu"
    assert detect_language(GERMAN)[1] >= 0.8
    lang, conf = detect_language(VIETNAMESE)
    assert lang == "vie" and conf >= 0.8


def test_short_text_gets_low_confidence() -> None:
    _lang, conf = detect_language("Guten Tag")
    assert conf < 0.2


def test_unknown_is_the_empty_code_with_zero_confidence() -> None:
    assert detect_language("") == ("", 0.0)
    assert detect_language("12345 67 -- 2020") == ("", 0.0)


def test_confidence_grows_with_length_distance_and_margin() -> None:
    assert confidence(500, 700, 1000) == 1.0
    assert confidence(500, 700, 100) < confidence(500, 700, 400)
    assert confidence(1100, 1150, 1000) < confidence(700, 800, 1000)
    assert confidence(700, 705, 1000) < confidence(700, 800, 1000)
    assert 0.0 <= confidence(1300, None, 10) <= 1.0


def test_extraction_labels_the_extracted_text_not_the_declared_language() -> None:
    html = f'<html lang="en"><body><article><p>{GERMAN}</p></article></body></html>'
    x = get_extractor("h2m").extract(html)
    assert x.declared_language == "en"
    assert x.language == "deu" and x.language_confidence >= 0.8
