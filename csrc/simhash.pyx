# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled simhash64; the definition and the pure-Python twin are in ccrawl/extract/simhash.py.

One pass over the text lowercases each code point on the fly, finds the tokens, and hashes
the 3-shingles as it goes: every byte of a token is fed to the three shingles that hold it
(the one starting at this token and the two before), each an FNV-1a state of its own, and a
shingle is finished when the token two after its first ends. The bytes are the UTF-8 of the
lowercased code points, encoded on the fly, so no lowercased text, token or shingle string is
ever built.

Lowering one code point at a time is exactly ``str.lower()`` except for two characters:
U+0130 (lowercased to two code points) and U+03A3 (Greek capital sigma, whose lowercase
depends on its neighbours). A text holding either is hashed from ``text.lower()`` instead.
"""

from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    Py_UNICODE_TOLOWER,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
)
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x00000100000001B3ULL

ctypedef fused ucs_t:
    uint8_t
    uint16_t
    uint32_t


cdef inline uint64_t _fmix64(uint64_t h) noexcept:
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return h


# Bit counting, eight bits at a time: _LANES[b] spreads the 8 bits of byte b into the 8 byte
# lanes of a word, so adding it counts each bit in its own 8-bit lane. A feature costs 8 table
# adds instead of 64 bit tests; the lanes are emptied into the 64 wide counters before any
# can pass 255. Only set bits are counted; the sum of +1/-1 is positive exactly when
# 2 * ones > features.
cdef uint64_t _LANES[256]
cdef int _b, _j
for _b in range(256):
    _LANES[_b] = 0
    for _j in range(8):
        _LANES[_b] |= (<uint64_t>((_b >> _j) & 1)) << (8 * _j)

# Latin-1 code points: their lowercase (``chr(c).lower()`` is one Latin-1 code point for every
# one of them) and whether a code point is a word character (``isalnum()`` or "_"), taken
# from Python itself.
cdef uint8_t _LOWER1[256]
cdef bint _WORD1[256]
# ASCII word characters: their lowercase (never 0); 0 for every other ASCII code point. With
# ``lower`` off (a text lowercased already) no uppercase letter is left to look up.
cdef uint8_t _ASCII_WORD_LOWER[128]
for _b in range(256):
    _LOWER1[_b] = ord(chr(_b).lower())
    _WORD1[_b] = chr(_b).isalnum() or _b == 95
    if _b < 128:
        _ASCII_WORD_LOWER[_b] = _LOWER1[_b] if _WORD1[_b] else 0


cdef struct Counts:
    uint64_t lanes[8]
    uint64_t ones[64]
    uint64_t features


cdef inline void _count(Counts* counts, uint64_t h) noexcept:
    cdef int k, j
    h = _fmix64(h)
    for k in range(8):
        counts.lanes[k] += _LANES[(h >> (8 * k)) & 0xFF]
    counts.features += 1
    if counts.features % 255 == 0:
        for k in range(8):
            for j in range(8):
                counts.ones[8 * k + j] += (counts.lanes[k] >> (8 * j)) & 0xFF
            counts.lanes[k] = 0


cdef int _scan(const ucs_t* data, Py_ssize_t n, bint lower, Counts* counts) noexcept:
    """Count the features of ``data`` into ``counts``; -1 when a code point needs ``str.lower()``.

    ``lower`` says whether to lowercase (False: the text is lowercased already). The shingle
    states: ``a`` started two tokens back, ``b`` one token back, ``c`` at the current token.
    """
    cdef uint64_t a = FNV_OFFSET, b = FNV_OFFSET, c = FNV_OFFSET
    cdef uint64_t P = FNV_PRIME
    cdef Py_ssize_t i, ntokens = 0
    cdef uint32_t ch, lo
    cdef bint word, in_word = False
    cdef int k
    for k in range(8):
        counts.lanes[k] = 0
    for k in range(64):
        counts.ones[k] = 0
    counts.features = 0
    i = 0
    while i < n:
        ch = data[i]
        if ch < 128 and _ASCII_WORD_LOWER[ch]:
            # The common case: a run of ASCII word characters, lowercased by table.
            if not in_word:
                in_word = True
                ntokens += 1
                if ntokens > 1:
                    a = (b ^ 0x20) * P
                    b = (c ^ 0x20) * P
                    c = FNV_OFFSET
            while True:
                lo = _ASCII_WORD_LOWER[ch]
                a = (a ^ lo) * P
                b = (b ^ lo) * P
                c = (c ^ lo) * P
                i += 1
                if i == n:
                    break
                ch = data[i]
                if ch >= 128 or not _ASCII_WORD_LOWER[ch]:
                    break
            continue
        i += 1
        if ch < 256:
            lo = _LOWER1[ch] if lower else ch
            word = _WORD1[lo]
        else:
            if lower:
                if ch == 0x130 or ch == 0x3A3:
                    return -1
                lo = Py_UNICODE_TOLOWER(ch)
            else:
                lo = ch
            word = _WORD1[lo] if lo < 256 else Py_UNICODE_ISALNUM(lo)
        if not word:
            if in_word:
                in_word = False
                if ntokens >= 3:
                    _count(counts, a)
            continue
        if not in_word:
            in_word = True
            ntokens += 1
            if ntokens > 1:
                a = (b ^ 0x20) * P
                b = (c ^ 0x20) * P
                c = FNV_OFFSET
        # The UTF-8 bytes of ``lo`` (never a surrogate: those are not word characters).
        if lo < 0x80:
            a = (a ^ lo) * P
            b = (b ^ lo) * P
            c = (c ^ lo) * P
            continue
        if lo < 0x800:
            ch = 0xC0 | (lo >> 6)
        else:
            if lo < 0x10000:
                ch = 0xE0 | (lo >> 12)
            else:
                ch = 0xF0 | (lo >> 18)
                a = (a ^ ch) * P
                b = (b ^ ch) * P
                c = (c ^ ch) * P
                ch = 0x80 | ((lo >> 12) & 0x3F)
            a = (a ^ ch) * P
            b = (b ^ ch) * P
            c = (c ^ ch) * P
            ch = 0x80 | ((lo >> 6) & 0x3F)
        a = (a ^ ch) * P
        b = (b ^ ch) * P
        c = (c ^ ch) * P
        ch = 0x80 | (lo & 0x3F)
        a = (a ^ ch) * P
        b = (b ^ ch) * P
        c = (c ^ ch) * P
    if in_word and ntokens >= 3:
        _count(counts, a)
    # One or two tokens: one feature, the tokens joined by a space, as the twin does.
    if ntokens == 1:
        _count(counts, c)
    elif ntokens == 2:
        _count(counts, b)
    return 0


cdef int _scan_text(str s, bint lower, Counts* counts):
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
    if kind == 1:
        return _scan(<const uint8_t*>data, n, lower, counts)
    if kind == 2:
        return _scan(<const uint16_t*>data, n, lower, counts)
    return _scan(<const uint32_t*>data, n, lower, counts)


def simhash64(str text not None):
    """The 64-bit simhash of ``text`` as a signed int64 (see ccrawl.extract.simhash)."""
    cdef Counts counts
    cdef uint64_t value = 0
    cdef int bit, k, j
    if _scan_text(text, True, &counts) < 0:
        _scan_text(text.lower(), False, &counts)
    if counts.features == 0:
        return 0
    for k in range(8):
        for j in range(8):
            counts.ones[8 * k + j] += (counts.lanes[k] >> (8 * j)) & 0xFF
    for bit in range(64):
        if 2 * counts.ones[bit] > counts.features:
            value |= (<uint64_t>1) << bit
    return <int64_t>value
