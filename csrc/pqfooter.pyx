# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled Parquet footer walk; the rule and the pure-Python twin are in ccrawl/commoncrawl/columnar/pageindex.py.

``walk(footer)`` skips through the Thrift compact FileMetaData and keeps, per row group and column
chunk, where the chunk's OffsetIndex and ColumnIndex are (fields 4-7 of ColumnChunk) and where its
ColumnMetaData struct starts, plus where each top-level field other than the row groups and the
key-value metadata starts. ``offset_index`` and ``column_index`` decode a chunk's page index (the
page locations; the per-page null flags and bounds). Running off the end raises IndexError, a
malformed value ValueError; the caller turns both into an InputError, as the twins do.
"""

DEF STOP = 0
DEF TRUE = 1
DEF FALSE = 2
DEF BYTE = 3
DEF I16 = 4
DEF I32 = 5
DEF I64 = 6
DEF DOUBLE = 7
DEF BINARY = 8
DEF LIST = 9
DEF SET = 10
DEF MAP = 11
DEF STRUCT = 12
DEF MAX_DEPTH = 64


cdef inline Py_ssize_t _uvarint(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n,
                                unsigned long long* out) except -1:
    cdef unsigned long long v = 0
    cdef int shift = 0
    cdef unsigned char b
    while True:
        if pos >= n:
            raise IndexError("parquet footer: Thrift data ends early")
        b = d[pos]
        pos += 1
        if shift < 64:
            v |= (<unsigned long long>(b & 0x7F)) << shift
        if not b & 0x80:
            out[0] = v
            return pos
        shift += 7
        if shift > 70:
            raise ValueError("parquet footer: a varint runs on")


cdef inline long long _unzigzag(unsigned long long n):
    return <long long>(n >> 1) ^ -(<long long>(n & 1))


cdef Py_ssize_t _skip(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, int wtype, int depth) except -1:
    cdef unsigned long long size = 0, i
    cdef int head, etype, kt, vt
    if depth > MAX_DEPTH:
        raise ValueError("parquet footer: Thrift structures nested too deep")
    if wtype == I16 or wtype == I32 or wtype == I64:
        return _uvarint(d, pos, n, &size)
    if wtype == BINARY:
        pos = _uvarint(d, pos, n, &size)
        if size > <unsigned long long>(n - pos):
            raise ValueError("parquet footer: a string runs past the end")
        return pos + <Py_ssize_t>size
    if wtype == STRUCT:
        return _skip_struct(d, pos, n, depth + 1)
    if wtype == TRUE or wtype == FALSE:
        return pos
    if wtype == BYTE or wtype == DOUBLE:
        pos += 1 if wtype == BYTE else 8
        if pos > n:
            raise IndexError("parquet footer: Thrift data ends early")
        return pos
    if wtype == LIST or wtype == SET:
        if pos >= n:
            raise IndexError("parquet footer: Thrift data ends early")
        head = d[pos]
        pos += 1
        size = head >> 4
        etype = head & 0x0F
        if size == 15:
            pos = _uvarint(d, pos, n, &size)
        if etype == TRUE or etype == FALSE or etype == BYTE:
            if size > <unsigned long long>(n - pos):
                raise IndexError("parquet footer: Thrift data ends early")
            return pos + <Py_ssize_t>size
        i = 0
        while i < size:
            pos = _skip(d, pos, n, etype, depth + 1)
            i += 1
        return pos
    if wtype == MAP:
        pos = _uvarint(d, pos, n, &size)
        if size == 0:
            return pos
        if pos >= n:
            raise IndexError("parquet footer: Thrift data ends early")
        kt = d[pos] >> 4
        vt = d[pos] & 0x0F
        pos += 1
        i = 0
        while i < size:
            pos = _skip(d, pos, n, kt, depth + 1)
            pos = _skip(d, pos, n, vt, depth + 1)
            i += 1
        return pos
    raise ValueError(f"parquet footer: unknown Thrift type {wtype}")


cdef inline Py_ssize_t _field(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, int* wtype, long long* fid,
                              long long last) except -1:
    # One field header: its type, its id (delta-coded or a zigzag varint that follows).
    cdef unsigned long long raw = 0
    cdef int head
    if pos >= n:
        raise IndexError("parquet footer: Thrift data ends early")
    head = d[pos]
    pos += 1
    wtype[0] = head & 0x0F
    if wtype[0] == STOP:
        return pos
    if head >> 4:
        fid[0] = last + (head >> 4)
    else:
        pos = _uvarint(d, pos, n, &raw)
        fid[0] = _unzigzag(raw)
    return pos


cdef Py_ssize_t _skip_struct(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, int depth) except -1:
    cdef int wtype = 0
    cdef long long fid = 0
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            return pos
        pos = _skip(d, pos, n, wtype, depth)


cdef Py_ssize_t _list_start(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, int* etype,
                            unsigned long long* size, str what) except -1:
    """A list's element type and size, read at ``pos``; returns where its first element starts."""
    if pos < 0 or pos >= n:
        raise IndexError(f"{what}: Thrift data ends early")
    etype[0] = d[pos] & 0x0F
    return _list_head(d, pos, n, size)


