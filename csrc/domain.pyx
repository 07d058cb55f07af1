# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled public-suffix lookup and FNV-1a 64 shard hash: twins of ``ccrawl.url.domain``.

The rule tables are built by ``ccrawl.url.domain.parse_psl`` and handed to :class:`SuffixTable`,
which copies them into an open-addressing hash table in C. The kernel (host extraction, lowercasing,
the longest-rule walk, the shard hash) runs on the UTF-8 bytes without the GIL and without a Python
object per step. A host with a non-ASCII byte, an IPv6 literal, or input with non-ASCII text at its
ends (where Unicode whitespace could hide) is answered by the pure-Python twin, which holds the IDNA
rules: IDNA runs only for the hosts that need it.

Per call: ``registered_domain``, ``shard_key``, ``shard_of``. Batch (a sequence of str or a pyarrow
string array in, pyarrow arrays out, the C pass with the GIL released): ``registered_domain_array``,
``shard_key_array``, ``shard_array`` and ``domain_columns``.
"""

from libc.stdint cimport uint32_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.string cimport memcmp

include "urlarrow.pxi"

cdef uint64_t FNV64_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV64_PRIME = 0x100000001B3ULL
# DNS limits, as ccrawl.url.domain.MAX_HOST_LEN and MAX_LABEL_LEN: a longer host has no registered domain
cdef Py_ssize_t MAX_HOST_LEN = 253
cdef Py_ssize_t MAX_LABEL_LEN = 63

cdef object _py = None  # ccrawl.url.domain, imported on first use (it imports this module)

# flags of a rule string: which kinds of rule it is, and whether each is in the private section
cdef enum:
    EXACT = 1
    EXACT_PRIVATE = 2
    WILD = 4
    WILD_PRIVATE = 8
    EXC = 16
    EXC_PRIVATE = 32


cdef object _helpers():
    global _py
    if _py is None:
        from ccrawl.url import domain as module
        _py = module
    return _py


cdef inline uint64_t _fnv1a64(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = FNV64_OFFSET
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ s[i]) * FNV64_PRIME
    return h


def fnv1a64(bytes data):
    """FNV-1a 64-bit hash of ``data``."""
    return _fnv1a64(<const unsigned char*> PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef inline bint _is_space(uint8_t c) noexcept nogil:
    # str.strip() on ASCII: space, \t \n \v \f \r and the separators \x1c-\x1f
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef int _host_c(const uint8_t* s, Py_ssize_t n, uint8_t* out, Py_ssize_t* hlen) noexcept nogil:
    """``host_of`` into ``out`` (room for n): 1 with the host (``*hlen`` 0 for none), -1: ask the twin."""
    cdef Py_ssize_t a = 0, b = n, i, at = -1, cut, hs, he
    cdef uint8_t c
    while a < b and _is_space(s[a]):
        a += 1
    while b > a and _is_space(s[b - 1]):
        b -= 1
    if a < b and (s[a] >= 128 or s[b - 1] >= 128):
        return -1  # non-ASCII at an end: Unicode whitespace is the twin's to strip
    for i in range(a, b - 2):
        if s[i] == 58 and s[i + 1] == 47 and s[i + 2] == 47:
            at = i
            break
    if at >= 0:
        a = at + 3
    elif b - a >= 2 and s[a] == 47 and s[a + 1] == 47:
        a += 2
    cut = b
    for i in range(a, b):
        c = s[i]
        if c == 47 or c == 63 or c == 35:
            cut = i
            break
    hs = a
    for i in range(cut - 1, a - 1, -1):
        if s[i] == 64:
            hs = i + 1
            break
    if hs < cut and s[hs] == 91:
        return -1  # [ipv6]
    he = cut
    for i in range(hs, cut):
        c = s[i]
        if c == 58:
            he = i
            break
        if c >= 128:
            return -1  # an IDN: IDNA is the twin's
    for i in range(hs, he):
        c = s[i]
        out[i - hs] = c + 32 if 65 <= c <= 90 else c
    hlen[0] = he - hs
    if hlen[0] and out[hlen[0] - 1] == 46:
        hlen[0] -= 1
    return 1


cdef struct _Rule:
    uint64_t hash
    Py_ssize_t off
    Py_ssize_t len
    int flags


cdef class SuffixTable:
    """The Public Suffix List rules (exact, wildcard base, exception; ASCII rule -> is_private) in C."""

    cdef _Rule* slots
    cdef uint64_t mask
    cdef bytes blob
    cdef const char* blob_ptr
    cdef int max_labels  # the most labels a rule can match: the walk starts no further left

    def __cinit__(self):
        self.slots = NULL

    def __dealloc__(self):
        free(self.slots)

    def __init__(self, dict exact, dict wildcard, dict exception):
        cdef dict flags = {}
        cdef int kind, private_bit
        self.max_labels = 1
        for table, kind, private_bit in ((exact, EXACT, EXACT_PRIVATE), (wildcard, WILD, WILD_PRIVATE),
                                         (exception, EXC, EXC_PRIVATE)):
            for rule, private in table.items():
                flags[rule] = flags.get(rule, 0) | kind | (private_bit if private else 0)
                # a wildcard base of k labels matches a name of k + 1
                self.max_labels = max(self.max_labels, rule.count(".") + (2 if kind == WILD else 1))
        cdef uint64_t size = 16
        while size < 2 * len(flags) + 16:
            size *= 2
        free(self.slots)
        self.slots = <_Rule*> malloc(sizeof(_Rule) * size)
        if self.slots == NULL:
            raise MemoryError()
        self.mask = size - 1
        cdef uint64_t k
        for k in range(size):
            self.slots[k].len = -1
        parts = []
        cdef Py_ssize_t off = 0
        cdef bytes key
        cdef uint64_t h
        for rule, value in flags.items():
            key = rule.encode("utf-8")
            parts.append(key)
            h = _fnv1a64(<const unsigned char*> PyBytes_AS_STRING(key), len(key))
            k = h & self.mask
            while self.slots[k].len >= 0:
                k = (k + 1) & self.mask
            self.slots[k].hash = h
            self.slots[k].off = off
            self.slots[k].len = len(key)
            self.slots[k].flags = value
            off += len(key)
        self.blob = b"".join(parts)
        self.blob_ptr = <const char*> self.blob

    cdef int _flags(self, const uint8_t* s, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = _fnv1a64(s, n)
        cdef uint64_t k = h & self.mask
        cdef const char* blob = self.blob_ptr
        while self.slots[k].len >= 0:
            if self.slots[k].hash == h and self.slots[k].len == n and memcmp(blob + self.slots[k].off, s, n) == 0:
                return self.slots[k].flags
            k = (k + 1) & self.mask
        return 0

    cdef int _suffix_labels_c(self, const uint8_t* s, Py_ssize_t n, bint include_private) noexcept nogil:
        """Only the rightmost ``max_labels`` labels can match a rule: the walk starts there, so the
        cost is linear in ``n`` however many labels the name has."""
        cdef Py_ssize_t start = 0, dot, i
        cdef int dots = 0, labels, f
        for i in range(n - 1, -1, -1):
            if s[i] == 46:
                if dots + 1 == self.max_labels:
                    start = i + 1  # s[start:] holds max_labels labels
                    break
                dots += 1
        labels = dots + 1
        while True:
            dot = -1
            for i in range(start, n):
                if s[i] == 46:
                    dot = i
                    break
            f = self._flags(s + start, n - start)
            if f & EXC and (include_private or not f & EXC_PRIVATE):
                return labels - 1
            if f & EXACT and (include_private or not f & EXACT_PRIVATE):
                return labels
            if dot < 0:
                return 1
            f = self._flags(s + dot + 1, n - dot - 1)
            if f & WILD and (include_private or not f & WILD_PRIVATE):
                return labels
            start = dot + 1
            labels -= 1

    cdef Py_ssize_t _registered_c(self, const uint8_t* h, Py_ssize_t n, bint include_private) noexcept nogil:
        """Start of the registered domain in the lowercased ASCII host ``h``, or -1 when it has none
        (as for a host over ``MAX_HOST_LEN`` bytes or with a label over ``MAX_LABEL_LEN``)."""
        cdef Py_ssize_t i, last = 0
        cdef int keep, seen = 0
        if n == 0 or n > MAX_HOST_LEN or h[0] == 46 or h[n - 1] == 46:
            return -1
        for i in range(n):
            if h[i] == 46:
                if i + 1 < n and h[i + 1] == 46:
                    return -1
                if i - last > MAX_LABEL_LEN:
                    return -1
                last = i + 1
        if n - last > MAX_LABEL_LEN:
            return -1
        if last < n:
            for i in range(last, n):
                if not 48 <= h[i] <= 57:
                    break
            else:
                return -1  # numeric last label: an IP address
        keep = self._suffix_labels_c(h, n, include_private) + 1
        for i in range(n - 1, -1, -1):
            if h[i] == 46:
                seen += 1
                if seen == keep:
                    return i + 1
        return 0 if seen == keep - 1 else -1

    def suffix_labels(self, str ascii_name, bint include_private=True):
        """How many trailing labels of ``ascii_name`` form its public suffix (at least 1)."""
        cdef bytes data = ascii_name.encode("utf-8")
        return self._suffix_labels_c(<const uint8_t*> PyBytes_AS_STRING(data), len(data), include_private)

    def registered_domain(self, host, bint include_private=True):
        """Registered domain (eTLD+1) of a host, ``host:port`` or URL; None when it has none."""
        if not host:
            return None
        cdef Py_ssize_t n, hl, start
        cdef const char* p
        try:
            p = PyUnicode_AsUTF8AndSize(host, &n)
        except (UnicodeEncodeError, TypeError):
            return _helpers().registered_domain_py(host, include_private)
        cdef uint8_t* buf = _scratch(n)
        if _host_c(<const uint8_t*> p, n, buf, &hl) < 0:
            return _helpers().registered_domain_py(host, include_private)
        start = self._registered_c(buf, hl, include_private)
        if start < 0:
            return None
        return PyUnicode_DecodeASCII(<const char*> buf + start, hl - start, NULL)

    cpdef str shard_key(self, str url_or_host):
        """The registered domain in ASCII, else the lowercased ASCII host, else ``""`` (no host)."""
        cdef Py_ssize_t n, hl, start
        cdef const char* p
        try:
            p = PyUnicode_AsUTF8AndSize(url_or_host, &n)
        except UnicodeEncodeError:
            return _helpers().shard_key_py(url_or_host)
        cdef uint8_t* buf = _scratch(n)
        if _host_c(<const uint8_t*> p, n, buf, &hl) < 0:
            return _helpers().shard_key_py(url_or_host)
        start = self._registered_c(buf, hl, True)
        if start < 0:
            start = 0
        return PyUnicode_DecodeASCII(<const char*> buf + start, hl - start, NULL)

    def shard_of(self, str url_or_host, long long n):
        """Shard ``0..n-1``: FNV-1a 64 of the shard key modulo ``n``; input with no host is shard 0."""
        if n < 1:
            from ccrawl.errors import UsageError
            raise UsageError(f"--shards must be at least 1 (got {n})")
        cdef str key = self.shard_key(url_or_host)
        if not key:
            return 0
        cdef bytes data = key.encode("utf-8")
        return <long long> (_fnv1a64(<const unsigned char*> PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
                            % <uint64_t> n)

    def domain_columns(self, urls, bint include_private=True):
        """``(host, registered_domain, shard_key)`` string arrays for every row, in input order.

        ``host`` is null for input with no host (and for a null row), ``registered_domain`` null when
        there is none; ``shard_key`` is ``""`` for no host, null only for a null row.
        """
        array = as_string_array(urls)
        if array is None:
            return _helpers().domain_columns_py(urls, include_private)
        cdef _Rows rows = _Rows(array)
        cdef Py_ssize_t n = rows.n, i, ln, hl, start
        cdef const uint8_t* p
        cdef _Out oh, od, ok
        cdef uint8_t* buf
        cdef bint failed = False
        _out_init(&oh, n, 0)
        _out_init(&od, n, 0)
        _out_init(&ok, n, 0)
        try:
            with nogil:
                for i in range(n):
                    if not rows.get(i, &p, &ln):
                        oh.status[i] = od.status[i] = ok.status[i] = ROW_NULL
                    else:
                        buf = <uint8_t*> _out_reserve(&oh, ln)
                        if buf == NULL or _out_reserve(&od, ln) == NULL or _out_reserve(&ok, ln) == NULL:
                            failed = True
                            break
                        if _host_c(p, ln, buf, &hl) < 0:
                            oh.status[i] = od.status[i] = ok.status[i] = ROW_SLOW
                        else:
                            oh.status[i] = od.status[i] = ok.status[i] = ROW_OK
                            start = self._registered_c(buf, hl, include_private)
                            if start >= 0:
                                memcpy(od.data + od.size, buf + start, hl - start)
                                od.size += hl - start
                            else:
                                od.status[i] = ROW_NULL
                            start = start if include_private else self._registered_c(buf, hl, True)
                            if start < 0:
                                start = 0
                            memcpy(ok.data + ok.size, buf + start, hl - start)
                            ok.size += hl - start
                            if hl:
                                oh.size += hl
                            else:
                                oh.status[i] = ROW_NULL
                    oh.offsets[i + 1] = oh.size
                    od.offsets[i + 1] = od.size
                    ok.offsets[i + 1] = ok.size
            if failed:
                raise MemoryError()
            slow_h, slow_d, slow_k = {}, {}, {}
            helpers = _helpers()
            for i in range(n):
                if oh.status[i] == ROW_SLOW:
                    text = rows.row_bytes(i).decode("utf-8", "surrogateescape")
                    host = helpers.host_of(text)
                    slow_h[i] = host.encode("utf-8", "surrogateescape") if host else None
                    found = helpers.registered_domain_py(text, include_private)
                    slow_d[i] = found.encode("utf-8", "surrogateescape") if found else None
                    slow_k[i] = helpers.shard_key_py(text).encode("utf-8", "surrogateescape")
            return (_out_finish(&oh, n, slow_h), _out_finish(&od, n, slow_d), _out_finish(&ok, n, slow_k))
        finally:
            _out_free(&oh)
            _out_free(&od)
            _out_free(&ok)

    def registered_domain_array(self, urls, bint include_private=True):
        """Registered domain of every row (null when it has none), a pyarrow string array."""
        return self.domain_columns(urls, include_private)[1]

    def shard_key_array(self, urls):
        """Shard key of every row (``""`` for no host, null for a null row), a pyarrow string array."""
        return self.domain_columns(urls, True)[2]

    def shard_array(self, urls, long long shards):
        """Shard ``0..shards-1`` of every row (no host: 0; null row: null), a pyarrow uint32 array."""
        import pyarrow as pa

        if shards < 1:
            from ccrawl.errors import UsageError
            raise UsageError(f"--shards must be at least 1 (got {shards})")
        keys = self.shard_key_array(urls)
        cdef _Rows rows = _Rows(keys)
        cdef Py_ssize_t n = rows.n, i, ln
        cdef const uint8_t* p
        cdef bytearray out = bytearray(4 * n)
        cdef uint32_t* o = <uint32_t*> (<char*> out)
        cdef uint64_t m = <uint64_t> shards
        with nogil:
            for i in range(n):
                if rows.get(i, &p, &ln) and ln:
                    o[i] = <uint32_t> (_fnv1a64(p, ln) % m)
                else:
                    o[i] = 0
        validity = keys.buffers()[0] if keys.null_count else None  # keys is fresh: offset 0
        return pa.Array.from_buffers(pa.uint32(), n, [validity, pa.py_buffer(out)], null_count=keys.null_count)


cdef uint8_t* _buf = NULL  # the per-call API's host buffer (the GIL serialises its users)
cdef Py_ssize_t _buf_cap = 0


cdef uint8_t* _scratch(Py_ssize_t n) except NULL:
    global _buf, _buf_cap
    if n + 16 > _buf_cap:
        free(_buf)
        _buf = <uint8_t*> malloc(n + 16)
        if _buf == NULL:
            _buf_cap = 0
            raise MemoryError()
        _buf_cap = n + 16
    return _buf


def host_of(str url_or_host):
    """The host of an absolute URL, host, ``host:port`` or ``[ipv6]:port``; None when there is none."""
    cdef Py_ssize_t n, hl
    cdef const char* p
    try:
        p = PyUnicode_AsUTF8AndSize(url_or_host, &n)
    except UnicodeEncodeError:
        return _helpers().host_of(url_or_host)
    cdef uint8_t* buf = _scratch(n)
    if _host_c(<const uint8_t*> p, n, buf, &hl) < 0:
        return _helpers().host_of(url_or_host)
    return PyUnicode_DecodeASCII(<const char*> buf, hl, NULL) if hl else None
