# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled SURT keys: the same steps as ``ccrawl.url.surt.surt_bytes``, done in C on the bytes.

The kernel (``_surt_c``) runs without the GIL and without a Python object per step. It takes the
URLs almost every work list is made of: a host name in ASCII, a numeric port or none, any path and
query. Everything else (an ARC ``filedesc`` line, tab/CR/LF inside, no host, an IPv6, percent-encoded,
non-ASCII or numeric host, ``..`` in a host, a session identifier in the query, an ASP.NET session
segment, a bad port, an empty URL) is answered by the pure-Python twin, which is therefore the one
definition of those rules and of the errors: both paths give the same output for every input.

``surt(url)`` is the per-call API; ``surt_array(urls)`` takes a sequence of str or a pyarrow string
array and returns a pyarrow string array (null for a null or bad row), the C pass with the GIL
released.
"""

from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.stdlib cimport qsort
from libc.string cimport memchr, memcmp, memmove

include "urlarrow.pxi"

cdef object _py = None  # ccrawl.url.surt, imported on first use (it imports this module)

cdef uint8_t _SAFE[256]
cdef uint8_t _SAFE_LOWER[256]  # the byte lowercased when escape_once keeps it, else 0
cdef uint8_t _HEX[256]
cdef const char* _LOWER_HEX = b"0123456789abcdef"


cdef void _init_tables() noexcept:
    cdef int c
    cdef bytes safe = (b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~"
                       b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~")
    for c in range(256):
        _SAFE[c] = 0
        _HEX[c] = 255
    for c in safe:
        _SAFE[c] = 1
    for c in range(256):
        _SAFE_LOWER[c] = (c + 32 if 65 <= c <= 90 else c) if _SAFE[c] else 0
    for c in range(10):
        _HEX[48 + c] = c
    for c in range(6):
        _HEX[65 + c] = 10 + c
        _HEX[97 + c] = 10 + c


_init_tables()


cdef object _helpers():
    global _py
    if _py is None:
        from ccrawl.url import surt as module
        _py = module
    return _py


# ---------------------------------------------------------------------------------------------
# scratch memory: three byte buffers and two span arrays, grown to the longest URL seen

cdef struct _Span:
    Py_ssize_t start
    Py_ssize_t len
    Py_ssize_t eq  # query fields: length of the name (the index of "="), -1 when there is none
    const uint8_t* base


cdef struct _Scratch:
    uint8_t* a
    uint8_t* b
    uint8_t* c
    _Span* spans
    Py_ssize_t cap


cdef bint _reserve(_Scratch* s, Py_ssize_t n) noexcept nogil:
    """Room for a URL of ``n`` bytes (escaping can triple it); False when memory ran out."""
    cdef Py_ssize_t want = 3 * n + 64
    if want <= s.cap:
        return True
    free(s.a)
    free(s.b)
    free(s.c)
    free(s.spans)
    s.a = <uint8_t*> malloc(want)
    s.b = <uint8_t*> malloc(want)
    s.c = <uint8_t*> malloc(want)
    s.spans = <_Span*> malloc(sizeof(_Span) * want)
    if s.a == NULL or s.b == NULL or s.c == NULL or s.spans == NULL:
        s.cap = 0
        return False
    s.cap = want
    return True


cdef void _release(_Scratch* s) noexcept nogil:
    free(s.a)
    free(s.b)
    free(s.c)
    free(s.spans)
    s.a = s.b = s.c = NULL
    s.spans = NULL
    s.cap = 0


cdef _Scratch _shared  # the per-call API's scratch (the GIL serialises its users)
_shared.a = _shared.b = _shared.c = NULL
_shared.spans = NULL
_shared.cap = 0
cdef uint8_t* _call_out = NULL  # the per-call API's output buffer
cdef Py_ssize_t _call_cap = 0


# ---------------------------------------------------------------------------------------------
# byte steps

cdef inline bint _has_escape(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef const uint8_t* pct = <const uint8_t*> memchr(s, 37, n) if n > 0 else NULL
    if pct == NULL:
        return False
    for i in range(pct - s, n - 2):
        if s[i] == 37 and _HEX[s[i + 1]] != 255 and _HEX[s[i + 2]] != 255:
            return True
    return False


cdef Py_ssize_t _unescape_repeatedly(uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Percent-decode ``s`` in place until nothing changes; the new length.

    One pass (round after round would be quadratic on ``%2525...2541``): escapes cannot overlap, so
    every decoding order ends at the same string, and this one keeps ``s[:j]`` free of escapes, so
    a byte appended can only complete an escape that ends at it.
    """
    cdef Py_ssize_t i, j = 0
    if not _has_escape(s, n):
        return n
    for i in range(n):
        s[j] = s[i]
        j += 1
        while j >= 3 and s[j - 3] == 37 and _HEX[s[j - 2]] != 255 and _HEX[s[j - 1]] != 255:
            s[j - 3] = _HEX[s[j - 2]] * 16 + _HEX[s[j - 1]]
            j -= 2
    return j


