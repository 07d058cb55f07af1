# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled range planning; the rule and the pure-Python twin are in ccrawl/net/ranges.py.

Locations are packed into a C array of (file rank, offset, length) and sorted with qsort, which
replaces sorting a million Python tuples. Anything that is not a plain (str, int, int) tuple with
valid values goes through the twin's own ``location`` check, so both raise the same errors.
"""

from libc.stdint cimport INT64_MAX, int64_t
from libc.stdlib cimport free, malloc, qsort, realloc


cdef struct Rec:
    int64_t file  # first the file's id (order of first sight), then its rank by name
    int64_t offset
    int64_t length


cdef int _compare(const void* a, const void* b) noexcept nogil:
    cdef const Rec* x = <const Rec*>a
    cdef const Rec* y = <const Rec*>b
    if x.file != y.file:
        return -1 if x.file < y.file else 1
    if x.offset != y.offset:
        return -1 if x.offset < y.offset else 1
    if x.length != y.length:
        return -1 if x.length < y.length else 1
    return 0


cdef int64_t _clamp(object value):
    # A limit past int64 behaves as unlimited, as the twin's arbitrary-size ints do.
    return INT64_MAX if value > INT64_MAX else <int64_t>value


def plan_groups(locations, gap=1 << 20, max_span=16 << 20):
    """The groups of ranged reads that cover ``locations`` (see ccrawl.net.ranges)."""
    from ccrawl.net.ranges import Group, check_limits, location

    check_limits(gap, max_span)
    # Group's generated __new__ only packs its arguments; calling tuple.__new__ skips a Python frame.
    new_tuple = tuple.__new__
    cdef int64_t cgap = _clamp(gap)
    cdef int64_t cspan = _clamp(max_span)
    cdef dict ids = {}
    cdef list names = []
    cdef Py_ssize_t cap = 1024, n = 0, index = 0, k
    cdef Rec* recs = <Rec*>malloc(cap * sizeof(Rec))
    cdef Rec* grown
    cdef int64_t* ranks = NULL
    cdef int64_t off, length, end, cur_start = 0, cur_end = 0, cur_file = -1
    cdef bint fast
    cdef list groups = []
    cdef list members = []
    if recs == NULL:
        raise MemoryError()
    try:
        for item in locations:
            fast = False
            if type(item) is tuple and len(<tuple>item) == 3:
                f = (<tuple>item)[0]
                o = (<tuple>item)[1]
                ln = (<tuple>item)[2]
                if type(f) is str and len(<str>f) > 0 and type(o) is int and type(ln) is int:
                    if 0 <= o <= INT64_MAX and 0 < ln <= INT64_MAX:
                        off = o
                        length = ln
                        fast = off <= INT64_MAX - length
            if not fast:
                f, off, length = location(index, item)
            if n == cap:
                cap *= 2
                grown = <Rec*>realloc(recs, cap * sizeof(Rec))
                if grown == NULL:
                    raise MemoryError()
                recs = grown
            fid = ids.get(f)
            if fid is None:
                fid = len(names)
                ids[f] = fid
                names.append(f)
            recs[n].file = <int64_t>fid
            recs[n].offset = off
            recs[n].length = length
            n += 1
            index += 1

        order = sorted(range(len(names)), key=names.__getitem__)
        ranks = <int64_t*>malloc((len(names) + 1) * sizeof(int64_t))
        if ranks == NULL:
            raise MemoryError()
        for k in range(len(names)):
            ranks[<Py_ssize_t>order[k]] = k
        for k in range(n):
            recs[k].file = ranks[recs[k].file]
        qsort(recs, n, sizeof(Rec), _compare)

        for k in range(n):
            if k > 0 and _compare(&recs[k], &recs[k - 1]) == 0:
                continue  # an identical location is read once
            off = recs[k].offset
            end = off + recs[k].length
            if (
                members
                and recs[k].file == cur_file
                and off - cur_end <= cgap
                and (end if end > cur_end else cur_end) - cur_start <= cspan
            ):
                members.append((off, recs[k].length))
                if end > cur_end:
                    cur_end = end
                continue
            if members:
                groups.append(new_tuple(Group, (names[order[cur_file]], cur_start, cur_end, tuple(members))))
            cur_file = recs[k].file
            cur_start = off
            cur_end = end
            members = [(off, recs[k].length)]
        if members:
            groups.append(new_tuple(Group, (names[order[cur_file]], cur_start, cur_end, tuple(members))))
        return groups
    finally:
        free(recs)
        free(ranks)