cdef Py_ssize_t _list_head(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, unsigned long long* size) except -1:
    if pos >= n:
        raise IndexError("parquet footer: Thrift data ends early")
    size[0] = d[pos] >> 4
    pos += 1
    if size[0] == 15:
        pos = _uvarint(d, pos, n, size)
    return pos


cdef Py_ssize_t _column_chunk(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, list row) except -1:
    cdef int wtype = 0
    cdef long long fid = 0
    cdef long long found[4]
    cdef bint have[4]
    cdef Py_ssize_t at = -1
    cdef unsigned long long raw = 0
    cdef int k
    for k in range(4):
        have[k] = False
        found[k] = 0
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            break
        if 4 <= fid <= 7 and (wtype == I32 or wtype == I64):
            pos = _uvarint(d, pos, n, &raw)
            found[fid - 4] = _unzigzag(raw)
            have[fid - 4] = True
        elif fid == 3 and wtype == STRUCT:
            at = pos
            pos = _skip_struct(d, pos, n, 1)
        else:
            pos = _skip(d, pos, n, wtype, 1)
    oi = (found[0], found[1]) if have[0] and have[1] else None
    ci = (found[2], found[3]) if have[2] and have[3] else None
    row.append((oi, ci, at))
    return pos


cdef Py_ssize_t _row_group(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, list places) except -1:
    cdef int wtype = 0
    cdef long long fid = 0
    cdef unsigned long long size = 0, i
    cdef list row = []
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            places.append(row)
            return pos
        if fid == 1 and wtype == LIST:
            pos = _list_head(d, pos, n, &size)
            i = 0
            while i < size:
                pos = _column_chunk(d, pos, n, row)
                i += 1
        else:
            pos = _skip(d, pos, n, wtype, 1)


def walk(bytes footer):
    """(places, top): places[rg][col] = (offset index, column index, ColumnMetaData start or -1) with the
    indexes as (offset, length) or None; top = [(field id, wire type, start)] for the other top-level fields
    but the key-value metadata."""
    cdef const unsigned char* d = footer
    cdef Py_ssize_t n = len(footer), pos = 0
    cdef int wtype = 0
    cdef long long fid = 0
    cdef unsigned long long size = 0, i
    cdef list places = []
    cdef list top = []
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            return places, top
        if fid == 4 and wtype == LIST:
            pos = _list_head(d, pos, n, &size)
            i = 0
            while i < size:
                pos = _row_group(d, pos, n, places)
                i += 1
        else:
            if fid != 5:
                top.append((fid, wtype, pos))
            pos = _skip(d, pos, n, wtype, 1)


def offset_index(bytes data):
    """(offsets, sizes, first rows) of the pages an OffsetIndex lists (twin: pageindex.offset_index_py)."""
    cdef const unsigned char* d = data
    cdef Py_ssize_t n = len(data), pos = 0
    cdef int wtype = 0, pwtype = 0, etype
    cdef long long fid = 0, pfid = 0
    cdef unsigned long long size = 0, raw = 0, i
    cdef long long got[3]
    cdef bint have[3]
    cdef list offsets = [], sizes = [], first_rows = []
    cdef bint seen = False
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            break
        if fid == 1 and wtype == LIST:
            pos = _list_start(d, pos, n, &etype, &size, "parquet page index")
            if etype != STRUCT:
                raise ValueError("parquet page index: page locations are not structs")
            i = 0
            while i < size:
                have[0] = have[1] = have[2] = False
                pfid = 0
                while True:
                    pos = _field(d, pos, n, &pwtype, &pfid, pfid)
                    if pwtype == STOP:
                        break
                    if 1 <= pfid <= 3 and (pwtype == I32 or pwtype == I64):
                        pos = _uvarint(d, pos, n, &raw)
                        got[pfid - 1] = _unzigzag(raw)
                        have[pfid - 1] = True
                    else:
                        pos = _skip(d, pos, n, pwtype, 2)
                if not (have[0] and have[1] and have[2]):
                    raise ValueError("parquet page index: a page location lacks a field")
                offsets.append(got[0])
                sizes.append(got[1])
                first_rows.append(got[2])
                i += 1
            seen = True
        else:
            pos = _skip(d, pos, n, wtype, 1)
    if not seen:
        raise ValueError("parquet page index: an OffsetIndex without page locations")
    return offsets, sizes, first_rows