cdef inline Py_ssize_t _escape_lower(const uint8_t* s, Py_ssize_t n, uint8_t* o) noexcept nogil:
    """``escape_once(s).lower()`` into ``o`` (room for 3n); the length written."""
    cdef Py_ssize_t i, j = 0
    cdef uint8_t c, m
    for i in range(n):
        c = s[i]
        m = _SAFE_LOWER[c]
        if m:
            o[j] = m
            j += 1
        else:
            o[j] = 37
            o[j + 1] = _LOWER_HEX[c >> 4]
            o[j + 2] = _LOWER_HEX[c & 15]
            j += 3
    return j


cdef Py_ssize_t _normalize_path(const uint8_t* p, Py_ssize_t n, uint8_t* o, _Span* seg) noexcept nogil:
    """``normalize_path`` of ``ccrawl.url.surt`` on a path that starts with "/" (or is empty)."""
    cdef Py_ssize_t i, start, kept = 0, j = 0, k
    if n == 0:
        o[0] = 47
        return 1
    # segments after the first "/" (what path.split(b"/")[1:] gives)
    start = 1
    i = 1
    while True:
        if i == n or p[i] == 47:
            if i - start == 1 and p[start] == 46:
                pass  # "."
            elif i - start == 2 and p[start] == 46 and p[start + 1] == 46:
                if kept:
                    kept -= 1
                else:
                    seg[0].start = start
                    seg[0].len = 2
                    kept = 1
            else:
                seg[kept].start = start
                seg[kept].len = i - start
                kept += 1
            if i == n:
                break
            start = i + 1
        i += 1
    o[0] = 47
    j = 1
    if kept == 0:
        return 1
    for k in range(kept - 1):
        if seg[k].len:
            memcpy(o + j, p + seg[k].start, seg[k].len)
            j += seg[k].len
            o[j] = 47
            j += 1
    memcpy(o + j, p + seg[kept - 1].start, seg[kept - 1].len)
    return j + seg[kept - 1].len


cdef int _field_cmp(const void* x, const void* y) noexcept nogil:
    """Order of ``tuple(field.split(b"=", 1))``: name, then no "=" before "=", then value."""
    cdef const _Span* a = <const _Span*> x
    cdef const _Span* b = <const _Span*> y
    cdef Py_ssize_t an = a.eq if a.eq >= 0 else a.len
    cdef Py_ssize_t bn = b.eq if b.eq >= 0 else b.len
    cdef int r = memcmp(a.base + a.start, b.base + b.start, an if an < bn else bn)
    if r:
        return r
    if an != bn:
        return -1 if an < bn else 1
    if a.eq < 0 or b.eq < 0:
        return (a.eq >= 0) - (b.eq >= 0)
    an = a.len - a.eq - 1
    bn = b.len - b.eq - 1
    r = memcmp(a.base + a.start + a.eq + 1, b.base + b.start + b.eq + 1, an if an < bn else bn)
    if r:
        return r
    return (an > bn) - (an < bn)


