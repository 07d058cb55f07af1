# cython: language_level=3, boundscheck=False, wraparound=False
# distutils: libraries = z
"""Compiled gzip member scan; the contract and the pure-Python twin are in ccrawl/warc/members.py.

zlib's ``inflate`` runs straight over each chunk read from the stream into one reused 64 KiB
scratch buffer, and ``inflateReset`` starts the next member on the same state, so a member costs
no Python objects beyond the (offset, length) tuple it yields.
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset


cdef extern from "zlib.h":
    ctypedef struct z_stream:
        unsigned char* next_in  # z_const is empty unless ZLIB_CONST; inflate never writes it
        unsigned int avail_in
        unsigned char* next_out
        unsigned int avail_out
        const char* msg

    int Z_OK
    int Z_STREAM_END
    int Z_NEED_DICT
    int Z_BUF_ERROR
    int Z_DATA_ERROR
    int Z_STREAM_ERROR
    int Z_MEM_ERROR
    int Z_NO_FLUSH

    int inflateInit2(z_stream* strm, int window_bits)
    int inflate(z_stream* strm, int flush)
    int inflateReset(z_stream* strm)
    int inflateEnd(z_stream* strm)


cdef enum:
    SCRATCH = 65536
    GZIP_WBITS = 31  # 16 + 15: gzip header and trailer, 32 KiB window


cdef str _reason(z_stream* strm, int err):
    # What CPython's zlib module puts after "while decompressing data: ", so both twins agree.
    if strm.msg != NULL:
        return (<bytes>strm.msg).decode("utf-8", "replace")
    if err == Z_BUF_ERROR:
        return "incomplete or truncated stream"
    if err == Z_STREAM_ERROR:
        return "inconsistent stream state"
    if err == Z_DATA_ERROR:
        return "invalid input data"
    return f"Error {err} while decompressing data"


cdef class MemberIterator:
    """Iterator of (offset, length) over the gzip members of a binary stream."""

    cdef z_stream strm
    cdef bint ready
    cdef bint finished
    cdef object stream
    cdef Py_ssize_t chunk_size
    cdef int64_t start
    cdef int64_t member_start
    cdef int64_t fed
    cdef bytes chunk
    cdef unsigned char* scratch

    def __cinit__(self, stream, Py_ssize_t chunk_size, int64_t start):
        if not 0 < chunk_size <= 1 << 30:  # members.MAX_CHUNK_SIZE: avail_in is 32 bits
            raise ValueError(f"chunk_size must be between 1 and {1 << 30} bytes, got {chunk_size}")
        memset(&self.strm, 0, sizeof(z_stream))
        self.scratch = <unsigned char*>malloc(SCRATCH)
        if self.scratch == NULL:
            raise MemoryError()
        if inflateInit2(&self.strm, GZIP_WBITS) != Z_OK:
            raise MemoryError("zlib could not start an inflate stream")
        self.ready = True
        self.finished = False
        self.stream = stream
        self.chunk_size = chunk_size
        self.start = start
        self.member_start = start
        self.fed = 0
        self.chunk = b""

    def __dealloc__(self):
        if self.ready:
            inflateEnd(&self.strm)
        if self.scratch != NULL:
            free(self.scratch)

    def __iter__(self):
        return self

    def __next__(self):
        cdef int err
        cdef int64_t offset, length
        if self.finished:
            raise StopIteration
        while True:
            if self.strm.avail_in == 0:
                data = self.stream.read(self.chunk_size)
                if not data:
                    self.finished = True
                    if self.fed:
                        from ccrawl.warc.members import truncated_error

                        raise truncated_error(self.stream, self.member_start, self.member_start + self.fed)
                    raise StopIteration
                self.chunk = data if type(data) is bytes else bytes(data)
                self.strm.next_in = <unsigned char*><char*>self.chunk
                self.strm.avail_in = <unsigned int>len(self.chunk)
                self.fed += len(self.chunk)
            while True:
                self.strm.next_out = self.scratch
                self.strm.avail_out = SCRATCH
                err = inflate(&self.strm, Z_NO_FLUSH)
                if err == Z_STREAM_END:
                    # Bytes left in the chunk belong to the next member.
                    length = self.fed - self.strm.avail_in
                    offset = self.member_start
                    self.member_start += length
                    self.fed = self.strm.avail_in
                    inflateReset(&self.strm)
                    return (offset, length)
                if err == Z_BUF_ERROR:
                    break  # no progress possible without more input
                if err != Z_OK:
                    self.finished = True
                    from ccrawl.warc.members import corrupt_error

                    raise corrupt_error(self.stream, self.member_start, self.start, _reason(&self.strm, err))
                if self.strm.avail_in == 0 and self.strm.avail_out != 0:
                    break


def iter_members(stream, Py_ssize_t chunk_size=1 << 20, int64_t start=0):
    """Yield (offset, length) of every gzip member in ``stream`` (see ccrawl.warc.members)."""
    return MemberIterator(stream, chunk_size, start)
