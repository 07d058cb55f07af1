# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled batch kernels of the crawl frontier; the twins are in ``ccrawl.crawl.keys``.

* ``keys_hosts``: for each canonical URL of a pyarrow string array, its seen key (the first 8 bytes of
  blake3 of the URL, as a little-endian uint64) and its host (``scheme://HOST/...``), in one pass with
  the GIL released. blake3 is computed here for a URL of at most one chunk (1,024 bytes: one to
  sixteen compressions of the portable reference function); a longer one is hashed by the ``blake3``
  package afterwards, so both paths give the package's digest.
* ``join_lines``: the bodies of queue segments, each the lines ``url`` or ``url<TAB>hops`` of a group
  of rows, copied straight from the array's buffers.
* ``fence_pages``: the page of a sorted run each of a sorted batch of keys would be on (a gallop over the
  fences from one key's answer to the next).
* ``merge_into``: the k-way merge of sorted uint64 arrays into a preallocated one, repeats dropped in the
  same pass (a seen-set merge's window).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint32_t
from libc.string cimport memset

include "urlarrow.pxi"

import numpy as np

cdef uint32_t _IV[8]
_IV[:] = [0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19]
cdef int _PERM[16]
_PERM[:] = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8]
cdef int _SCHEDULE[7][16]


cdef void _init_schedule() noexcept:
    cdef int r, i
    for i in range(16):
        _SCHEDULE[0][i] = i
    for r in range(1, 7):
        for i in range(16):
            _SCHEDULE[r][i] = _SCHEDULE[r - 1][_PERM[i]]


_init_schedule()

DEF CHUNK_START = 1
DEF CHUNK_END = 2
DEF ROOT = 8
DEF CHUNK_LEN = 1024


cdef inline uint32_t _rotr(uint32_t x, int n) noexcept nogil:
    return (x >> n) | (x << (32 - n))


cdef inline void _g(uint32_t* s, int a, int b, int c, int d, uint32_t x, uint32_t y) noexcept nogil:
    s[a] = s[a] + s[b] + x
    s[d] = _rotr(s[d] ^ s[a], 16)
    s[c] = s[c] + s[d]
    s[b] = _rotr(s[b] ^ s[c], 12)
    s[a] = s[a] + s[b] + y
    s[d] = _rotr(s[d] ^ s[a], 8)
    s[c] = s[c] + s[d]
    s[b] = _rotr(s[b] ^ s[c], 7)


cdef inline void _compress(uint32_t* cv, const uint8_t* block, uint32_t block_len, uint32_t flags) noexcept nogil:
    """blake3's compression function with chunk counter 0; ``cv`` becomes the first 8 output words."""
    cdef uint32_t m[16]
    cdef uint32_t s[16]
    cdef int i, r
    cdef const int* k
    for i in range(16):
        m[i] = (<uint32_t> block[4 * i] | (<uint32_t> block[4 * i + 1] << 8) | (<uint32_t> block[4 * i + 2] << 16)
                | (<uint32_t> block[4 * i + 3] << 24))
    for i in range(8):
        s[i] = cv[i]
    s[8] = _IV[0]
    s[9] = _IV[1]
    s[10] = _IV[2]
    s[11] = _IV[3]
    s[12] = 0
    s[13] = 0
    s[14] = block_len
    s[15] = flags
    for r in range(7):
        k = _SCHEDULE[r]
        _g(s, 0, 4, 8, 12, m[k[0]], m[k[1]])
        _g(s, 1, 5, 9, 13, m[k[2]], m[k[3]])
        _g(s, 2, 6, 10, 14, m[k[4]], m[k[5]])
        _g(s, 3, 7, 11, 15, m[k[6]], m[k[7]])
        _g(s, 0, 5, 10, 15, m[k[8]], m[k[9]])
        _g(s, 1, 6, 11, 12, m[k[10]], m[k[11]])
        _g(s, 2, 7, 8, 13, m[k[12]], m[k[13]])
        _g(s, 3, 4, 9, 14, m[k[14]], m[k[15]])
    for i in range(8):
        cv[i] = s[i] ^ s[i + 8]


cdef inline uint64_t _key(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The first 8 bytes of blake3 of ``p[:n]`` (``n`` <= 1,024: one chunk, the root) as a little-endian uint64."""
    cdef uint32_t cv[8]
    cdef uint8_t last[64]
    cdef uint32_t flags = CHUNK_START
    cdef int i
    for i in range(8):
        cv[i] = _IV[i]
    while n > 64:
        _compress(cv, p, 64, flags)
        flags = 0
        p += 64
        n -= 64
    memset(last, 0, 64)
    memcpy(last, p, <size_t> n)
    _compress(cv, last, <uint32_t> n, flags | CHUNK_END | ROOT)
    return <uint64_t> cv[0] | (<uint64_t> cv[1] << 32)


def key_of(bytes data):
    """The seen key of ``data`` when it is at most one chunk long, else None (tests compare it with blake3)."""
    if len(data) > CHUNK_LEN:
        return None
    return _key(<const uint8_t*> (<char*> data), len(data))


cdef inline bint _host_span(const uint8_t* p, Py_ssize_t n, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The host of a canonical URL: after the first ``://``, up to the next ``/`` or ``?`` (or the end)."""
    cdef Py_ssize_t i = 0
    while i + 2 < n and not (p[i] == 58 and p[i + 1] == 47 and p[i + 2] == 47):
        i += 1
    if i + 2 >= n:
        return False
    i += 3
    a[0] = i
    while i < n and p[i] != 47 and p[i] != 63:
        i += 1
    b[0] = i
    return True


def keys_hosts(urls, bint hosts=True):
    """``(keys, hosts)`` of canonical URLs (a pyarrow string array or a sequence of str).

    ``keys``: a numpy uint64 array, 0 for a null row; ``hosts``: a pyarrow string array, null for a
    null row or a URL without ``://`` (None when ``hosts`` is false)."""
    import blake3

    array = as_string_array(urls)
    if array is None:
        from ccrawl.crawl.keys import keys_hosts_py

        return keys_hosts_py(urls, hosts)
    cdef _Rows rows = _Rows(array)
    cdef Py_ssize_t n = rows.n, i, ln, a = 0, b = 0
    cdef const uint8_t* p
    keys = np.zeros(n, dtype=np.uint64)
    cdef uint64_t[::1] kv = keys
    cdef _Out o
    cdef bint failed = False
    cdef list longer = []
    _out_init(&o, n if hosts else 0, 0)
    try:
        with nogil:
            for i in range(n):
                if not rows.get(i, &p, &ln):
                    if hosts:
                        o.status[i] = ROW_NULL
                        o.offsets[i + 1] = o.size
                    continue
                if ln <= CHUNK_LEN:
                    kv[i] = _key(p, ln)
                else:
                    with gil:
                        longer.append(i)
                if not hosts:
                    continue
                if _host_span(p, ln, &a, &b):
                    if _out_reserve(&o, b - a) == NULL:
                        failed = True
                        break
                    memcpy(o.data + o.size, p + a, <size_t> (b - a))
                    o.size += b - a
                    o.status[i] = ROW_OK
                else:
                    o.status[i] = ROW_NULL
                o.offsets[i + 1] = o.size
        if failed:
            raise MemoryError()
        for i in longer:
            kv[i] = int.from_bytes(blake3.blake3(rows.row_bytes(i)).digest(length=8), "little")
        host_array = _out_finish(&o, n, {}) if hosts else None
    finally:
        _out_free(&o)
    return keys, host_array


def join_lines(urls, const int64_t[::1] order, const int64_t[::1] bounds, const int64_t[::1] hops):
    """The segment bodies: for each group ``g``, the rows ``order[bounds[g]:bounds[g + 1]]`` of ``urls``
    (a pyarrow string array without nulls) as lines ``url``, or ``url<TAB>hops`` where ``hops[row]``
    is not 0, joined by newlines (no newline after the last); a list of bytes."""
    cdef _Rows rows = _Rows(as_string_array(urls))
    cdef Py_ssize_t g, j, row, ln, total, groups = len(bounds) - 1
    cdef const uint8_t* p
    cdef list out = []
    cdef bytes body
    cdef char* d
    cdef bytes digits
    if len(hops) != rows.n:
        raise ValueError("hops must have one value per row")
    for g in range(groups):
        total = 0
        for j in range(bounds[g], bounds[g + 1]):
            row = order[j]
            if row < 0 or row >= rows.n or not rows.get(row, &p, &ln):
                raise ValueError("a row out of range or null")
            total += ln + 1
            if hops[row]:
                total += 1 + len(str(hops[row]))
        body = PyBytes_FromStringAndSize(NULL, total - 1 if total else 0)
        d = PyBytes_AS_STRING(body)
        for j in range(bounds[g], bounds[g + 1]):
            row = order[j]
            rows.get(row, &p, &ln)
            memcpy(d, p, <size_t> ln)
            d += ln
            if hops[row]:
                digits = b"\t" + str(hops[row]).encode("ascii")
                memcpy(d, <char*> digits, <size_t> len(digits))
                d += len(digits)
            if j + 1 < bounds[g + 1]:
                d[0] = 10
                d += 1
        out.append(body)
    return out


def pair_keys(bytes prefix, list left, const int64_t[::1] li, list right, const int64_t[::1] ri):
    """The seen keys of the strings ``prefix + left[li[k]] + " " + right[ri[k]]`` (the trap budgets'
    edges: ``prefix`` names the kind), a numpy uint64 array; ``left`` and ``right`` are lists of str."""
    import blake3

    cdef Py_ssize_t n = len(li), k, a, b, lp = len(prefix), total
    if len(ri) != n:
        raise ValueError("li and ri must have the same length")
    cdef list lb = [s.encode("utf-8", "surrogatepass") for s in left]
    cdef list rb = [s.encode("utf-8", "surrogatepass") for s in right]
    keys = np.zeros(n, dtype=np.uint64)
    cdef uint64_t[::1] kv = keys
    cdef uint8_t buf[CHUNK_LEN]
    cdef bytes x, y
    cdef Py_ssize_t nl = len(lb), nr = len(rb)
    for k in range(n):
        a = li[k]
        b = ri[k]
        if a < 0 or a >= nl or b < 0 or b >= nr:
            raise IndexError("pair index out of range")
        x = <bytes> lb[a]
        y = <bytes> rb[b]
        total = lp + len(x) + 1 + len(y)
        if total > CHUNK_LEN:
            kv[k] = int.from_bytes(blake3.blake3(prefix + x + b" " + y).digest(length=8), "little")
            continue
        memcpy(buf, <char*> prefix, <size_t> lp)
        memcpy(buf + lp, <char*> x, <size_t> len(x))
        buf[lp + len(x)] = 32
        memcpy(buf + lp + len(x) + 1, <char*> y, <size_t> len(y))
        kv[k] = _key(buf, total)
    return keys


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define CK_PREFETCH(p) __builtin_prefetch((p), 0, 0)
    #else
    #define CK_PREFETCH(p) ((void)(p))
    #endif
    """
    void CK_PREFETCH(const void* p) nogil


cdef enum:
    _AHEAD = 16  # keys ahead whose page is prefetched


def fence_pages(const uint64_t[::1] fences, const uint64_t[::1] want):
    """For each key of ``want`` (sorted): the index of the last fence at most the key, -1 below the first.

    The same as ``np.searchsorted(fences, want, side="right") - 1`` (the twin,
    ``ccrawl.crawl.keys.fence_pages_py``), for sorted keys: each search gallops forward from the last answer
    instead of halving the whole array, so a batch walks the fences once, in order, touching the few cache
    lines between one key's fence and the next, with the GIL released."""
    cdef Py_ssize_t n = want.shape[0], nf = fences.shape[0], k
    cdef int64_t lo = 0, hi, step, mid
    cdef uint64_t w, last = 0
    for k in range(n):
        if want[k] < last:
            raise ValueError("want must be sorted")
        last = want[k]
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for k in range(n):
            w = want[k]
            if lo >= nf or fences[lo] > w:  # fences[lo - 1] <= w (or lo == 0): the answer is lo - 1
                o[k] = lo - 1
                continue
            step = 1  # fences[lo] <= w: gallop to a fence above w, then halve
            while lo + step < nf and fences[lo + step] <= w:
                lo += step
                step <<= 1
            hi = lo + step if lo + step < nf else nf
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if fences[mid] <= w:
                    lo = mid
                else:
                    hi = mid
            o[k] = lo
    return out


def page_search(const uint64_t[::1] keys, const int64_t[::1] at, const uint64_t[::1] want, int64_t page_keys):
    """For each k: whether ``want[k]`` is among ``keys[at[k] : at[k] + page_keys]`` (a sorted run's page
    whose first key is at most ``want[k]``): a binary search in that page, with the GIL released.
    A numpy bool array; the twin is ``ccrawl.crawl.keys.page_search_py``."""
    cdef Py_ssize_t n = want.shape[0], m = keys.shape[0], k
    cdef int64_t lo, hi, mid
    cdef uint64_t w
    if at.shape[0] != n:
        raise ValueError("at and want must have the same length")
    if page_keys < 1:
        raise ValueError("page_keys must be at least 1")
    for k in range(n):
        if at[k] < 0 or at[k] >= m:
            raise IndexError("page start out of range")
    out = np.zeros(n, dtype=np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    with nogil:
        for k in range(n):
            if k + _AHEAD < n:  # the page of a key further on: its cache miss overlaps this search
                mid = at[k + _AHEAD] + page_keys // 2
                CK_PREFETCH(&keys[mid if mid < m else m - 1])
            lo = at[k]
            hi = lo + page_keys
            if hi > m:
                hi = m
            w = want[k]
            while hi - lo > 1:  # keys[lo] <= w: the largest such index of the page
                mid = (lo + hi) >> 1
                if keys[mid] <= w:
                    lo = mid
                else:
                    hi = mid
            o[k] = keys[lo] == w
    return out



cdef Py_ssize_t _merge2(const uint64_t* a, Py_ssize_t na, const uint64_t* b, Py_ssize_t nb, uint64_t* o) noexcept nogil:
    """Two sorted arrays into ``o``, each distinct key once (branch-free: the smaller head is written and its
    side steps on, both sides on equal heads, and the write counts only when the key differs from the last)."""
    cdef Py_ssize_t i = 0, j = 0, n = 0
    cdef uint64_t x, y, m, last
    if na == 0 and nb == 0:
        return 0
    if na and (nb == 0 or a[0] <= b[0]):
        last = a[0]
    else:
        last = b[0]
    o[0] = last
    n = 1
    while i < na and j < nb:
        x = a[i]
        y = b[j]
        m = x if x < y else y
        i += x <= y
        j += y <= x
        o[n] = m
        n += m != last
        last = m
    n = _tail(a + i, na - i, o, n, &last)
    return _tail(b + j, nb - j, o, n, &last)


cdef inline Py_ssize_t _tail(const uint64_t* src, Py_ssize_t count, uint64_t* o, Py_ssize_t n,
                             uint64_t* last) noexcept nogil:
    """The rest of one side after the other ran out, appended at ``o[n]`` the same branch-free way (a key
    equal to ``*last`` is written over); returns the new count."""
    cdef Py_ssize_t k
    cdef uint64_t m
    for k in range(count):
        m = src[k]
        o[n] = m
        n += m != last[0]
        last[0] = m
    return n


def merge_into(list parts, uint64_t[::1] out, uint64_t[::1] scratch=None):
    """Merge the sorted uint64 arrays ``parts`` into ``out``, each distinct key once, in order; returns the
    keys written. ``out`` must hold ``sum(len(p) for p in parts)`` keys. The twin is
    ``ccrawl.crawl.keys.merge_into_py`` (a concatenation, a stable sort and a comparison pass).

    With the GIL released: the parts are merged two at a time, smallest first (the result of one merge with
    the next smallest part, as a Huffman tree would), each by a branch-free two-way merge that drops a key
    equal to the last written (repeats inside a part and across parts), between ``out`` and one scratch
    buffer so the last merge lands in ``out``. ``scratch`` (as large as ``out``), when given, is that buffer
    (a merge of many windows reuses one: a fresh one per window cost a page fault per 4 KB of it), else one
    is allocated for the call. A part that is not sorted gives an unsorted output."""
    cdef Py_ssize_t k = len(parts), i, j, total = 0, n = 0, m
    cdef list views = []
    cdef const uint64_t[::1] v
    for i in range(k):
        v = np.ascontiguousarray(parts[i], dtype=np.uint64)  # a view when it is one already (a merge's windows)
        if v.shape[0]:
            views.append(v)
            total += v.shape[0]
    if total > out.shape[0]:
        raise ValueError(f"out holds {out.shape[0]} keys, the parts {total}")
    if total == 0:
        return 0
    views.sort(key=len)
    k = len(views)
    cdef const uint64_t** ptr = <const uint64_t**> malloc(sizeof(uint64_t*) * k)
    cdef Py_ssize_t* lens = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * k)
    cdef uint64_t* tmp = NULL
    cdef bint own = False
    if k > 2:
        if scratch is not None and scratch.shape[0] >= total:
            tmp = &scratch[0]
        else:
            tmp = <uint64_t*> malloc(sizeof(uint64_t) * <size_t> total)
            own = True
    if ptr == NULL or lens == NULL or (k > 2 and tmp == NULL):
        free(ptr)
        free(lens)
        if own:
            free(tmp)
        raise MemoryError()
    for i in range(k):
        v = views[i]
        ptr[i] = &v[0]
        lens[i] = v.shape[0]
    cdef uint64_t* o = &out[0]
    cdef uint64_t* dst
    cdef const uint64_t* acc
    with nogil:
        if k == 1:
            n = _merge2(ptr[0], lens[0], ptr[0], 0, o)
        else:
            acc = ptr[0]
            n = lens[0]
            for j in range(1, k):  # k - 1 merges, alternating so that the last one writes into out
                dst = o if (k - 1 - j) % 2 == 0 else tmp
                m = _merge2(acc, n, ptr[j], lens[j], dst)
                acc = dst
                n = m
    free(ptr)
    free(lens)
    if own:
        free(tmp)
    return n
