# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled edge tally: ``from<TAB>to`` lines counted into two uint32 arrays; the contract and the
pure-Python twin are in ``ccrawl/commoncrawl/edgecount.py``.

The loop runs without the GIL over each inflated block: two decimal numbers a line, a bounds check
against the vertex count, two increments. With ``atomic`` the increments are relaxed atomic adds,
for arrays in shared memory that several processes count into at once (an add is never lost, and
nothing orders it against another counter's, which a count does not need).
"""

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy


cdef extern from *:
    """
    static inline void ccrawl_edge_inc(uint32_t* slot) {
        __atomic_fetch_add(slot, 1u, __ATOMIC_RELAXED);
    }
    static inline void ccrawl_edge_add(uint32_t* slot, uint32_t n) {
        __atomic_fetch_add(slot, n, __ATOMIC_RELAXED);
    }
    """
    void ccrawl_edge_inc(uint32_t* slot) nogil
    void ccrawl_edge_add(uint32_t* slot, uint32_t n) nogil
    void __builtin_prefetch(const void* addr, int rw, int locality) nogil


cdef uint32_t RUN_MAX = 0xFFFFFFFF  # a run's count is one uint32 add

cdef enum:
    TAIL_MAX = 64          # no valid line is longer (two 20-digit numbers, a tab, a CR)
    OK = 0
    BAD_LINE = 1
    BEYOND = 2
    TOO_LONG = 3
    DIGITS_MAX = 19        # more digits than any uint64: the id is beyond any vertex count
    BATCH = 64             # edges parsed (their counters prefetched) before they are counted


cdef class EdgeTally:
    """Counts the lines of one edge file's inflated bytes into ``din`` / ``dout`` (see the twin)."""

    cdef uint32_t[::1] din
    cdef uint32_t[::1] dout
    cdef readonly uint64_t vertices
    cdef readonly bint atomic
    cdef readonly unsigned long long edges
    cdef readonly unsigned long long lines
    cdef readonly unsigned long long blank
    cdef char tail[TAIL_MAX]
    cdef Py_ssize_t tail_len
    cdef bint tail_long

    def __cinit__(self, uint32_t[::1] din not None, uint32_t[::1] dout not None, bint atomic=False):
        if din.shape[0] != dout.shape[0]:
            raise ValueError("din and dout must have the same length (the vertex count)")
        self.din = din
        self.dout = dout
        self.vertices = <uint64_t>din.shape[0]
        self.atomic = atomic
        self.edges = 0
        self.lines = 0
        self.blank = 0
        self.tail_len = 0
        self.tail_long = False

    cdef int _line(self, const unsigned char* p, Py_ssize_t n) noexcept nogil:
        """One line without its newline, the careful way: 0, or the error code."""
        cdef uint64_t a = 0, b = 0
        cdef Py_ssize_t i = 0, start
        cdef unsigned char c
        cdef bint huge = False
        if n > TAIL_MAX:
            return TOO_LONG
        if n and p[n - 1] == 13:  # CR of a CRLF line
            n -= 1
        if n == 0:
            self.blank += 1
            return OK
        while i < n:
            c = p[i] - 48
            if c > 9:
                break
            a = a * 10 + c
            i += 1
        if i > DIGITS_MAX:
            huge = True
        if i == 0 or i == n or p[i] != 9:
            return BAD_LINE
        i += 1
        start = i
        while i < n:
            c = p[i] - 48
            if c > 9:
                break
            b = b * 10 + c
            i += 1
        if i == start or i != n:
            return BAD_LINE
        if huge or i - start > DIGITS_MAX or a >= self.vertices or b >= self.vertices:
            return BEYOND
        if self.atomic:
            ccrawl_edge_inc(&self.dout[a])
            ccrawl_edge_inc(&self.din[b])
        else:
            self.dout[a] += 1
            self.din[b] += 1
        self.edges += 1
        return OK

    cdef void _flush(self, uint64_t* dst, Py_ssize_t k) noexcept nogil:
        """The in-degree adds of a batch (their counters were prefetched as the batch was parsed)."""
        cdef Py_ssize_t j
        cdef uint32_t* din = &self.din[0]
        if self.atomic:
            for j in range(k):
                ccrawl_edge_inc(&din[dst[j]])
        else:
            for j in range(k):
                din[dst[j]] += 1
        self.edges += k

    cdef inline void _flush_run(self, uint64_t a, uint32_t n) noexcept nogil:
        """``n`` edges from ``a`` in a row: one out-degree add (edge files are sorted by source)."""
        if n == 0:
            return
        if self.atomic:
            ccrawl_edge_add(&self.dout[a], n)
        else:
            self.dout[a] += n

    cdef int _block(self, const unsigned char* p, Py_ssize_t n, Py_ssize_t* bad_at, Py_ssize_t* bad_len) noexcept nogil:
        """Every whole line of ``p[:n]``; the bytes after the last newline go to the tail.

        The counters of an in-degree are spread over the whole array, so each add is a cache (and
        TLB) miss: lines are parsed ``BATCH`` at a time with their counters prefetched, and the adds
        of a batch then find them on their way in (1.9x on a 50 M-vertex graph, and 2.5x more with
        the arrays on huge pages: bench/README.md). An out-degree is added once per run of lines
        with the same source (the files are sorted by source: ~10 lines a run in Common Crawl's host
        graph), which also spares ``-j`` most of its atomic adds; a file in any order counts the same.
        """
        cdef Py_ssize_t pos = 0, end, i, k = 0
        cdef int err
        cdef uint64_t a, b
        cdef unsigned char c
        cdef uint64_t dst[BATCH]
        cdef uint32_t* din = &self.din[0]
        cdef uint32_t* dout = &self.dout[0]
        cdef uint64_t vertices = self.vertices
        cdef uint64_t run_a = 0
        cdef uint32_t run_n = 0
        cdef unsigned long long lines = 0
        while pos < n:
            # the common line, parsed inline: digits TAB digits LF
            i = pos
            a = 0
            while i < n:
                c = p[i] - 48
                if c > 9:
                    break
                a = a * 10 + c
                i += 1
            if i < n and p[i] == 9 and i > pos and i - pos <= DIGITS_MAX:
                i += 1
                end = i
                b = 0
                while i < n:
                    c = p[i] - 48
                    if c > 9:
                        break
                    b = b * 10 + c
                    i += 1
                if i < n and p[i] == 10 and i > end and i - end <= DIGITS_MAX:
                    lines += 1
                    if a >= vertices or b >= vertices:
                        self._flush(dst, k)
                        self._flush_run(run_a, run_n)
                        self.lines += lines
                        bad_at[0] = pos
                        bad_len[0] = i - pos
                        return BEYOND
                    __builtin_prefetch(&din[b], 1, 1)
                    if a != run_a or run_n == RUN_MAX:
                        self._flush_run(run_a, run_n)
                        __builtin_prefetch(&dout[a], 1, 1)
                        run_a = a
                        run_n = 0
                    run_n += 1
                    dst[k] = b
                    k += 1
                    if k == BATCH:
                        self._flush(dst, k)
                        k = 0
                    pos = i + 1
                    continue
            # anything else: find the line's end and take the careful path (or keep the tail)
            end = pos
            while end < n and p[end] != 10:
                end += 1
            if end == n:
                break
            lines += 1
            self._flush(dst, k)
            k = 0
            self._flush_run(run_a, run_n)
            run_n = 0
            err = self._line(p + pos, end - pos)
            if err != OK:
                self.lines += lines
                bad_at[0] = pos
                bad_len[0] = end - pos
                return err
            pos = end + 1
        self._flush(dst, k)
        self._flush_run(run_a, run_n)
        self.lines += lines
        bad_at[0] = pos  # start of the unfinished last line
        return OK

    cdef _fail(self, int err, const unsigned char* p, Py_ssize_t n):
        from ccrawl.commoncrawl.edgecount import line_error

        raise line_error(err, self.lines, bytes(p[:min(n, 200)]), self.vertices)

    def feed(self, const unsigned char[::1] data not None):
        """Count the whole lines of ``data`` (inflated bytes); a line cut at the end waits for the next block."""
        cdef Py_ssize_t n = data.shape[0], pos = 0, room, take, bad_at = 0, bad_len = 0
        cdef const unsigned char* p
        cdef int err
        if n == 0:
            return
        p = &data[0]
        if self.tail_len or self.tail_long:
            # finish the line the previous block cut
            while pos < n and p[pos] != 10:
                pos += 1
            if not self.tail_long:
                room = TAIL_MAX - self.tail_len
                take = pos if pos <= room else room
                memcpy(self.tail + self.tail_len, p, take)
                self.tail_len += take
                self.tail_long = pos > room
            if pos == n:
                return
            self.lines += 1
            if self.tail_long:
                self.tail_long = False
                self._fail(TOO_LONG, <const unsigned char*>self.tail, self.tail_len)
            err = self._line(<const unsigned char*>self.tail, self.tail_len)
            if err != OK:
                self._fail(err, <const unsigned char*>self.tail, self.tail_len)
            self.tail_len = 0
            pos += 1
        with nogil:
            err = self._block(p + pos, n - pos, &bad_at, &bad_len)
        if err != OK:
            self._fail(err, p + pos + bad_at, bad_len)
        bad_at += pos
        take = n - bad_at
        self.tail_long = take > TAIL_MAX
        if self.tail_long:
            take = TAIL_MAX
        memcpy(self.tail, p + bad_at, take)
        self.tail_len = take

    def finish(self):
        """The end of the file: count a last line that has no newline."""
        cdef int err
        cdef Py_ssize_t n = self.tail_len
        if self.tail_long:
            self.lines += 1
            self.tail_long = False
            self.tail_len = 0
            self._fail(TOO_LONG, <const unsigned char*>self.tail, n)
        if n:
            self.lines += 1
            self.tail_len = 0
            err = self._line(<const unsigned char*>self.tail, n)
            if err != OK:
                self._fail(err, <const unsigned char*>self.tail, n)