cdef Py_ssize_t _sort_query(const uint8_t* q, Py_ssize_t n, uint8_t* o, _Span* f) noexcept nogil:
    """``_sort_query`` of ``ccrawl.url.surt``: the "&"-separated fields in order; the length."""
    cdef Py_ssize_t i, start = 0, count = 0, j = 0, k
    if n <= 1:
        memcpy(o, q, n)
        return n
    for i in range(n + 1):
        if i == n or q[i] == 38:
            f[count].start = start
            f[count].len = i - start
            f[count].eq = -1
            f[count].base = q
            for k in range(start, i):
                if q[k] == 61:
                    f[count].eq = k - start
                    break
            count += 1
            start = i + 1
    cdef _Span tmp
    if count > 16:
        qsort(f, count, sizeof(_Span), _field_cmp)
    elif count > 1:
        for i in range(1, count):  # insertion sort: a query has a handful of fields
            tmp = f[i]
            k = i
            while k > 0 and _field_cmp(&f[k - 1], &tmp) > 0:
                f[k] = f[k - 1]
                k -= 1
            f[k] = tmp
    for k in range(count):
        if k:
            o[j] = 38
            j += 1
        memcpy(o + j, q + f[k].start, f[k].len)
        j += f[k].len
    return j


cdef inline bint _has_session_key(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """``sid=``, ``sessionid`` or ``cfid=`` anywhere in ``s``: one pass (three memmem calls cost
    three scans and their set-up, 5% of ``url surt --from``'s CPU)."""
    cdef Py_ssize_t i
    for i in range(n):
        if s[i] == 115:  # s
            if i + 4 <= n and memcmp(s + i, b"sid=", 4) == 0:
                return True
            if i + 9 <= n and memcmp(s + i, b"sessionid", 9) == 0:
                return True
        elif s[i] == 99:  # c
            if i + 5 <= n and memcmp(s + i, b"cfid=", 5) == 0:
                return True
    return False


cdef inline bint _has_dot_or_empty_segment(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """A ``/`` followed by ``.`` or ``/``: the path may have segments to resolve."""
    cdef const uint8_t* hit = <const uint8_t*> memchr(s, 47, n) if n > 0 else NULL
    cdef Py_ssize_t i
    while hit != NULL:
        i = hit - s + 1
        if i >= n:
            return False
        if s[i] == 46 or s[i] == 47:
            return True
        hit = <const uint8_t*> memchr(s + i, 47, n - i)
    return False


cdef inline bint _ci_prefix(const uint8_t* s, Py_ssize_t n, const char* lower, Py_ssize_t m) noexcept nogil:
    """``s`` starts with ``lower`` (lowercase ASCII), ignoring ASCII case."""
    cdef Py_ssize_t i
    if n < m:
        return False
    for i in range(m):
        if (s[i] | 32 if 65 <= s[i] <= 90 else s[i]) != <uint8_t> lower[i]:
            return False
    return True


cdef inline bint _alnum(uint8_t c) noexcept nogil:
    return 48 <= c <= 57 or 65 <= (c & 0xDF) <= 90


cdef inline bint _alpha(uint8_t c) noexcept nogil:
    return 65 <= (c & 0xDF) <= 90


cdef Py_ssize_t _session_match(const uint8_t* s, Py_ssize_t n, int which) noexcept nogil:
    """Length of session pattern ``which`` (0-3) matched at the start of ``s`` (0 when it does not match)."""
    cdef Py_ssize_t i, m
    if which <= 2:
        if which == 0:
            m = 11
            if not _ci_prefix(s, n, b"jsessionid=", 11):
                return 0
        elif which == 1:
            m = 10
            if not _ci_prefix(s, n, b"phpsessid=", 10):
                return 0
        else:
            m = 4
            if not _ci_prefix(s, n, b"sid=", 4):
                return 0
        if n < m + 32:
            return 0
        for i in range(m, m + 32):
            if not _alnum(s[i]):
                return 0
        return m + 32
    if which == 3:
        if n < 12 + 8 + 1 + 24 or not _ci_prefix(s, n, b"aspsessionid", 12):
            return 0
        for i in range(12, 20):
            if not _alpha(s[i]):
                return 0
        if s[20] != 61:
            return 0
        for i in range(21, 45):
            if not _alpha(s[i]):
                return 0
        return 45
    return 0  # cfid (4): _cfid_match


cdef Py_ssize_t _cfid_match(const uint8_t* q, Py_ssize_t p, Py_ssize_t n, Py_ssize_t amp,
                            Py_ssize_t amp2) noexcept nogil:
    """Length of ``cfid=[^&]+&cftoken=[^&]+`` at ``p`` given the first "&" at or after ``p`` (``amp``)
    and the one after it (``amp2``; ``n`` for none): O(1), where scanning for them is O(n) a try."""
    if not _ci_prefix(q + p, n - p, b"cfid=", 5):
        return 0
    if amp == p + 5 or not _ci_prefix(q + amp, n - amp, b"&cftoken=", 9):
        return 0
    if amp2 == amp + 9:
        return 0
    return amp2 - p


cdef Py_ssize_t _strip_sessions(uint8_t* q, Py_ssize_t n) noexcept nogil:
    """``strip_query_session_ids`` in place: each pattern in turn, at its last match; the new length."""
    cdef int which
    cdef Py_ssize_t p, m, e, amp, amp2
    for which in range(5):
        p = n - 1
        amp = amp2 = n
        while p >= 0:
            if which == 4:
                if q[p] == 38:
                    amp2 = amp
                    amp = p
                m = _cfid_match(q, p, n, amp, amp2)
            else:
                m = _session_match(q + p, n - p, which)
            if m:
                e = p + m
                if e == n:
                    n = p
                    break
                if q[e] == 38:
                    memmove(q + p, q + e + 1, n - e - 1)
                    n -= e + 1 - p
                    break
            p -= 1
    return n


cdef inline bint _is_ws(uint8_t c) noexcept nogil:
    return c == 32 or 9 <= c <= 13  # bytes.strip(): space, \t \n \v \f \r


cdef Py_ssize_t _surt_c(const uint8_t* url, Py_ssize_t n, uint8_t* out, _Scratch* sc) noexcept nogil:
    """SURT of ``url`` into ``out`` (room for 3n + 64); its length, or -1: the twin must answer."""
    cdef Py_ssize_t a = 0, b = n, i, k, colon, pos, last
    cdef Py_ssize_t rest, end, q = -1, qn = 0, slash, net_end, hs, he, ps, pe, port = -1, at
    cdef Py_ssize_t plen, elen, j, lab_end
    cdef bint http_scheme, https_scheme, prefixed = False, numeric
    cdef uint8_t c
    cdef const uint8_t* r
    cdef const uint8_t* hit
    if n >= 8 and memcmp(url, b"filedesc", 8) == 0:
        return -1
    while a < b and _is_ws(url[a]):
        a += 1
    while b > a and _is_ws(url[b - 1]):
        b -= 1
    if a == b:
        return -1
    if memchr(url + a, 9, b - a) != NULL or memchr(url + a, 10, b - a) != NULL or memchr(url + a, 13, b - a) != NULL:
        return -1
    r = url + a
    n = b - a
    # scheme: [a-zA-Z][a-zA-Z0-9+.-]*:
    colon = -1
    c = r[0]
    if 65 <= (c & 0xDF) <= 90:
        for i in range(1, n):
            c = r[i]
            if c == 58:
                colon = i
                break
            if not (65 <= (c & 0xDF) <= 90 or 48 <= c <= 57 or c == 43 or c == 45 or c == 46):
                break
    if colon < 0:
        prefixed = True  # "http://" + raw: the netloc starts at r[0]
        http_scheme = True
        https_scheme = False
        rest = 0
    else:
        # collapse repeated http(s):// prefixes
        pos = 0
        last = -1
        while True:
            if n - pos >= 7 and memcmp(r + pos, b"http://", 7) == 0:
                last = pos
                pos += 7
            elif n - pos >= 8 and memcmp(r + pos, b"https://", 8) == 0:
                last = pos
                pos += 8
            else:
                break
        if last > 0:
            r += last
            n -= last
            colon = 4 if r[4] == 58 else 5
        http_scheme = colon == 4 and (r[0] | 32) == 104 and (r[1] | 32) == 116 and (r[2] | 32) == 116 and (r[3] | 32) == 112
        https_scheme = (colon == 5 and (r[0] | 32) == 104 and (r[1] | 32) == 116 and (r[2] | 32) == 116
                        and (r[3] | 32) == 112 and (r[4] | 32) == 115)
        rest = colon + 1
        if not (n - rest >= 2 and r[rest] == 47 and r[rest + 1] == 47):
            return -1  # no netloc: no host (mailto:, dns:, http:/x)
        rest += 2
    # fragment, query
    end = n
    hit = <const uint8_t*> memchr(r + rest, 35, n - rest) if n > rest else NULL
    if hit != NULL:
        end = hit - r
    hit = <const uint8_t*> memchr(r + rest, 63, end - rest) if end > rest else NULL
    if hit != NULL:
        q = hit - r + 1
        qn = end - q
        end = hit - r
    slash = end
    hit = <const uint8_t*> memchr(r + rest, 47, end - rest) if end > rest else NULL
    if hit != NULL:
        slash = hit - r
    # netloc r[rest:slash]: rstrip ":", userinfo, port
    net_end = slash
    while net_end > rest and r[net_end - 1] == 58:
        net_end -= 1
    hs = rest
    for i in range(net_end - 1, rest - 1, -1):
        if r[i] == 64:
            hs = i + 1
            break
    he = net_end
    for i in range(hs, net_end):
        c = r[i]
        if c == 58:
            he = i
            break
        if c == 91 or c == 37 or c >= 128 or c <= 32 or c == 127:
            return -1  # IPv6 literal, percent-encoded, non-ASCII or control in the host
    if he < net_end:
        port = 0
        k = he + 1
        while k < net_end and r[k] == 48:
            k += 1
        if net_end - k > 5:
            return -1
        for i in range(he + 1, net_end):
            c = r[i]
            if not 48 <= c <= 57:
                return -1  # bad port: the twin raises
        for i in range(k, net_end):
            port = port * 10 + (r[i] - 48)
        if port > 65535:
            return -1
        if port == 0 or (port == 80 and http_scheme) or (port == 443 and https_scheme):
            port = -1
    # canonical host: lowercase, no "..", outer dots stripped, not numeric
    while hs < he and r[hs] == 46:
        hs += 1
    while he > hs and r[he - 1] == 46:
        he -= 1
    if hs == he:
        return -1
    numeric = True
    for i in range(hs, he):
        c = r[i]
        if c == 46 and i + 1 < he and r[i + 1] == 46:
            return -1
        if not (48 <= c <= 57 or c == 46):
            numeric = False
    if numeric:
        return -1
    # leading www\d*\. is removed
    if he - hs >= 4 and (r[hs] | 32) == 119 and (r[hs + 1] | 32) == 119 and (r[hs + 2] | 32) == 119:
        k = hs + 3
        while k < he and 48 <= r[k] <= 57:
            k += 1
        if k < he and r[k] == 46:
            hs = k + 1
    # path: unescape, normalise, escape, lowercase
    ps = slash
    pe = end
    plen = pe - ps
    memcpy(sc.a, r + ps, plen)
    plen = _unescape_repeatedly(sc.a, plen)
    if plen > 0 and not _has_dot_or_empty_segment(sc.a, plen):
        elen = _escape_lower(sc.a, plen, sc.c)  # no empty or dot segment: nothing to resolve
    else:
        plen = _normalize_path(sc.a, plen, sc.b, sc.spans)
        elen = _escape_lower(sc.b, plen, sc.c)
    if elen and memchr(sc.c, 40, elen) != NULL:
        return -1  # "(": maybe an ASP.NET session segment
    if elen > 1 and sc.c[elen - 1] == 47:
        elen -= 1
    # output: reversed host labels
    j = 0
    lab_end = he
    for i in range(he - 1, hs - 2, -1):
        if i < hs or r[i] == 46:
            for k in range(i + 1, lab_end):
                c = r[k]
                out[j] = c + 32 if 65 <= c <= 90 else c
                j += 1
            if i >= hs:
                out[j] = 44
                j += 1
            lab_end = i
    if port >= 0:
        out[j] = 58
        j += 1
        if port >= 10000:
            out[j] = 48 + port // 10000
            j += 1
        if port >= 1000:
            out[j] = 48 + port // 1000 % 10
            j += 1
        if port >= 100:
            out[j] = 48 + port // 100 % 10
            j += 1
        if port >= 10:
            out[j] = 48 + port // 10 % 10
            j += 1
        out[j] = 48 + port % 10
        j += 1
    out[j] = 41
    j += 1
    memcpy(out + j, sc.c, elen)
    j += elen
    if qn > 0:
        memcpy(sc.a, r + q, qn)
        qn = _unescape_repeatedly(sc.a, qn)
        qn = _escape_lower(sc.a, qn, sc.b)
        if _has_session_key(sc.b, qn):
            qn = _strip_sessions(sc.b, qn)
        if qn > 0:
            out[j] = 63
            j += 1
            j += _sort_query(sc.b, qn, out + j, sc.spans)
    return j


# ---------------------------------------------------------------------------------------------
# Python API

def surt_bytes(bytes url):
    """SURT of a URL given as UTF-8 bytes (compiled twin of ``ccrawl.url.surt.surt_bytes``)."""
    cdef Py_ssize_t n = len(url), m
    if not _reserve(&_shared, n):
        raise MemoryError()
    cdef uint8_t* out = _out_scratch(n)
    m = _surt_c(<const uint8_t*> (<char*> url), n, out, &_shared)
    if m < 0:
        return _helpers().surt_bytes(url)
    return (<char*> out)[:m]


def surt(str url):
    """SURT key of ``url``; raises InputError for an empty URL or a bad port."""
    cdef Py_ssize_t n, m
    cdef const char* p
    try:
        p = PyUnicode_AsUTF8AndSize(url, &n)
    except UnicodeEncodeError:
        return _helpers().surt_py(url)
    if not _reserve(&_shared, n):
        raise MemoryError()
    cdef uint8_t* out = _out_scratch(n)
    m = _surt_c(<const uint8_t*> p, n, out, &_shared)
    if m < 0:
        return _helpers().surt_py(url)
    return PyUnicode_DecodeASCII(<const char*> out, m, NULL)


cdef uint8_t* _out_scratch(Py_ssize_t n) except NULL:
    global _call_out, _call_cap
    cdef Py_ssize_t want = 3 * n + 64
    if want > _call_cap:
        free(_call_out)
        _call_out = <uint8_t*> malloc(want)
        if _call_out == NULL:
            _call_cap = 0
            raise MemoryError()
        _call_cap = want
    return _call_out


def surt_array(urls, bint with_errors=False):
    """SURT of every row: a pyarrow string array (null for a null or bad row), in input order.

    ``urls`` is a sequence of str or a pyarrow string array. The C pass runs with the GIL released;
    rows it does not take are answered by the pure-Python twin. With ``with_errors`` the result is
    ``(surts, errors)``, ``errors`` holding the message of each bad row and null elsewhere.
    """
    import pyarrow as pa

    from ccrawl.errors import CcrawlError

    array = as_string_array(urls)
    if array is None:
        return _helpers().surt_array_py(urls, with_errors)
    cdef _Rows rows = _Rows(array)
    cdef Py_ssize_t n = rows.n, i, m, ln
    cdef const uint8_t* p
    cdef _Out o
    cdef _Scratch sc
    cdef bint failed = False
    sc.a = sc.b = sc.c = NULL
    sc.spans = NULL
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
                m = _surt_c(p, ln, <uint8_t*> (o.data + o.size), &sc)
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
        twin = _helpers().surt_bytes
        for i in range(n):
            if o.status[i] == ROW_SLOW:
                raw = rows.row_bytes(i)
                try:
                    if not raw:
                        raise _helpers().InputError("empty URL: give an absolute URL such as https://example.com/")
                    raw.decode("utf-8")
                    slow[i] = twin(raw)
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
    return result, string_array(n, errors) if errors else pa.nulls(n, pa.string())
