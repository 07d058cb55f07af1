# Shared by the URL kernels (surt.pyx, domain.pyx, canon.pyx): read a pyarrow string array's buffers
# without a Python object per row, and build the buffers of a pyarrow string array in C.
#
# A kernel runs over the rows with the GIL released and marks each row ok, null, or "slow" (a row the
# C path does not take: the pure-Python twin answers it afterwards, with the GIL, so both paths keep one
# definition of the rare cases and of the errors).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize, PyByteArray_Resize
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

cdef enum:
    ROW_OK = 0
    ROW_NULL = 1
    ROW_SLOW = 2


cdef class _Rows:
    """The rows of a pyarrow ``string``/``large_string`` array as (pointer, length) in C."""

    cdef object array  # keeps the buffers alive
    cdef Py_ssize_t n, offset
    cdef const uint8_t* validity
    cdef const int32_t* off32
    cdef const int64_t* off64
    cdef const uint8_t* data

    def __init__(self, array):
        import pyarrow as pa

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            raise TypeError(f"expected a pyarrow string array, got {array.type}")
        self.array = array
        self.n = len(array)
        self.offset = array.offset
        bufs = array.buffers()
        self.validity = <const uint8_t*> <size_t> bufs[0].address if bufs[0] is not None and array.null_count else NULL
        self.off32 = NULL
        self.off64 = NULL
        if pa.types.is_string(array.type):
            self.off32 = <const int32_t*> <size_t> bufs[1].address
        else:
            self.off64 = <const int64_t*> <size_t> bufs[1].address
        self.data = <const uint8_t*> <size_t> bufs[2].address if bufs[2] is not None and bufs[2].size else NULL

    cdef inline bint get(self, Py_ssize_t i, const uint8_t** p, Py_ssize_t* n) noexcept nogil:
        """False for a null row; else the row's bytes."""
        cdef Py_ssize_t j = i + self.offset
        cdef int64_t a, b
        if self.validity != NULL and not (self.validity[j >> 3] >> (j & 7)) & 1:
            return False
        if self.off32 != NULL:
            a = self.off32[j]
            b = self.off32[j + 1]
        else:
            a = self.off64[j]
            b = self.off64[j + 1]
        n[0] = <Py_ssize_t> (b - a)
        p[0] = self.data + a if self.data != NULL else <const uint8_t*> b""
        return True

    cdef bytes row_bytes(self, Py_ssize_t i):
        cdef const uint8_t* p
        cdef Py_ssize_t n
        if not self.get(i, &p, &n):
            return None
        return (<const char*> p)[:n]


cdef struct _Out:
    char* data
    int64_t size
    int64_t cap
    int64_t* offsets  # n + 1
    uint8_t* status   # n


cdef int _out_init(_Out* o, Py_ssize_t n, int64_t cap) except -1:
    o.size = 0
    o.cap = cap if cap > 64 else 64
    o.data = <char*> malloc(<size_t> o.cap)
    o.offsets = <int64_t*> malloc(sizeof(int64_t) * (n + 1))
    o.status = <uint8_t*> malloc(n + 1)
    if o.data == NULL or o.offsets == NULL or o.status == NULL:
        _out_free(o)
        raise MemoryError()
    o.offsets[0] = 0
    return 0


cdef void _out_free(_Out* o) noexcept nogil:
    free(o.data)
    free(o.offsets)
    free(o.status)
    o.data = NULL
    o.offsets = NULL
    o.status = NULL


cdef inline char* _out_reserve(_Out* o, int64_t extra) noexcept nogil:
    """Room for ``extra`` more bytes; NULL when memory ran out."""
    cdef int64_t want = o.size + extra
    cdef char* grown
    if want > o.cap:
        while o.cap < want:
            o.cap *= 2
        grown = <char*> realloc(o.data, <size_t> o.cap)
        if grown == NULL:
            return NULL
        o.data = grown
    return o.data + o.size


