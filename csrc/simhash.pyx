# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled simhash64; the definition and the pure-Python twin are in ccrawl/extract/simhash.py.

One pass over the lowercased text keeps the last three tokens as (start, end) index pairs and
hashes each 3-shingle straight from the string's code points, encoding UTF-8 on the fly, so no
token or shingle string is ever built.
"""

from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdint cimport int64_t, uint32_t, uint64_t

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x00000100000001B3ULL


cdef inline uint64_t _fnv_byte(uint64_t h, unsigned char b) noexcept:
    return (h ^ b) * FNV_PRIME


cdef inline uint64_t _fnv_code_point(uint64_t h, uint32_t c) noexcept:
    # The code point's UTF-8 bytes; tokens hold only alphanumerics and "_", never surrogates.
    if c < 0x80:
        return _fnv_byte(h, <unsigned char>c)
    if c < 0x800:
        h = _fnv_byte(h, <unsigned char>(0xC0 | (c >> 6)))
        return _fnv_byte(h, <unsigned char>(0x80 | (c & 0x3F)))
    if c < 0x10000:
        h = _fnv_byte(h, <unsigned char>(0xE0 | (c >> 12)))
        h = _fnv_byte(h, <unsigned char>(0x80 | ((c >> 6) & 0x3F)))
        return _fnv_byte(h, <unsigned char>(0x80 | (c & 0x3F)))
    h = _fnv_byte(h, <unsigned char>(0xF0 | (c >> 18)))
    h = _fnv_byte(h, <unsigned char>(0x80 | ((c >> 12) & 0x3F)))
    h = _fnv_byte(h, <unsigned char>(0x80 | ((c >> 6) & 0x3F)))
    return _fnv_byte(h, <unsigned char>(0x80 | (c & 0x3F)))


cdef inline uint64_t _fnv_token(uint64_t h, int kind, void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    cdef Py_ssize_t i
    for i in range(start, end):
        h = _fnv_code_point(h, <uint32_t>PyUnicode_READ(kind, data, i))
    return h


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


cdef inline void _count(uint64_t* lanes, uint64_t h) noexcept:
    cdef int k
    for k in range(8):
        lanes[k] += _LANES[(h >> (8 * k)) & 0xFF]


cdef inline void _empty_lanes(uint64_t* lanes, uint64_t* ones) noexcept:
    cdef int k, j
    for k in range(8):
        for j in range(8):
            ones[8 * k + j] += (lanes[k] >> (8 * j)) & 0xFF
        lanes[k] = 0


cdef inline bint _is_word(Py_UCS4 c) noexcept:
    cdef uint32_t u = <uint32_t>c
    if u < 128:
        # ASCII: letters, digits and "_" without the Unicode database lookups.
        return (u - 48 < 10) or ((u | 32) - 97 < 26) or u == 95
    return Py_UNICODE_ISALNUM(c)


def simhash64(str text not None):
    """The 64-bit simhash of ``text`` as a signed int64 (see ccrawl.extract.simhash)."""
    cdef str s = text.lower()
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
    cdef Py_ssize_t i = 0, start
    # The last three tokens seen, oldest first, as [start, end) pairs.
    cdef Py_ssize_t s0 = 0, e0 = 0, s1 = 0, e1 = 0, s2 = 0, e2 = 0
    cdef Py_ssize_t ntokens = 0
    cdef uint64_t ones[64]
    cdef uint64_t lanes[8]
    cdef uint64_t features = 0
    cdef uint64_t h, value = 0
    cdef int bit
    for bit in range(64):
        ones[bit] = 0
    for bit in range(8):
        lanes[bit] = 0
    while i < n:
        if not _is_word(PyUnicode_READ(kind, data, i)):
            i += 1
            continue
        start = i
        while i < n and _is_word(PyUnicode_READ(kind, data, i)):
            i += 1
        s0, e0, s1, e1, s2, e2 = s1, e1, s2, e2, start, i
        ntokens += 1
        if ntokens >= 3:
            h = _fnv_token(FNV_OFFSET, kind, data, s0, e0)
            h = _fnv_byte(h, 0x20)
            h = _fnv_token(h, kind, data, s1, e1)
            h = _fnv_byte(h, 0x20)
            h = _fnv_token(h, kind, data, s2, e2)
            _count(lanes, _fmix64(h))
            features += 1
            if features % 255 == 0:
                _empty_lanes(lanes, ones)
    if ntokens == 0:
        return 0
    if ntokens < 3:
        # One feature: the one or two tokens joined by a space, as the twin does.
        h = FNV_OFFSET
        if ntokens == 2:
            h = _fnv_token(h, kind, data, s1, e1)
            h = _fnv_byte(h, 0x20)
        h = _fnv_token(h, kind, data, s2, e2)
        _count(lanes, _fmix64(h))
        features = 1
    _empty_lanes(lanes, ones)
    for bit in range(64):
        if 2 * ones[bit] > features:
            value |= (<uint64_t>1) << bit
    return <int64_t>value