def column_index(bytes data):
    """(null pages, min values, max values) of a ColumnIndex, the bounds as bytes (twin:
    pageindex.column_index_py)."""
    cdef const unsigned char* d = data
    cdef Py_ssize_t n = len(data), pos = 0
    cdef int wtype = 0, etype
    cdef long long fid = 0
    cdef unsigned long long size = 0, length = 0, i
    cdef list nulls = None, mins = None, maxs = None, values
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            break
        if fid == 1 and wtype == LIST:
            pos = _list_start(d, pos, n, &etype, &size, "parquet page index")
            if etype != TRUE and etype != FALSE:
                raise ValueError("parquet page index: null pages are not booleans")
            if size > <unsigned long long>(n - pos):
                raise IndexError("parquet page index: Thrift data ends early")
            nulls = [d[pos + k] == TRUE for k in range(<Py_ssize_t>size)]
            pos += <Py_ssize_t>size
        elif (fid == 2 or fid == 3) and wtype == LIST:
            pos = _list_start(d, pos, n, &etype, &size, "parquet page index")
            if etype != BINARY:
                raise ValueError("parquet page index: page bounds are not binary")
            values = []
            i = 0
            while i < size:
                pos = _uvarint(d, pos, n, &length)
                if length > <unsigned long long>(n - pos):
                    raise ValueError("parquet page index: a string runs past the end")
                values.append(data[pos : pos + <Py_ssize_t>length])
                pos += <Py_ssize_t>length
                i += 1
            if fid == 2:
                mins = values
            else:
                maxs = values
        else:
            pos = _skip(d, pos, n, wtype, 1)
    if nulls is None or mins is None or maxs is None or not (len(nulls) == len(mins) == len(maxs)):
        raise ValueError("parquet page index: a ColumnIndex without its page bounds")
    return nulls, mins, maxs


def fields(bytes data, Py_ssize_t pos):
    """The fields of the Thrift struct at ``pos``: [(field id, wire type, value start, value end)], and where the
    struct ends (twin: pageindex.fields_py)."""
    cdef const unsigned char* d = data
    cdef Py_ssize_t n = len(data), start
    cdef int wtype = 0
    cdef long long fid = 0
    cdef list out = []
    if pos < 0:
        raise ValueError("parquet footer: a struct before the start")
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            return out, pos
        start = pos
        pos = _skip(d, pos, n, wtype, 1)
        out.append((fid, wtype, start, pos))


def elements(bytes data, Py_ssize_t pos):
    """The elements of the Thrift list at ``pos``: (element type, [(start, end)]) (twin: pageindex.elements_py)."""
    cdef const unsigned char* d = data
    cdef Py_ssize_t n = len(data), start
    cdef unsigned long long size = 0, i
    cdef int etype
    cdef list out = []
    pos = _list_start(d, pos, n, &etype, &size, "parquet footer")
    if etype == TRUE or etype == FALSE:
        raise ValueError("parquet footer: a list of booleans has no element spans")
    i = 0
    while i < size:
        start = pos
        pos = _skip(d, pos, n, etype, 1)
        out.append((start, pos))
        i += 1
    return etype, out


# -- dictionary-encoded pages ------------------------------------------------------------------------

from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memcpy

DEF PAGE_DATA = 0
DEF PAGE_DICTIONARY = 2
DEF PAGE_DATA_V2 = 3
DEF ENC_PLAIN = 0
DEF ENC_PLAIN_DICTIONARY = 2
DEF ENC_RLE = 3
DEF ENC_RLE_DICTIONARY = 8