cdef object _out_finish(_Out* o, Py_ssize_t n, dict slow):
    """The pyarrow string array of ``o``; ``slow`` maps a row to its bytes (or None for null)."""
    import pyarrow as pa

    cdef Py_ssize_t i, nulls = 0
    cdef int64_t total = 0, pos = 0, a, b
    cdef bytes value
    cdef object item
    for i in range(n):
        if o.status[i] == ROW_OK:
            total += o.offsets[i + 1] - o.offsets[i]
        elif o.status[i] == ROW_SLOW:
            item = slow.get(i)
            if item is None:
                o.status[i] = ROW_NULL
            else:
                total += len(<bytes> item)
        if o.status[i] == ROW_NULL:
            nulls += 1
    large = total >= 2147483647
    cdef bytearray data = bytearray(total)
    cdef bytearray offs = bytearray((8 if large else 4) * (n + 1))
    cdef bytearray valid = bytearray((n + 7) // 8) if nulls else None
    cdef char* d = data
    cdef int32_t* o32 = <int32_t*> (<char*> offs)
    cdef int64_t* o64 = <int64_t*> (<char*> offs)
    cdef uint8_t* v = <uint8_t*> (<char*> valid) if nulls else NULL
    for i in range(n):
        if large:
            o64[i] = pos
        else:
            o32[i] = <int32_t> pos
        if o.status[i] == ROW_OK:
            a = o.offsets[i]
            b = o.offsets[i + 1]
            memcpy(d + pos, o.data + a, <size_t> (b - a))
            pos += b - a
        elif o.status[i] == ROW_SLOW:
            value = slow[i]
            memcpy(d + pos, <char*> value, <size_t> len(value))
            pos += len(value)
        if v != NULL and o.status[i] != ROW_NULL:
            v[i >> 3] |= 1 << (i & 7)
    if large:
        o64[n] = pos
    else:
        o32[n] = <int32_t> pos
    buffers = [pa.py_buffer(valid) if nulls else None, pa.py_buffer(offs), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), n, buffers, null_count=nulls)


def as_string_array(urls):
    """``urls`` as a pyarrow string array: a pyarrow array is taken as it is, a sequence is converted.

    The conversion is done here rather than by ``pyarrow.array`` (which imports pandas, half a second,
    on its first call). Returns None when a row is neither str nor None, or holds text UTF-8 cannot
    encode (a lone surrogate): the caller then answers every row with the pure-Python twin.
    """
    import pyarrow as pa

    if isinstance(urls, (pa.Array, pa.ChunkedArray)):
        return urls
    cdef list items = urls if isinstance(urls, list) else list(urls)
    cdef Py_ssize_t n = len(items), i, ln
    cdef const char* p
    cdef _Out o
    _out_init(&o, n, 64 * n)
    try:
        for i in range(n):
            item = items[i]
            if item is None:
                o.status[i] = ROW_NULL
            elif type(item) is str:
                try:
                    p = PyUnicode_AsUTF8AndSize(item, &ln)
                except UnicodeEncodeError:
                    return None
                if _out_reserve(&o, ln) == NULL:
                    raise MemoryError()
                memcpy(o.data + o.size, p, ln)
                o.size += ln
                o.status[i] = ROW_OK
            else:
                return None
            o.offsets[i + 1] = o.size
        return _out_finish(&o, n, {})
    finally:
        _out_free(&o)


def string_array(Py_ssize_t n, dict values):
    """A pyarrow string array of ``n`` rows: ``values[i]`` (str) where given, null elsewhere."""
    cdef _Out o
    cdef Py_ssize_t i
    _out_init(&o, n, 0)
    cdef dict encoded = {}
    try:
        for i in range(n):
            value = values.get(i)
            if value is None:
                o.status[i] = ROW_NULL
            else:
                o.status[i] = ROW_SLOW
                encoded[i] = value.encode("utf-8", "surrogateescape")
            o.offsets[i + 1] = 0
        return _out_finish(&o, n, encoded)
    finally:
        _out_free(&o)


