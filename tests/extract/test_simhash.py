"""simhash64: the pinned definition, native/twin parity, and near-duplicate behaviour."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.extract import simhash
from tests.conftest import native_or_skip

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# Words from several scripts; kept as a string (split below) so the list stays readable.
_WORDS = (
    "the of and to in is was for on that with as by at from his her it an were are which this be "
    "crawl archive record index segment page domain host robots sitemap link anchor title body "
    "river mountain village market harbour winter summer bridge castle forest garden library "
    "hà nội đường phố ngôn ngữ 東京 大阪 日本語 العربية русский язык straße größe naïve café"
)
VOCAB = _WORDS.split()


def make_text(seed: int, words: int) -> str:
    """A deterministic paragraph of ``words`` words with punctuation and line breaks."""
    rng = random.Random(seed)
    out = []
    for i in range(words):
        out.append(rng.choice(VOCAB))
        if i % 11 == 10:
            out.append(rng.choice([",", ".", ";", "\n\n", " -", " **"]))
    return " ".join(out)


@pytest.fixture(scope="module", params=["python", "native"])
def fingerprint(request: pytest.FixtureRequest) -> Callable[[str], int]:
    if request.param == "python":
        return simhash.simhash64_py
    return native_or_skip("simhash").simhash64  # type: ignore[no-any-return]


EXAMPLES = [
    "",
    "   ... !!! ---",
    "one",
    "One two",
    "one two three",
    "The quick brown fox jumps over the lazy dog",
    "snake_case and CamelCase_words stay whole",
    "İstanbul ẞTRASSE ΟΔΟΣ Ǆemal",  # lowercasing that changes length or depends on context
    "日本語のテキスト、句読点。そして🎉絵文字 and ASCII",
    "٣ ٤ ½ ² ⅷ digits of other scripts count as word characters",
    "lone \ud800 surrogate \udfff between words",
    "# Title\n\n* item one\n* item two\n\n[link](https://example.com/a_b?c=d)\n",
    make_text(1, 40),
    make_text(2, 2000),
]


def test_feature_hash_is_fnv1a64_then_fmix64() -> None:
    # FNV-1a 64 reference vectors from the FNV authors' test suite.
    assert simhash.fnv1a64(b"") == 0xCBF29CE484222325
    assert simhash.fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert simhash.fnv1a64(b"foobar") == 0x85944171F73967E8
    assert simhash.fmix64(0) == 0
    assert simhash.feature_hash("a b c") == simhash.fmix64(simhash.fnv1a64(b"a b c"))


def test_tokens_lowercase_and_split_on_non_word_characters() -> None:
    assert simhash.tokens("Hello, WORLD! snake_case 42x\u00a0日本") == ["hello", "world", "snake_case", "42x", "日本"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The quick brown fox jumps over the lazy dog", 6456333236646111437),
        ("", 0),
        ("one", 7104753817884049464),
    ],
)
def test_pinned_fingerprints_never_change(fingerprint: Callable[[str], int], text: str, expected: int) -> None:
    # These values are stored in published datasets: a change here breaks every reader's dedup.
    assert fingerprint(text) == expected


def test_pinned_fingerprint_of_a_long_multilingual_text(fingerprint: Callable[[str], int]) -> None:
    assert fingerprint(make_text(7, 600)) == PINNED_LONG


PINNED_LONG = -4150645423512761689


@pytest.mark.parametrize("text", EXAMPLES)
def test_native_matches_twin_on_examples(text: str) -> None:
    native = native_or_skip("simhash")
    assert native.simhash64(text) == simhash.simhash64_py(text)


words = st.lists(st.sampled_from(VOCAB), max_size=60)
separators = st.sampled_from([" ", "  ", ", ", ".\n", "\t", " — ", "_", "-", "🙂"])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_native_matches_twin_on_any_text(text: str) -> None:
    native = native_or_skip("simhash")
    assert native.simhash64(text) == simhash.simhash64_py(text)


@settings(max_examples=200, deadline=None)
@given(words, separators)
def test_native_matches_twin_on_word_salad(ws: list[str], sep: str) -> None:
    native = native_or_skip("simhash")
    text = sep.join(w.upper() if i % 3 == 0 else w for i, w in enumerate(ws))
    assert native.simhash64(text) == simhash.simhash64_py(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_fingerprint_fits_a_signed_int64(text: str) -> None:
    assert INT64_MIN <= simhash.simhash64(text) <= INT64_MAX


def test_module_uses_the_native_implementation_when_built() -> None:
    if accel.extensions_disabled():
        assert simhash.simhash64 is simhash.simhash64_py
    else:
        assert simhash.simhash64 is native_or_skip("simhash").simhash64


def test_case_and_punctuation_do_not_change_the_fingerprint(fingerprint: Callable[[str], int]) -> None:
    text = make_text(3, 300)
    # ASCII only: upper() then lower() is not a round trip for every script ("ß" -> "SS" -> "ss").
    noisy = "".join(c.upper() if c.isascii() else c for c in text).replace(" ", " ,, ")
    assert fingerprint(noisy) == fingerprint(text)


def test_near_duplicates_are_within_the_default_distance(fingerprint: Callable[[str], int]) -> None:
    base = make_text(4, 800).split(" ")
    edited = list(base)
    edited[400] = "zzyzx"  # one word changed in 800 touches 3 of ~870 shingles
    edited.append("appended footer line")
    assert simhash.hamming(fingerprint(" ".join(base)), fingerprint(" ".join(edited))) <= 3


def test_unrelated_texts_are_far_apart(fingerprint: Callable[[str], int]) -> None:
    distances = [
        simhash.hamming(fingerprint(make_text(100 + i, 500)), fingerprint(make_text(200 + i, 500))) for i in range(10)
    ]
    # Independent fingerprints differ in ~32 bits; every pair should be well past the dedup net.
    assert min(distances) >= 12
    assert sum(distances) / len(distances) >= 24


def test_hamming_counts_differing_bits_for_signed_and_unsigned_forms() -> None:
    assert simhash.hamming(0, -1) == 64
    assert simhash.hamming(-1, 0xFFFF_FFFF_FFFF_FFFF) == 0
    assert simhash.hamming(5, 6) == 2
    value = simhash.simhash64("some text to fingerprint here")
    assert simhash.hamming(value, value & 0xFFFF_FFFF_FFFF_FFFF) == 0


def test_documents_under_512_utf8_bytes_get_no_fingerprint() -> None:
    assert simhash.simhash_or_none("a" * 511) is None
    assert simhash.simhash_or_none("a" * 512) == simhash.simhash64("a" * 512)
    # Counted in UTF-8 bytes, not characters: 255 two-byte letters and one ASCII letter are 511 bytes.
    assert simhash.simhash_or_none("é" * 255 + "a") is None
    assert simhash.simhash_or_none("é" * 256) == simhash.simhash64("é" * 256)
    assert simhash.simhash_or_none("日" * 170 + "a") is None  # 171 characters, 511 bytes
    assert simhash.simhash_or_none("日" * 171) is not None  # 513 bytes
    assert simhash.simhash_or_none("") is None


def test_word_characters_are_exactly_isalnum_or_underscore() -> None:
    # The documented rule, checked against the twin's regex for every code point but surrogates.
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        assert bool(simhash._WORD.fullmatch(ch)) == (ch.isalnum() or ch == "_"), hex(cp)


def test_native_splits_words_like_the_twin_across_the_code_space() -> None:
    # Each probe is "q<c>q": one token if <c> is a word character, two otherwise, so a
    # disagreement on any <c> changes the shingles and the fingerprint. All of ASCII, then every
    # 37th code point up to U+10FFFF, in blocks small enough that one disagreement shows.
    native = native_or_skip("simhash")
    probes = [cp for cp in range(0x110000) if cp < 128 or cp % 37 == 0]
    probes = [cp for cp in probes if not 0xD800 <= cp <= 0xDFFF]
    for i in range(0, len(probes), 64):
        text = " ".join(f"q{chr(cp)}q" for cp in probes[i : i + 64])
        assert native.simhash64(text) == simhash.simhash64_py(text), hex(probes[i])