cdef Py_ssize_t _hybrid(const unsigned char* d, Py_ssize_t pos, Py_ssize_t end, int width, Py_ssize_t count,
                        int32_t* out) except -1:
    # ``count`` values of Parquet's RLE / bit-packed hybrid at ``pos`` (no length prefix), ``width`` bits each.
    cdef unsigned long long header = 0
    cdef Py_ssize_t got = 0, n, k, nbytes = (width + 7) // 8, run_start, run_bytes
    cdef int32_t value
    cdef uint64_t buf
    cdef int have, b
    cdef uint64_t mask = (<uint64_t>1 << width) - 1
    while got < count:
        pos = _uvarint(d, pos, end, &header)
        if header & 1:
            if width and (header >> 1) > <unsigned long long>(end - pos):  # more 8-value groups than bytes left
                raise IndexError("parquet page: data ends early")
            run_bytes = <Py_ssize_t>(header >> 1) * width
            if run_bytes > end - pos:
                raise IndexError("parquet page: data ends early")
            run_start = pos
            n = <Py_ssize_t>(header >> 1) * 8
            if n > count - got:
                n = count - got
            buf = 0
            have = 0
            for k in range(n):
                if width:
                    while have < width:
                        buf |= (<uint64_t>d[pos]) << have
                        pos += 1
                        have += 8
                    out[got] = <int32_t>(buf & mask)
                    buf >>= width
                    have -= width
                else:
                    out[got] = 0
                got += 1
            pos = run_start + run_bytes
        else:
            n = <Py_ssize_t>(header >> 1)
            if nbytes > end - pos:
                raise IndexError("parquet page: data ends early")
            value = 0
            for b in range(nbytes):
                value |= (<int32_t>d[pos + b]) << (8 * b)
            pos += nbytes
            if n > count - got:
                n = count - got
            for k in range(n):
                out[got + k] = value
            got += n
    return pos


cdef Py_ssize_t _page_header(const unsigned char* d, Py_ssize_t pos, Py_ssize_t n, long long* h) except -1:
    # PageHeader: h = [type, uncompressed, compressed, num_values, encoding, def_len, rep_len, is_compressed,
    # def_encoding]; -1 where absent.
    cdef int wtype = 0, swtype = 0
    cdef long long fid = 0, sfid = 0
    cdef unsigned long long raw = 0
    cdef int k
    for k in range(9):
        h[k] = -1
    h[7] = 1
    while True:
        pos = _field(d, pos, n, &wtype, &fid, fid)
        if wtype == STOP:
            return pos
        if 1 <= fid <= 3 and (wtype == I32 or wtype == I64):
            pos = _uvarint(d, pos, n, &raw)
            h[fid - 1] = _unzigzag(raw)
        elif (fid == 5 or fid == 7 or fid == 8) and wtype == STRUCT:
            sfid = 0
            while True:
                pos = _field(d, pos, n, &swtype, &sfid, sfid)
                if swtype == STOP:
                    break
                if (swtype == I32 or swtype == I64) and (
                        (fid != 8 and (sfid == 1 or sfid == 2 or sfid == 3))
                        or (fid == 8 and (sfid == 1 or sfid == 4 or sfid == 5 or sfid == 6))):
                    pos = _uvarint(d, pos, n, &raw)
                    if sfid == 1:
                        h[3] = _unzigzag(raw)
                    elif (fid != 8 and sfid == 2) or (fid == 8 and sfid == 4):
                        h[4] = _unzigzag(raw)
                    elif fid != 8 and sfid == 3:
                        h[8] = _unzigzag(raw)
                    elif sfid == 5:
                        h[5] = _unzigzag(raw)
                    else:
                        h[6] = _unzigzag(raw)
                elif fid == 8 and sfid == 7 and (swtype == TRUE or swtype == FALSE):
                    h[7] = 1 if swtype == TRUE else 0
                else:
                    pos = _skip(d, pos, n, swtype, 2)
        else:
            pos = _skip(d, pos, n, wtype, 1)