cdef inline Py_ssize_t _utf8_bad(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Index of the first byte that is not valid UTF-8 (as Python's strict decoder says), or -1."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, d
    cdef uint64_t word
    while i < n:
        if i + 8 <= n:
            memcpy(&word, s + i, 8)
            if not word & 0x8080808080808080ULL:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
        elif 0xC2 <= c <= 0xDF:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return i
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return i
            d = s[i + 1]
            if (c == 0xE0 and d < 0xA0) or (c == 0xED and d > 0x9F):
                return i  # overlong, or a surrogate
            i += 3
        elif 0xF0 <= c <= 0xF4:
            if (i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80
                    or (s[i + 3] & 0xC0) != 0x80):
                return i
            d = s[i + 1]
            if (c == 0xF0 and d < 0x90) or (c == 0xF4 and d > 0x8F):
                return i
            i += 4
        else:
            return i
    return -1


def lines_array(bytes block, Py_ssize_t first_line=1):
    """The lines of a text block as ``(urls, errors)`` pyarrow string arrays, one row per line.

    Lines end at ``\\n`` (a ``\\r`` before it is dropped; the block's last line needs no newline). A
    line that is empty, holds a NUL byte or is not UTF-8 is a null URL with its reason in ``errors``
    (null elsewhere); ``first_line`` numbers the block's first line in those messages. The lines are
    copied once, straight into the array's buffers, with the GIL released.
    """
    import pyarrow as pa

    cdef const uint8_t* s = <const uint8_t*> (<char*> block)
    cdef Py_ssize_t n = len(block), i, start = 0, end, rows = 0, bad, size = 0, row = 0
    cdef const uint8_t* hit
    cdef bint large
    if n == 0:
        return pa.nulls(0, pa.string()), pa.nulls(0, pa.string())
    if s[n - 1] == 10:
        n -= 1  # the newline ending the last line does not start another one
    rows = 1
    hit = <const uint8_t*> memchr(s, 10, n) if n else NULL
    while hit != NULL:
        rows += 1
        i = hit - s + 1
        hit = <const uint8_t*> memchr(s + i, 10, n - i) if n > i else NULL
    large = n >= 2147483647
    cdef bytearray data = PyByteArray_FromStringAndSize(NULL, n)
    cdef bytearray offs = PyByteArray_FromStringAndSize(NULL, (8 if large else 4) * (rows + 1))
    cdef bytearray valid = bytearray((rows + 7) // 8)
    cdef uint8_t* d = <uint8_t*> PyByteArray_AS_STRING(data)
    cdef int32_t* o32 = <int32_t*> PyByteArray_AS_STRING(offs)
    cdef int64_t* o64 = <int64_t*> PyByteArray_AS_STRING(offs)
    cdef uint8_t* v = <uint8_t*> PyByteArray_AS_STRING(valid)
    cdef dict errors = {}
    cdef bint nul
    cdef Py_ssize_t nbad = 0
    cdef Py_ssize_t* where = <Py_ssize_t*> malloc(sizeof(Py_ssize_t) * rows)  # per row: -1 ok, else why
    if where == NULL:
        raise MemoryError()
    try:
        with nogil:
            while row < rows:
                if large:
                    o64[row] = size
                else:
                    o32[row] = <int32_t> size
                hit = <const uint8_t*> memchr(s + start, 10, n - start) if n > start else NULL
                end = hit - s if hit != NULL else n
                nul = end > start and memchr(s + start, 0, end - start) != NULL
                i = end
                if end > start and s[end - 1] == 13:
                    end -= 1
                if end == start:
                    where[row] = -2
                elif nul:
                    where[row] = -3
                else:
                    bad = _utf8_bad(s + start, end - start)
                    where[row] = bad
                    if bad < 0:
                        memcpy(d + size, s + start, end - start)
                        size += end - start
                        v[row >> 3] |= 1 << (row & 7)
                if where[row] != -1:
                    nbad += 1
                row += 1
                start = i + 1
            if large:
                o64[rows] = size
            else:
                o32[rows] = <int32_t> size
        for row in range(rows):
            if where[row] == -2:
                errors[row] = f"line {first_line + row}: empty line"
            elif where[row] == -3:
                errors[row] = f"line {first_line + row}: binary data (a NUL byte), not a line of text"
            elif where[row] >= 0:
                errors[row] = f"line {first_line + row}: not UTF-8 text (byte {where[row]})"
    finally:
        free(where)
    PyByteArray_Resize(data, size)
    buffers = [pa.py_buffer(valid) if nbad else None, pa.py_buffer(offs), pa.py_buffer(data)]
    urls = pa.Array.from_buffers(pa.large_string() if large else pa.string(), rows, buffers, null_count=nbad)
    if errors:
        return urls, string_array(rows, errors)
    return urls, pa.nulls(rows, pa.string())
