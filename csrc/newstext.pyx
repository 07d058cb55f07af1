# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled visible-text sample of an HTML body; contract and twin: ccrawl/commoncrawl/news/text.py.

One pass over the window with memchr: tags become a space, comments and script/style/noscript/
template/svg blocks are dropped, ASCII whitespace runs collapse to one space, and the walk stops as
soon as ``limit`` bytes of text are out. No Python object is made until the result.
"""

from libc.string cimport memchr, memcmp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport free, malloc


cdef inline bint _ws(unsigned char c) nogil:
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 11 or c == 12


cdef inline unsigned char _low(unsigned char c) nogil:
    return c + 32 if 65 <= c <= 90 else c


cdef Py_ssize_t _find_ci(const unsigned char* s, Py_ssize_t pos, Py_ssize_t end,
                         const unsigned char* pat, Py_ssize_t n) nogil:
    """First position of ``pat`` (lower-case) in s[pos:end], ASCII case-insensitive; -1 if none."""
    cdef Py_ssize_t i, j
    cdef const void* hit
    i = pos
    while i + n <= end:
        hit = memchr(s + i, b"<", <size_t>(end - n + 1 - i))
        if hit == NULL:
            return -1
        i = <const unsigned char*>hit - s
        j = 1
        while j < n and _low(s[i + j]) == pat[j]:
            j += 1
        if j == n:
            return i
        i += 1
    return -1


cdef const char* _NAMES[5]
_NAMES[0] = b"script"
_NAMES[1] = b"style"
_NAMES[2] = b"noscript"
_NAMES[3] = b"template"
_NAMES[4] = b"svg"
cdef Py_ssize_t _LENS[5]
_LENS[:] = [6, 5, 8, 8, 3]


def visible_text(bytes data, Py_ssize_t start=0, Py_ssize_t window=49152, Py_ssize_t limit=4096):
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t pos, end, gt, k, nlen, n, e
    cdef unsigned char c
    cdef bint pending = False
    cdef const void* hit
    cdef unsigned char closing[12]
    if start < 0:
        start = 0
    if start > size:
        start = size
    end = start + window if window < size - start else size
    if limit <= 0:
        return b""
    cdef unsigned char* out = <unsigned char*>malloc(limit + 1)
    if out == NULL:
        raise MemoryError()
    n = 0
    pos = start
    try:
        with nogil:
            while pos < end and n < limit:
                c = s[pos]
                if c != 60:  # not '<': text
                    if _ws(c):
                        pending = True
                    else:
                        if pending and n > 0:
                            out[n] = 32
                            n += 1
                            if n >= limit:
                                break
                        pending = False
                        out[n] = c
                        n += 1
                    pos += 1
                    continue
                pending = True
                if pos + 4 <= end and memcmp(s + pos, b"<!--", 4) == 0:
                    e = pos + 4
                    while e + 3 <= end and memcmp(s + e, b"-->", 3) != 0:
                        e += 1
                    pos = e + 3 if e + 3 <= end else end
                    continue
                hit = memchr(s + pos + 1, b">", <size_t>(end - pos - 1)) if pos + 1 < end else NULL
                if hit == NULL:
                    break
                gt = <const unsigned char*>hit - s
                nlen = 0
                while pos + 1 + nlen < gt and not _ws(s[pos + 1 + nlen]) and s[pos + 1 + nlen] != 47:
                    nlen += 1
                k = -1
                if 3 <= nlen <= 8:
                    for i in range(5):
                        if _LENS[i] == nlen:
                            e = 0
                            while e < nlen and _low(s[pos + 1 + e]) == <unsigned char>_NAMES[i][e]:
                                e += 1
                            if e == nlen:
                                k = i
                                break
                if k < 0:
                    pos = gt + 1
                    continue
                closing[0] = 60
                closing[1] = 47
                for e in range(nlen):
                    closing[2 + e] = <unsigned char>_NAMES[k][e]
                e = _find_ci(s, gt + 1, end, closing, nlen + 2)
                if e < 0:
                    pos = end
                    break
                hit = memchr(s + e, b">", <size_t>(end - e))
                if hit == NULL:
                    pos = end
                    break
                pos = (<const unsigned char*>hit - s) + 1
            while n > 0 and out[n - 1] == 32:
                n -= 1
        return PyBytes_FromStringAndSize(<char*>out, n)
    finally:
        free(out)