def dict_pages(bytes data, decompress, int max_def):
    """A run of a dictionary-encoded BYTE_ARRAY column's pages decoded to a dictionary and indexes
    (twin: pageindex.dict_pages_py).

    ``data`` is the dictionary page and then data pages, headers included, as they lie in the file;
    ``decompress(body, uncompressed size)`` undoes the chunk's codec; ``max_def`` is the column's
    maximum definition level (0 or 1: a flat column). Returns (dictionary offsets as int32, dictionary
    bytes, dictionary size, indexes as int32, validity bitmap or None, null count, rows), or None when a
    page is something else (a data page not dictionary-encoded, say, after the writer fell back to PLAIN).
    """
    cdef const unsigned char* d = data
    cdef Py_ssize_t n = len(data), pos = 0, body_end, p, q, end, vals, nulls = 0, rows = 0, i, j, dn
    cdef long long h[9]
    cdef bytes body, head
    cdef const unsigned char* b
    cdef unsigned long long length
    cdef int width
    cdef bytearray offsets, values, indexes, valid, levels
    cdef int32_t* off
    cdef int32_t* idx
    cdef int32_t* lev
    cdef unsigned char* vbits
    cdef Py_ssize_t total_rows = 0
    if max_def < 0 or max_def > 1:
        return None
    pos = _page_header(d, pos, n, h)
    if h[0] != PAGE_DICTIONARY or h[2] < 0 or h[3] < 0 or (h[4] != ENC_PLAIN and h[4] != ENC_PLAIN_DICTIONARY):
        return None
    if h[2] > n - pos:
        raise IndexError("parquet page: data ends early")
    body = decompress(data[pos : pos + h[2]], h[1])
    pos += h[2]
    b = body
    dn = h[3]
    offsets = bytearray(4 * (dn + 1))
    off = <int32_t*><char*>offsets
    values = bytearray(len(body))
    p = 0
    q = 0
    off[0] = 0
    for i in range(dn):
        if p + 4 > len(body):
            raise IndexError("parquet page: the dictionary ends early")
        length = b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (<unsigned long long>b[p + 3] << 24)
        p += 4
        if length > <unsigned long long>(len(body) - p):
            raise ValueError("parquet page: a dictionary value runs past the end")
        memcpy(<char*>values + q, b + p, length)
        p += length
        q += length
        off[i + 1] = <int32_t>q
    del values[q:]
    # The data pages: first how many rows, then decode into one buffer.
    pages = []
    while pos < n:
        pos = _page_header(d, pos, n, h)
        if h[2] < 0 or h[2] > n - pos or h[3] < 0:
            raise IndexError("parquet page: data ends early")
        if h[0] != PAGE_DATA and h[0] != PAGE_DATA_V2:
            return None
        if h[4] != ENC_RLE_DICTIONARY and h[4] != ENC_PLAIN_DICTIONARY:
            return None
        if h[0] == PAGE_DATA and max_def > 0 and h[8] != ENC_RLE:
            return None
        if h[0] == PAGE_DATA_V2 and (h[6] > 0 or h[5] < 0 or h[5] > h[2]):
            return None
        pages.append((h[0], pos, h[2], h[1], h[3], h[5], h[7]))
        total_rows += h[3]
        pos += h[2]
    indexes = bytearray(4 * total_rows)
    idx = <int32_t*><char*>indexes
    levels = bytearray(4 * total_rows if max_def > 0 else 0)
    lev = <int32_t*><char*>levels
    cdef Py_ssize_t kind, start, size, usize, count, def_len
    cdef int compressed
    for page in pages:
        kind, start, size, usize, count, def_len, compressed = page
        if kind == PAGE_DATA:
            body = decompress(data[start : start + size], usize)
            b = body
            end = len(body)
            p = 0
            if max_def > 0:
                if end < 4:
                    raise IndexError("parquet page: data ends early")
                length = b[0] | (b[1] << 8) | (b[2] << 16) | (<unsigned long long>b[3] << 24)
                if length > <unsigned long long>(end - 4):
                    raise ValueError("parquet page: definition levels run past the end")
                _hybrid(b, 4, 4 + <Py_ssize_t>length, 1, count, lev + rows)
                p = 4 + <Py_ssize_t>length
        else:
            head = data[start : start + def_len]
            if max_def > 0:
                _hybrid(head, 0, def_len, 1, count, lev + rows)
            body = data[start + def_len : start + size]
            if compressed:
                body = decompress(body, usize - def_len)
            b = body
            end = len(body)
            p = 0
        vals = count
        if max_def > 0:
            vals = 0
            for i in range(count):
                if lev[rows + i] == max_def:
                    vals += 1
                elif lev[rows + i] != 0:
                    raise ValueError("parquet page: a definition level past the column's")
        if vals:
            if p >= end:
                raise IndexError("parquet page: data ends early")
            width = b[p]
            if width > 32:
                raise ValueError("parquet page: an index wider than 32 bits")
            # Decode the non-null indexes at the end of this page's slot, then spread them over the rows.
            _hybrid(b, p + 1, end, width, vals, idx + rows + count - vals)
        if max_def > 0 and vals < count:
            j = rows + count - vals
            for i in range(count):
                if lev[rows + i] == max_def:
                    idx[rows + i] = idx[j]
                    j += 1
                else:
                    idx[rows + i] = 0
                    nulls += 1
        rows += count
    for i in range(rows):
        if (idx[i] < 0 or idx[i] >= dn) and (max_def == 0 or lev[i] == max_def):
            raise ValueError("parquet page: an index past the dictionary")
    valid = None
    if nulls:
        valid = bytearray((rows + 7) // 8)
        vbits = <unsigned char*><char*>valid
        for i in range(rows):
            if lev[i] == max_def:
                vbits[i >> 3] |= 1 << (i & 7)
    return bytes(offsets), bytes(values), dn, bytes(indexes), (bytes(valid) if valid is not None else None), nulls, rows
