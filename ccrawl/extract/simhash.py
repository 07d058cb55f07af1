"""64-bit simhash fingerprints of Markdown text, for near-duplicate detection (``ccrawl dedup``).

The fingerprint is written into every Markdown row's ``simhash`` column, so its definition is a
data contract: changing any step below changes every stored value. It is, exactly:

1. **Tokens.** ``text.lower()`` (Python's full Unicode lowercasing), then the maximal runs of word
   characters, where a word character is what Python's ``re`` calls ``\\w`` for ``str``: a
   code point for which ``str.isalnum()`` is true, or ``_``. Everything else (spaces,
   punctuation, Markdown syntax, symbols, emoji) separates tokens and is dropped.
2. **Features.** Word 3-shingles: every run of three consecutive tokens, joined by one space
   (``"a b c"``). Each occurrence counts once, so a repeated shingle weighs more. A text of one
   or two tokens has a single feature, its tokens joined the same way; a text with no tokens has
   no features and the fingerprint 0.
3. **Feature hash.** FNV-1a 64 over the feature's UTF-8 bytes, then MurmurHash3's ``fmix64``
   finaliser. FNV-1a alone leaves bit *k* depending only on bits 0..*k* of the input bytes
   (its low bits are nearly parities), which would make simhash's low bits noise; ``fmix64``
   makes every output bit depend on every input bit. Both are a few lines in any language, need
   no library, and never change between versions, which is what a stored fingerprint needs.
4. **Fingerprint.** For each bit position, add +1 for every feature whose hash has the bit set and
   -1 otherwise; the fingerprint's bit is 1 where the sum is positive (ties give 0).
5. **Storage.** The 64 bits are returned as a *signed* int64 (two's complement, bit 63 is the sign),
   so the value fits a Parquet ``INT64`` / DuckDB ``BIGINT`` column without overflow.
   ``simhash64(t) & 0xFFFF_FFFF_FFFF_FFFF`` gives the unsigned form; :func:`hamming` accepts either.

Texts under 512 UTF-8 bytes get no fingerprint (:func:`simhash_or_none`): 64 bits over that little
text are decided by noise, which is the rule the dedup report states ("too short to hash").

``simhash64`` is compiled (``csrc/simhash.pyx``) when the native core is built; ``simhash64_py``
is the pure-Python twin with identical output.
"""

from __future__ import annotations

import re

from ccrawl import accel

__all__ = [
    "MIN_BYTES",
    "feature_hash",
    "fmix64",
    "fnv1a64",
    "hamming",
    "simhash64",
    "simhash64_py",
    "simhash_or_none",
    "tokens",
    "utf8_length",
]

MIN_BYTES = 512
"""Documents shorter than this many UTF-8 bytes get no fingerprint."""

_MASK64 = 0xFFFF_FFFF_FFFF_FFFF
_FNV_OFFSET = 0xCBF2_9CE4_8422_2325
_FNV_PRIME = 0x0000_0100_0000_01B3
_FMIX_1 = 0xFF51_AFD7_ED55_8CCD
_FMIX_2 = 0xC4CE_B9FE_1A85_EC53

# For str patterns re's \w is exactly "isalnum() or _", the rule the native tokenizer copies.
_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """The lowercased word tokens a fingerprint is built from (step 1 of the module docstring)."""
    return _WORD.findall(text.lower())


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64 of ``data`` (offset basis 0xcbf29ce484222325, prime 0x100000001b3)."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK64
    return h


def fmix64(h: int) -> int:
    """MurmurHash3's 64-bit finaliser: spreads every input bit over every output bit."""
    h ^= h >> 33
    h = (h * _FMIX_1) & _MASK64
    h ^= h >> 33
    h = (h * _FMIX_2) & _MASK64
    return h ^ (h >> 33)


def feature_hash(feature: str) -> int:
    """The unsigned 64-bit hash of one feature (step 3): fmix64(FNV-1a 64(UTF-8 bytes))."""
    return fmix64(fnv1a64(feature.encode("utf-8")))


def _features(words: list[str]) -> list[str]:
    if len(words) < 3:
        return [" ".join(words)] if words else []
    return [f"{words[i]} {words[i + 1]} {words[i + 2]}" for i in range(len(words) - 2)]


# Bit-sliced counting: byte value -> an int holding each of its 8 bits in its own 32-bit lane, so
# summing spread hashes counts all 64 bit positions at once in one big-int addition per feature.
_LANE = 32
_SPREAD = [sum(((b >> i) & 1) << (i * _LANE) for i in range(8)) for b in range(256)]


def _spread(h: int) -> int:
    s = _SPREAD
    return (
        s[h & 0xFF]
        | s[(h >> 8) & 0xFF] << (8 * _LANE)
        | s[(h >> 16) & 0xFF] << (16 * _LANE)
        | s[(h >> 24) & 0xFF] << (24 * _LANE)
        | s[(h >> 32) & 0xFF] << (32 * _LANE)
        | s[(h >> 40) & 0xFF] << (40 * _LANE)
        | s[(h >> 48) & 0xFF] << (48 * _LANE)
        | s[h >> 56] << (56 * _LANE)
    )


def simhash64_py(text: str) -> int:
    """The 64-bit simhash of ``text`` as a signed int64 (pure-Python twin of the native one)."""
    features = _features(tokens(text))
    ones = 0
    for feature in features:
        ones += _spread(feature_hash(feature))
    # +1 per set bit and -1 per clear bit sums positive exactly when 2 * ones > features.
    n = len(features)
    lane = (1 << _LANE) - 1
    value = 0
    for bit in range(64):
        if 2 * ((ones >> (bit * _LANE)) & lane) > n:
            value |= 1 << bit
    return value - (1 << 64) if value >= 1 << 63 else value


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two fingerprints, signed or unsigned (0 to 64)."""
    return ((a ^ b) & _MASK64).bit_count()


def utf8_length(text: str) -> int:
    """Bytes ``text`` takes in UTF-8 (lone surrogates counted as 3, as surrogatepass writes them)."""
    return len(text.encode("utf-8", "surrogatepass"))


def simhash_or_none(markdown: str) -> int | None:
    """The fingerprint of a document, or None when it is under 512 UTF-8 bytes (too short to trust)."""
    # A code point is 1 to 4 bytes, so the length in characters settles most documents unencoded.
    if len(markdown) < MIN_BYTES and (len(markdown) * 4 < MIN_BYTES or utf8_length(markdown) < MIN_BYTES):
        return None
    return simhash64(markdown)


_native = accel.native("simhash")
simhash64 = _native.simhash64 if _native else simhash64_py
