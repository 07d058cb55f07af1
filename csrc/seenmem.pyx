# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled kernels of the seen set's in-memory hash set; the twins are in ``ccrawl.crawl.seenmem``.

The table is a numpy ``uint64`` array whose length is a power of two, 0 marking an empty slot (the key
0 is kept apart by the caller). A key's home slot is the top ``bits`` bits of ``key * 0x9E3779B97F4A7C15``
(Fibonacci hashing: keys that are not uniform, such as a test's small integers, still spread), and a
key sits at the first empty slot from its home on (linear probing). A lookup reads one or two
adjacent cache lines, however many keys the table holds.

* ``set_add``: insert keys (0 skipped; a key already held, or twice in the batch, is inserted once);
  returns how many were inserted.
* ``set_has``: for each key, whether the table holds it (a numpy bool array).

Both run with the GIL released and prefetch the home slot of a key further on, so the cache misses of
a batch overlap.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SM_PREFETCH(p) __builtin_prefetch((p), 0, 0)
    #else
    #define SM_PREFETCH(p) ((void)(p))
    #endif
    """
    void SM_PREFETCH(const void* p) nogil

cdef enum:
    _AHEAD = 8  # keys ahead whose home slot is prefetched
cdef uint64_t _MUL = 0x9E3779B97F4A7C15ULL


cdef inline int _shift(Py_ssize_t size) except -1:
    cdef int bits = 0
    if size < 2 or (size & (size - 1)) != 0:
        raise ValueError("the table's length must be a power of two, at least 2")
    while (<Py_ssize_t>1 << bits) < size:
        bits += 1
    return 64 - bits


def set_add(uint64_t[::1] table, const uint64_t[::1] keys):
    """Insert ``keys`` into ``table`` (0 skipped, a key held already skipped); returns the count inserted.
    The caller keeps the table at most half full (a full table would loop)."""
    cdef Py_ssize_t n = keys.shape[0], size = table.shape[0], k
    cdef int shift = _shift(size)
    cdef uint64_t mask = <uint64_t>size - 1, key, slot, v
    cdef int64_t added = 0
    with nogil:
        for k in range(n):
            if k + _AHEAD < n:
                SM_PREFETCH(&table[(keys[k + _AHEAD] * _MUL) >> shift])
            key = keys[k]
            if key == 0:
                continue
            slot = (key * _MUL) >> shift
            while True:
                v = table[slot]
                if v == key:
                    break
                if v == 0:
                    table[slot] = key
                    added += 1
                    break
                slot = (slot + 1) & mask
    return added


def set_has(const uint64_t[::1] table, const uint64_t[::1] keys):
    """For each of ``keys``: whether ``table`` holds it (0 never: the caller answers for it)."""
    cdef Py_ssize_t n = keys.shape[0], size = table.shape[0], k
    cdef int shift = _shift(size)
    cdef uint64_t mask = <uint64_t>size - 1, key, slot, v
    out = np.zeros(n, dtype=np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    with nogil:
        for k in range(n):
            if k + _AHEAD < n:
                SM_PREFETCH(&table[(keys[k + _AHEAD] * _MUL) >> shift])
            key = keys[k]
            if key == 0:
                continue
            slot = (key * _MUL) >> shift
            while True:
                v = table[slot]
                if v == key:
                    o[k] = 1
                    break
                if v == 0:
                    break
                slot = (slot + 1) & mask
    return out
