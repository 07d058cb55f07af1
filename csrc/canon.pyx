# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled canon/1 canonicalisation: the twin of ``ccrawl.url.canon.canonicalize_py``, in C on the bytes.

The kernel (``_canon_c``) runs without the GIL and without a Python object per step. It covers what
almost every URL looks like: ASCII, an http(s) scheme, a plain host name and a numeric port, with
percent-normalisation, tracking path parameters, dot segments and the tracking query filter done in C
against the rules copied into C hash sets. Anything else (non-ASCII text, an IPv6 or percent-encoded
host, a URL with whitespace to trim, a bad scheme, host or port) goes to the pure-Python twin, which is
the one definition of those cases and raises the errors.

Per call: ``Canonicalizer.canonicalize``; batch: ``Canonicalizer.canonical_array`` (a sequence of str
or a pyarrow string array in, a pyarrow string array out, the C pass with the GIL released).
"""

from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.stdint cimport uint64_t
from libc.string cimport memcmp

include "urlarrow.pxi"

cdef object _py = None  # ccrawl.url.canon, imported on first use (it imports this module)

cdef uint8_t _UNRESERVED[256]
cdef uint8_t _ALLOWED[256]
cdef uint8_t _HOSTCHAR[256]
cdef uint8_t _TOKENCHAR[256]
cdef uint8_t _HEXVAL[256]
cdef const char* _UPPER_HEX = b"0123456789ABCDEF"


cdef void _init_tables() noexcept:
    cdef int c
    for c in range(256):
        _UNRESERVED[c] = 0
        _ALLOWED[c] = 0
        _HOSTCHAR[c] = 0
        _TOKENCHAR[c] = 0
        _HEXVAL[c] = 255
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~":
        _UNRESERVED[c] = 1
        _ALLOWED[c] = 1
    for c in b"!$&'()*+,;=:@/?":
        _ALLOWED[c] = 1
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789-_.":
        _HOSTCHAR[c] = 1
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-":
        _TOKENCHAR[c] = 1
    for c in range(10):
        _HEXVAL[48 + c] = c
    for c in range(6):
        _HEXVAL[65 + c] = 10 + c
        _HEXVAL[97 + c] = 10 + c


_init_tables()


cdef object _helpers():
    global _py
    if _py is None:
        from ccrawl.url import canon as module
        _py = module
    return _py


cdef inline uint64_t _fnv(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ s[i]) * 0x100000001B3ULL
    return h


cdef class _Set:
    """A set of byte strings with a lookup in C (open addressing on FNV-1a)."""

    cdef uint64_t* hashes
    cdef Py_ssize_t* offs
    cdef Py_ssize_t* lens
    cdef uint64_t mask
    cdef bytes blob
    cdef const char* blob_ptr
    cdef Py_ssize_t count

    def __cinit__(self):
        self.hashes = NULL
        self.offs = NULL
        self.lens = NULL

    def __dealloc__(self):
        free(self.hashes)
        free(self.offs)
        free(self.lens)

    def __init__(self, items):
        cdef list keys = [item.encode("utf-8") for item in items]
        cdef uint64_t size = 16, k, h
        while size < 2 * len(keys) + 16:
            size *= 2
        self.mask = size - 1
        self.count = len(keys)
        self.hashes = <uint64_t*> malloc(sizeof(uint64_t) * size)
        self.offs = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * size)
        self.lens = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * size)
        if self.hashes == NULL or self.offs == NULL or self.lens == NULL:
            raise MemoryError()
        for k in range(size):
            self.lens[k] = -1
        self.blob = b"".join(keys)
        self.blob_ptr = <const char*> self.blob
        cdef Py_ssize_t off = 0
        cdef bytes key
        for key in keys:
            h = _fnv(<const uint8_t*> (<char*> key), len(key))
            k = h & self.mask
            while self.lens[k] >= 0:
                k = (k + 1) & self.mask
            self.hashes[k] = h
            self.offs[k] = off
            self.lens[k] = len(key)
            off += len(key)

    cdef bint has(self, const uint8_t* s, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = _fnv(s, n)
        cdef uint64_t k = h & self.mask
        while self.lens[k] >= 0:
            if self.hashes[k] == h and self.lens[k] == n and memcmp(self.blob_ptr + self.offs[k], s, n) == 0:
                return True
            k = (k + 1) & self.mask
        return False

    cdef bint has_prefix_of(self, const uint8_t* s, Py_ssize_t n) noexcept nogil:
        """True when some member is a prefix of ``s`` (members are few: a linear scan)."""
        cdef uint64_t k
        for k in range(self.mask + 1):
            if self.lens[k] >= 0 and self.lens[k] <= n and memcmp(self.blob_ptr + self.offs[k], s, self.lens[k]) == 0:
                return True
        return False


cdef struct _Buf:
    uint8_t* a
    uint8_t* b
    uint8_t* name
    Py_ssize_t cap


cdef bint _reserve(_Buf* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t want = 3 * n + 64
    if want <= s.cap:
        return True
    free(s.a)
    free(s.b)
    free(s.name)
    s.a = <uint8_t*> malloc(want)
    s.b = <uint8_t*> malloc(want)
    s.name = <uint8_t*> malloc(want)
    if s.a == NULL or s.b == NULL or s.name == NULL:
        s.cap = 0
        return False
    s.cap = want
    return True


cdef void _release(_Buf* s) noexcept nogil:
    free(s.a)
    free(s.b)
    free(s.name)
    s.a = s.b = s.name = NULL
    s.cap = 0


cdef Py_ssize_t _normalize_percent(const uint8_t* s, Py_ssize_t n, uint8_t* o) noexcept nogil:
    """Step 7 on an ASCII path or query into ``o`` (room for 3n); the length."""
    cdef Py_ssize_t i = 0, j = 0
    cdef uint8_t c, v
    while i < n:
        c = s[i]
        if c == 37:
            if i + 2 < n and _HEXVAL[s[i + 1]] != 255 and _HEXVAL[s[i + 2]] != 255:
                v = _HEXVAL[s[i + 1]] * 16 + _HEXVAL[s[i + 2]]
                if _UNRESERVED[v]:
                    o[j] = v
                    j += 1
                else:
                    o[j] = 37
                    o[j + 1] = _UPPER_HEX[v >> 4]
                    o[j + 2] = _UPPER_HEX[v & 15]
                    j += 3
                i += 3
                continue
            o[j] = 37
            o[j + 1] = 50  # '2'
            o[j + 2] = 53  # '5'
            j += 3
        elif _ALLOWED[c]:
            o[j] = c
            j += 1
        else:
            o[j] = 37
            o[j + 1] = _UPPER_HEX[c >> 4]
            o[j + 2] = _UPPER_HEX[c & 15]
            j += 3
        i += 1
    return j


cdef bint _is_session_token(const uint8_t* v, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef bint digit = False
    if n < 16:
        return False
    for i in range(n):
        if not _TOKENCHAR[v[i]]:
            return False
        if 48 <= v[i] <= 57:
            digit = True
    return digit


cdef class Canonicalizer:
    """canon/1 with one set of tracking rules (names, prefixes, token names; all lowercase)."""

    cdef _Set names, token_names, prefixes
    cdef bint any_prefix
    cdef _Buf shared  # the per-call API's scratch (the GIL serialises its users)
    cdef uint8_t* out
    cdef Py_ssize_t out_cap

    def __cinit__(self):
        self.shared.a = self.shared.b = self.shared.name = NULL
        self.shared.cap = 0
        self.out = NULL
        self.out_cap = 0

    def __dealloc__(self):
        _release(&self.shared)
        free(self.out)

    def __init__(self, names, prefixes, token_names):
        self.names = _Set(names)
        self.token_names = _Set(token_names)
        self.prefixes = _Set(prefixes)
        self.any_prefix = self.prefixes.count > 0

    cdef bint _removes(self, const uint8_t* p, Py_ssize_t n, uint8_t* name) noexcept nogil:
        """The tracking rules on one ``name=value`` parameter."""
        cdef Py_ssize_t eq = n, i
        cdef uint8_t c
        for i in range(n):
            if p[i] == 61:
                eq = i
                break
        for i in range(eq):
            c = p[i]
            name[i] = c + 32 if 65 <= c <= 90 else c
        if self.names.has(name, eq):
            return True
        if self.token_names.has(name, eq) and _is_session_token(p + eq + 1, n - eq - 1 if eq < n else 0):
            return True
        return self.any_prefix and self.prefixes.has_prefix_of(name, eq)

    cdef Py_ssize_t _filter(self, const uint8_t* q, Py_ssize_t n, uint8_t sep, uint8_t* o, uint8_t* name,
                            bint keep_first) noexcept nogil:
        """``sep``-separated fields of ``q`` without those the rules remove (the first kept as the base
        of a path segment when ``keep_first``); the length written to ``o``."""
        cdef Py_ssize_t i, start = 0, j = 0, field = 0
        cdef bint first_out = True
        for i in range(n + 1):
            if i == n or q[i] == sep:
                if (keep_first and field == 0) or not self._removes(q + start, i - start, name):
                    if not first_out:
                        o[j] = sep
                        j += 1
                    memcpy(o + j, q + start, i - start)
                    j += i - start
                    first_out = False
                field += 1
                start = i + 1
        return j

    cdef Py_ssize_t _path_params(self, const uint8_t* p, Py_ssize_t n, uint8_t* o, uint8_t* name) noexcept nogil:
        """Step 8: each "/"-segment with a ";" loses the path parameters the rules match."""
        cdef Py_ssize_t i, start = 0, j = 0, k
        cdef bint semi
        for i in range(n + 1):
            if i == n or p[i] == 47:
                semi = False
                for k in range(start, i):
                    if p[k] == 59:
                        semi = True
                        break
                if semi:
                    j += self._filter(p + start, i - start, 59, o + j, name, True)
                else:
                    memcpy(o + j, p + start, i - start)
                    j += i - start
                if i < n:
                    o[j] = 47
                    j += 1
                start = i + 1
        return j

    cdef Py_ssize_t _canon_c(self, const uint8_t* u, Py_ssize_t n, uint8_t* out, _Buf* sc) noexcept nogil:
        """canon/1 of ``u`` into ``out`` (room for 3n + 64); its length, or -1: the twin must answer."""
        cdef Py_ssize_t i, start, end, q = -1, qn = 0, slash, hs, he, ps, port = -1, j, k, plen, m
        cdef bint https, dot
        cdef uint8_t c
        if n == 0 or u[0] <= 32 or u[n - 1] <= 32:
            return -1
        for i in range(n):
            c = u[i]
            if c >= 128 or c == 9 or c == 10 or c == 13:
                return -1
        if n >= 7 and (u[0] | 32) == 104 and (u[1] | 32) == 116 and (u[2] | 32) == 116 and (u[3] | 32) == 112:
            if u[4] == 58 and u[5] == 47 and u[6] == 47:
                https = False
                start = 7
            elif n >= 8 and (u[4] | 32) == 115 and u[5] == 58 and u[6] == 47 and u[7] == 47:
                https = True
                start = 8
            else:
                return -1
        else:
            return -1
        end = n
        for i in range(start, n):
            if u[i] == 35:
                end = i
                break
        for i in range(start, end):
            if u[i] == 63:
                q = i + 1
                qn = end - q
                end = i
                break
        slash = end
        for i in range(start, end):
            if u[i] == 47:
                slash = i
                break
        hs = start
        for i in range(slash - 1, start - 1, -1):
            if u[i] == 64:
                hs = i + 1
                break
        if hs < slash and u[hs] == 91:
            return -1
        he = slash
        for i in range(hs, slash):
            if u[i] == 37:
                return -1
        for i in range(hs, slash):
            if u[i] == 58:
                he = i
                break
        ps = he + 1 if he < slash else slash
        # host: lowercase, one trailing dot dropped, plain labels of [a-z0-9-_]
        j = 0
        out[0] = 104
        out[1] = 116
        out[2] = 116
        out[3] = 112
        j = 4
        if https:
            out[j] = 115
            j += 1
        out[j] = 58
        out[j + 1] = 47
        out[j + 2] = 47
        j += 3
        if he > hs and u[he - 1] == 46:
            he -= 1
        if he == hs or u[hs] == 46 or u[he - 1] == 46:
            return -1
        for i in range(hs, he):
            c = u[i]
            if 65 <= c <= 90:
                c += 32
            if not _HOSTCHAR[c] or (c == 46 and u[i + 1] == 46):
                return -1
            out[j] = c
            j += 1
        # port
        if ps < slash:
            if slash - ps > 5:
                return -1
            port = 0
            for i in range(ps, slash):
                c = u[i]
                if not 48 <= c <= 57:
                    return -1
                port = port * 10 + c - 48
            if port == 0 or port > 65535:
                return -1
            if not ((port == 80 and not https) or (port == 443 and https)):
                out[j] = 58
                j += 1
                m = 10000
                while m > port:
                    m //= 10
                while m:
                    out[j] = 48 + port // m % 10
                    j += 1
                    m //= 10
        # path: percent, path parameters, dot segments
        plen = _normalize_percent(u + slash, end - slash, sc.a)
        k = 0
        for i in range(plen):
            if sc.a[i] == 59:
                k = 1
                break
        if k:
            plen = self._path_params(sc.a, plen, sc.b, sc.name)
            memcpy(sc.a, sc.b, plen)
        dot = False
        for i in range(plen):
            if sc.a[i] == 46:
                dot = True
                break
        if not dot:
            if plen == 0:
                out[j] = 47
                j += 1
            else:
                memcpy(out + j, sc.a, plen)
                j += plen
        else:
            j += _remove_dot_segments(sc.a, plen, out + j, sc.b)
        if qn > 0:
            qn = _normalize_percent(u + q, qn, sc.a)
            qn = self._filter(sc.a, qn, 38, sc.b, sc.name, False)
            if qn > 0:
                out[j] = 63
                j += 1
                memcpy(out + j, sc.b, qn)
                j += qn
        return j

    def filter_query(self, str query):
        """Step 10 on a percent-normalised query."""
        cdef bytes data = query.encode("utf-8")
        cdef Py_ssize_t n = len(data)
        if not _reserve(&self.shared, n):
            raise MemoryError()
        n = self._filter(<const uint8_t*> (<char*> data), n, 38, self.shared.a, self.shared.name, False)
        return (<char*> self.shared.a)[:n].decode("utf-8")

    def canonicalize(self, str url):
        """``url`` in canon/1 form; InputError when it is not a crawlable URL."""
        cdef Py_ssize_t n, m
        cdef const char* p
        try:
            p = PyUnicode_AsUTF8AndSize(url, &n)
        except UnicodeEncodeError:
            return _helpers().canonicalize_py(url)
        if not _reserve(&self.shared, n):
            raise MemoryError()
        if 3 * n + 64 > self.out_cap:
            free(self.out)
            self.out = <uint8_t*> malloc(3 * n + 64)
            if self.out == NULL:
                self.out_cap = 0
                raise MemoryError()
            self.out_cap = 3 * n + 64
        m = self._canon_c(<const uint8_t*> p, n, self.out, &self.shared)
        if m < 0:
            return _helpers().canonicalize_py(url)
        return PyUnicode_DecodeASCII(<const char*> self.out, m, NULL)

    def canonical_array(self, urls, bint with_errors=False):
        """canon/1 of every row: a pyarrow string array (null for a null or bad row), in input order.

        With ``with_errors`` the result is ``(canonical, errors)``, ``errors`` holding the message of
        each bad row and null elsewhere. The C pass runs with the GIL released.
        """
        import pyarrow as pa

        from ccrawl.errors import CcrawlError

        array = as_string_array(urls)
        if array is None:
            return _helpers().canonical_array_py(urls, with_errors)
        cdef _Rows rows = _Rows(array)
        cdef Py_ssize_t n = rows.n, i, m, ln
        cdef const uint8_t* p
        cdef _Out o
        cdef _Buf sc
        cdef bint failed = False
        sc.a = sc.b = sc.name = NULL
        sc.cap = 0
        _out_init(&o, n, 0)
        try:
            with nogil:
                for i in range(n):
                    if not rows.get(i, &p, &ln):
                        o.status[i] = ROW_NULL
                        o.offsets[i + 1] = o.size
                        continue
                    if not _reserve(&sc, ln) or _out_reserve(&o, 3 * ln + 64) == NULL:
                        failed = True
                        break
                    m = self._canon_c(p, ln, <uint8_t*> (o.data + o.size), &sc)
                    if m < 0:
                        o.status[i] = ROW_SLOW
                    else:
                        o.status[i] = ROW_OK
                        o.size += m
                    o.offsets[i + 1] = o.size
            if failed:
                raise MemoryError()
            slow = {}
            errors = {}
            twin = _helpers().canonicalize_py
            for i in range(n):
                if o.status[i] == ROW_SLOW:
                    try:
                        slow[i] = twin(rows.row_bytes(i).decode("utf-8")).encode("utf-8")
                    except UnicodeDecodeError:
                        errors[i] = "URL is not valid UTF-8 text"
                    except CcrawlError as exc:
                        errors[i] = str(exc)
            result = _out_finish(&o, n, slow)
        finally:
            _out_free(&o)
            _release(&sc)
        if not with_errors:
            return result
        if not errors:
            return result, pa.nulls(n, pa.string())
        return result, string_array(n, errors)


cdef Py_ssize_t _remove_dot_segments(const uint8_t* p, Py_ssize_t n, uint8_t* o, uint8_t* tmp) noexcept nogil:
    """RFC 3986 section 5.2.4 on an absolute path (starting with "/"), as ``remove_dot_segments``."""
    cdef Py_ssize_t i, start = 1, j = 0, seg_len
    cdef bint last
    # ``o`` is used as a stack of segments joined by "/" (each pushed as "/" + segment)
    if n == 0:
        o[0] = 47
        return 1
    i = 1
    while True:
        if i == n or p[i] == 47:
            seg_len = i - start
            last = i == n
            if seg_len == 1 and p[start] == 46:
                if last:
                    o[j] = 47
                    j += 1
            elif seg_len == 2 and p[start] == 46 and p[start + 1] == 46:
                if j > 0:
                    while j > 0 and o[j - 1] != 47:
                        j -= 1
                    j -= 1  # the "/" that opened the popped segment
                if last:
                    o[j] = 47
                    j += 1
            else:
                o[j] = 47
                memcpy(o + j + 1, p + start, seg_len)
                j += 1 + seg_len
            if last:
                break
            start = i + 1
        i += 1
    if j == 0:
        o[0] = 47
        return 1
    return j
