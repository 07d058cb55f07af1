"""Language of extracted text: resiliparse's trigram detector, ISO 639-3 codes, a 0..1 confidence.

``detect_fast`` answers ISO 639-1 codes with an out-of-place *rank* (lower is closer; past 1200
it gives up). The confidence combines three things, each in 0..1, by multiplication so that any
one of them can veto:

* **distance**: ``(1200 - rank) / 600`` clamped, so a rank of 600 or better counts fully;
* **margin**: the gap to the runner-up, ``gap / 60`` clamped (related languages such as
  Danish/Norwegian or Croatian/Serbian sit close, so a small gap lowers but does not zero it:
  the margin term is ``0.5 + 0.5 * min(gap / 60, 1)``);
* **length**: ``chars / 400`` clamped: a trigram profile of a few words is noise.

*Unknown* is ``("", 0.0)``: no text, no letters, or the detector found no profile within its
cutoff. Callers filtering by language (``--lang`` with ``--min-lang-confidence``) drop unknown
documents, since "we could not tell" is not "in this language".
"""

from __future__ import annotations

import re
import unicodedata

from resiliparse.parse.lang import detect_fast

#: resiliparse's 101 profiles, ISO 639-1 (or the code it uses) to ISO 639-3. Macrolanguages map
#: to the macrolanguage code (``no`` -> ``nor``, ``ar`` -> ``ara``, ``zh`` -> ``zho``), as CC's own
#: ``content_languages`` field does.
ISO639_3: dict[str, str] = {
    "af": "afr", "ar": "ara", "as": "asm", "az": "aze", "ba": "bak", "be": "bel", "bg": "bul",
    "bn": "ben", "bo": "bod", "br": "bre", "ca": "cat", "ce": "che", "cs": "ces", "cv": "chv",
    "cy": "cym", "da": "dan", "de": "deu", "dv": "div", "el": "ell", "en": "eng", "eo": "epo",
    "es": "spa", "et": "est", "eu": "eus", "fa": "fas", "fi": "fin", "fo": "fao", "fr": "fra",
    "fy": "fry", "ga": "gle", "gd": "gla", "gl": "glg", "gu": "guj", "ha": "hau", "he": "heb",
    "hi": "hin", "hr": "hrv", "hu": "hun", "hy": "hye", "id": "ind", "io": "ido", "is": "isl",
    "it": "ita", "ja": "jpn", "jv": "jav", "ka": "kat", "kk": "kaz", "km": "khm", "kn": "kan",
    "ko": "kor", "ku": "kur", "ky": "kir", "la": "lat", "lb": "ltz", "lt": "lit", "lv": "lav",
    "mg": "mlg", "mk": "mkd", "ml": "mal", "mn": "mon", "mr": "mar", "mt": "mlt", "my": "mya",
    "ne": "nep", "nl": "nld", "no": "nor", "or": "ori", "pa": "pan", "pl": "pol", "ps": "pus",
    "pt": "por", "rm": "roh", "ro": "ron", "ru": "rus", "sa": "san", "sc": "srd", "sd": "snd",
    "si": "sin", "sk": "slk", "sl": "slv", "so": "som", "sq": "sqi", "sr": "srp", "sv": "swe",
    "sw": "swa", "ta": "tam", "te": "tel", "tg": "tgk", "th": "tha", "tk": "tuk", "tl": "tgl",
    "tr": "tur", "tt": "tat", "ug": "uig", "uk": "ukr", "ur": "urd", "uz": "uzb", "vi": "vie",
    "vo": "vol", "yi": "yid", "zh": "zho",
}  # fmt: skip

_LETTER = re.compile(r"[^\W\d_]")
_CUTOFF = 1200
_FULL_RANK = 600
_FULL_GAP = 60
_FULL_CHARS = 400
#: The detector is linear in its input; the head of a long text decides as well as the whole.
SAMPLE_CHARS = 20_000


def to_iso639_3(code: str) -> str:
    """ISO 639-3 for a 2-letter code (``de`` -> ``deu``; ``pt-BR`` -> ``por``), or ``""``."""
    return ISO639_3.get(code.strip().lower().replace("_", "-").split("-", 1)[0], "")


def confidence(rank: int, runner_up: int | None, chars: int) -> float:
    """Combine distance, margin to the runner-up and text length into 0..1 (see module doc)."""
    distance = min(max((_CUTOFF - rank) / (_CUTOFF - _FULL_RANK), 0.0), 1.0)
    gap = _FULL_GAP if runner_up is None else runner_up - rank
    margin = 0.5 + 0.5 * min(max(gap / _FULL_GAP, 0.0), 1.0)
    length = min(chars / _FULL_CHARS, 1.0)
    return round(distance * margin * length, 3)


def detect_language(text: str) -> tuple[str, float]:
    """``(iso639_3, confidence)`` for ``text``; ``("", 0.0)`` means unknown."""
    sample = text[:SAMPLE_CHARS]
    if _LETTER.search(sample) is None:
        return "", 0.0
    if not unicodedata.is_normalized("NFC", sample):
        sample = unicodedata.normalize("NFC", sample)
    # With n_results > 1 the detector answers a list of (code, rank), best first.
    results: list[tuple[str, int]] = list(detect_fast(sample, cutoff=_CUTOFF, n_results=3))  # type: ignore[arg-type]
    if not results:
        return "", 0.0
    code, rank = results[0]
    iso3 = ISO639_3.get(code, "")
    if not iso3:
        return "", 0.0
    runner_up = int(results[1][1]) if len(results) > 1 else None
    return iso3, confidence(int(rank), runner_up, len(sample.strip()))
