# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Text rows of a record batch written in C: TSV/CSV lines and JSON lines, straight from Arrow buffers.

The twin is ``ccrawl.batchout`` (``delimited_rows_py``, ``jsonl_rows_py``); both produce the bytes the
per-record renderer (``ccrawl.output``) writes for the same values. A column is ``(kind, array)``:
``0`` a pyarrow string array (JSON lines escape it as ``json.dumps(ensure_ascii=False)`` does),
``1`` a pyarrow integer array, ``2`` a string array of JSON text written as it is (values the caller
rendered with ``json.dumps``). A null is a blank cell, and a field left out of a JSON line.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint32_t

include "urlarrow.pxi"

cdef enum:
    KIND_STR = 0
    KIND_INT = 1
    KIND_RAW = 2


cdef class _Col:
    """One column: its rows as (pointer, length) for text, or its integer buffer."""

    cdef int kind
    cdef _Rows rows
    cdef object array
    cdef const uint8_t* ints
    cdef const uint8_t* validity
    cdef int width
    cdef bint signed
    cdef Py_ssize_t offset

    def __init__(self, int kind, array):
        import pyarrow as pa

        self.kind = kind
        if kind == KIND_INT:
            if isinstance(array, pa.ChunkedArray):
                array = array.combine_chunks()
            if not pa.types.is_integer(array.type):
                raise TypeError(f"expected a pyarrow integer array, got {array.type}")
            self.array = array
            bufs = array.buffers()
            self.validity = <const uint8_t*> <size_t> bufs[0].address if bufs[0] is not None and array.null_count else NULL
            self.ints = <const uint8_t*> <size_t> bufs[1].address if bufs[1] is not None else NULL
            self.width = array.type.bit_width // 8
            self.signed = pa.types.is_signed_integer(array.type)
            self.offset = array.offset
        else:
            self.rows = _Rows(array)

    cdef inline bint is_null(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t j
        if self.kind == KIND_INT:
            j = i + self.offset
            return self.validity != NULL and not (self.validity[j >> 3] >> (j & 7)) & 1
        j = i + self.rows.offset
        return self.rows.validity != NULL and not (self.rows.validity[j >> 3] >> (j & 7)) & 1

    cdef inline int64_t text_size(self) noexcept:
        cdef Py_ssize_t n = self.rows.n
        cdef int64_t a, b
        if self.kind == KIND_INT:
            return 0
        if n == 0:
            return 0
        if self.rows.off32 != NULL:
            a = self.rows.off32[self.rows.offset]
            b = self.rows.off32[self.rows.offset + n]
        else:
            a = self.rows.off64[self.rows.offset]
            b = self.rows.off64[self.rows.offset + n]
        return b - a


cdef struct _Buf:
    char* data
    int64_t size
    int64_t cap


cdef int _buf_init(_Buf* b, int64_t cap) except -1:
    b.size = 0
    b.cap = cap if cap > 256 else 256
    b.data = <char*> malloc(<size_t> b.cap)
    if b.data == NULL:
        raise MemoryError()
    return 0


cdef inline char* _buf_room(_Buf* b, int64_t extra) noexcept nogil:
    cdef int64_t want = b.size + extra
    cdef char* grown
    if want > b.cap:
        while b.cap < want:
            b.cap *= 2
        grown = <char*> realloc(b.data, <size_t> b.cap)
        if grown == NULL:
            return NULL
        b.data = grown
    return b.data + b.size


cdef inline int _put(_Buf* b, const char* p, int64_t n) noexcept nogil:
    cdef char* at = _buf_room(b, n)
    if at == NULL:
        return -1
    memcpy(at, p, <size_t> n)
    b.size += n
    return 0


cdef inline int _put_int(_Buf* b, _Col col, Py_ssize_t i) noexcept:
    """The integer of row ``i`` in decimal, as ``str(int)`` writes it."""
    cdef Py_ssize_t j = i + col.offset
    cdef const uint8_t* p = col.ints
    cdef uint64_t u = 0
    cdef int64_t s = 0
    cdef bint negative = False
    cdef char digits[24]
    cdef int k = 24
    if col.signed:
        if col.width == 1:
            s = (<const signed char*> p)[j]
        elif col.width == 2:
            s = (<const short*> p)[j]
        elif col.width == 4:
            s = (<const int32_t*> p)[j]
        else:
            s = (<const int64_t*> p)[j]
        if s < 0:
            negative = True
            u = <uint64_t> (-(s + 1)) + 1
        else:
            u = <uint64_t> s
    else:
        if col.width == 1:
            u = p[j]
        elif col.width == 2:
            u = (<const unsigned short*> p)[j]
        elif col.width == 4:
            u = (<const uint32_t*> p)[j]
        else:
            u = (<const uint64_t*> p)[j]
    while True:
        k -= 1
        digits[k] = <char> (48 + u % 10)
        u //= 10
        if u == 0:
            break
    if negative:
        k -= 1
        digits[k] = 45
    return _put(b, digits + k, 24 - k)


cdef enum:
    _ONES = 0x0101010101010101
    _HIGHS = 0x8080808080808080


cdef inline uint64_t _zero_bytes(uint64_t v) noexcept nogil:
    """High bit set in each byte of ``v`` that is zero (the classic SWAR test; exact when any is zero)."""
    return (v - <uint64_t> _ONES) & ~v & <uint64_t> _HIGHS


cdef inline bint _needs_quote(const uint8_t* p, Py_ssize_t n, uint8_t d) noexcept nogil:
    """Whether ``p[:n]`` holds the delimiter, a double quote, CR or LF, eight bytes at a time."""
    cdef Py_ssize_t k = 0
    cdef uint64_t w, hit
    cdef uint64_t dd = <uint64_t> _ONES * d, qq = <uint64_t> _ONES * 34
    cdef uint64_t nl = <uint64_t> _ONES * 10, cr = <uint64_t> _ONES * 13
    cdef uint8_t ch
    while k + 8 <= n:
        memcpy(&w, p + k, 8)
        hit = _zero_bytes(w ^ dd) | _zero_bytes(w ^ qq) | _zero_bytes(w ^ nl) | _zero_bytes(w ^ cr)
        if hit:
            return True
        k += 8
    while k < n:
        ch = p[k]
        if ch == d or ch == 34 or ch == 10 or ch == 13:
            return True
        k += 1
    return False


cdef list _cols(list columns):
    return [_Col(kind, array) for kind, array in columns]


cdef int64_t _estimate(list cols, Py_ssize_t n, int per_value):
    cdef int64_t total = 0
    cdef _Col col
    for col in cols:
        total += col.text_size() + per_value * n
    return total + n


def delimited_rows(list columns, int delimiter):
    """The rows as ``a<delimiter>b\\n`` lines, or None when a value would need CSV quoting.

    A value needs quoting (and the caller's ``csv.writer`` then writes the batch) when it holds the
    delimiter, a double quote, ``\\r`` or ``\\n``, or is the empty only field of a one-column row
    (``csv.writer`` writes ``""`` there).
    """
    cdef list cols = _cols(columns)
    cdef Py_ssize_t ncols = len(cols), n = 0, i, c, k, ln
    cdef _Col col
    cdef const uint8_t* p
    cdef uint8_t ch
    cdef char d = <char> delimiter
    cdef char newline = 10
    cdef _Buf b
    cdef bint quote = False, failed = False
    if ncols == 0:
        return b""
    col = cols[0]
    n = col.rows.n if col.kind != KIND_INT else len(col.array)
    _buf_init(&b, _estimate(cols, n, 12))
    try:
        for i in range(n):
            for c in range(ncols):
                col = <_Col> cols[c]
                if c and _put(&b, &d, 1) < 0:
                    failed = True
                    break
                if col.is_null(i):
                    if ncols == 1:
                        quote = True
                        break
                    continue
                if col.kind == KIND_INT:
                    if _put_int(&b, col, i) < 0:
                        failed = True
                        break
                    continue
                col.rows.get(i, &p, &ln)
                if ln == 0 and ncols == 1:
                    quote = True
                    break
                if _needs_quote(p, ln, <uint8_t> d):
                    quote = True
                    break
                if _put(&b, <const char*> p, ln) < 0:
                    failed = True
                    break
            if quote or failed:
                break
            if _put(&b, &newline, 1) < 0:
                failed = True
                break
        if failed:
            raise MemoryError()
        if quote:
            return None
        return PyBytes_FromStringAndSize(b.data, b.size)
    finally:
        free(b.data)


cdef const char* _HEX = b"0123456789abcdef"


cdef inline bint _json_plain(uint64_t w) noexcept nogil:
    """Whether none of the eight bytes of ``w`` needs escaping: a control character, ``"`` or a backslash."""
    cdef uint64_t low = (w - <uint64_t> _ONES * 0x20) & ~w & <uint64_t> _HIGHS  # a byte below 0x20
    return not (low | _zero_bytes(w ^ (<uint64_t> _ONES * 34)) | _zero_bytes(w ^ (<uint64_t> _ONES * 92)))


cdef inline int _put_json_string(_Buf* b, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """``"text"`` escaped as ``json.dumps(text, ensure_ascii=False)`` escapes it (UTF-8 in, UTF-8 out)."""
    cdef char* at = _buf_room(b, 6 * n + 2)  # the worst case: every byte a control character
    cdef Py_ssize_t k = 0
    cdef uint8_t ch
    cdef uint64_t word
    cdef int64_t w = 0
    if at == NULL:
        return -1
    at[w] = 34
    w += 1
    while k < n:
        if k + 8 <= n:
            memcpy(&word, p + k, 8)
            if _json_plain(word):
                memcpy(at + w, &word, 8)
                w += 8
                k += 8
                continue
        ch = p[k]
        k += 1
        if ch >= 0x20 and ch != 34 and ch != 92:
            at[w] = <char> ch
            w += 1
            continue
        at[w] = 92
        w += 1
        if ch == 34 or ch == 92:
            at[w] = <char> ch
            w += 1
        elif ch == 10:
            at[w] = 110
            w += 1
        elif ch == 13:
            at[w] = 114
            w += 1
        elif ch == 9:
            at[w] = 116
            w += 1
        elif ch == 8:
            at[w] = 98
            w += 1
        elif ch == 12:
            at[w] = 102
            w += 1
        else:
            at[w] = 117
            at[w + 1] = 48
            at[w + 2] = 48
            at[w + 3] = _HEX[ch >> 4]
            at[w + 4] = _HEX[ch & 15]
            w += 5
    at[w] = 34
    w += 1
    b.size += w
    return 0


def jsonl_rows(list keys, list columns):
    """The rows as JSON lines: ``{"key": value, ...}`` with ``json.dumps``' separators, nulls left out.

    ``keys`` holds each column's key already written as JSON (``json.dumps(name, ensure_ascii=False)``,
    bytes), in column order.
    """
    cdef list cols = _cols(columns)
    cdef Py_ssize_t ncols = len(cols), n = 0, i, c, ln
    cdef _Col col
    cdef const uint8_t* p
    cdef bytes key
    cdef _Buf b
    cdef bint first, failed = False
    cdef int rc
    if len(keys) != ncols:
        raise ValueError("one key per column")
    if ncols == 0:
        return b""
    col = cols[0]
    n = col.rows.n if col.kind != KIND_INT else len(col.array)
    cdef int64_t keyed = 0
    for key in keys:
        keyed += len(key) + 4
    _buf_init(&b, _estimate(cols, n, 8) + keyed * n + 3 * n)
    try:
        for i in range(n):
            first = True
            if _put(&b, "{", 1) < 0:
                failed = True
                break
            for c in range(ncols):
                col = <_Col> cols[c]
                if col.is_null(i):
                    continue
                key = <bytes> keys[c]
                if not first and _put(&b, ", ", 2) < 0:
                    failed = True
                    break
                first = False
                if _put(&b, <const char*> key, len(key)) < 0 or _put(&b, ": ", 2) < 0:
                    failed = True
                    break
                if col.kind == KIND_INT:
                    rc = _put_int(&b, col, i)
                else:
                    col.rows.get(i, &p, &ln)
                    if col.kind == KIND_RAW:
                        rc = _put(&b, <const char*> p, ln)
                    else:
                        rc = _put_json_string(&b, p, ln)
                if rc < 0:
                    failed = True
                    break
            if failed or _put(&b, "}\n", 2) < 0:
                failed = True
                break
        if failed:
            raise MemoryError()
        return PyBytes_FromStringAndSize(b.data, b.size)
    finally:
        free(b.data)


cdef inline bint _space(uint32_t cp) noexcept nogil:
    """Whether ``str.strip()`` strips this code point (``Py_UNICODE_ISSPACE``)."""
    if cp < 0x80:
        return cp == 32 or 9 <= cp <= 13 or 0x1C <= cp <= 0x1F
    return (cp == 0x85 or cp == 0xA0 or cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028
            or cp == 0x2029 or cp == 0x202F or cp == 0x205F or cp == 0x3000)


cdef inline uint32_t _decode(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The code point of the valid UTF-8 sequence at ``p`` (``n`` bytes long)."""
    if n == 1:
        return p[0]
    if n == 2:
        return ((p[0] & 0x1F) << 6) | (p[1] & 0x3F)
    if n == 3:
        return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
    return ((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)


def plain_lines(array):
    """Whether every row of a string array is a value as it stands: not null or blank, no white space
    at either end (as ``str.strip`` sees it), not a ``#`` comment and not a ``{`` JSON line."""
    cdef _Rows rows = _Rows(array)
    cdef Py_ssize_t i, ln, k, lead
    cdef const uint8_t* p
    cdef bint plain = True
    with nogil:
        for i in range(rows.n):
            if not rows.get(i, &p, &ln) or ln == 0 or p[0] == 35 or p[0] == 123:
                plain = False
                break
            lead = 1 if p[0] < 0x80 else (2 if p[0] < 0xE0 else (3 if p[0] < 0xF0 else 4))
            if lead > ln or _space(_decode(p, lead)):
                plain = False
                break
            k = ln - 1
            while k > 0 and (p[k] & 0xC0) == 0x80:
                k -= 1
            if _space(_decode(p + k, ln - k)):
                plain = False
                break
    return plain
