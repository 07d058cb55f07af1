# cython: language_level=3, boundscheck=False, wraparound=False
"""Whole gzip members inflated in one call by libdeflate; the twin is ``ccrawl.warc.inflate``.

:class:`Inflater` is the fast path of ``ccrawl.warc.source.GzipSource``: at a member boundary it
inflates the member that starts there into a reused scratch buffer (libdeflate checks the deflate
stream, the CRC-32 and the length in the trailer), appends the bytes to the reader's window and
says how many compressed bytes the member took. Anything it does not take whole (a member cut by the
end of the bytes read so far, one that inflates past ``cap``, a damaged one, a header with a CRC of
its own) it leaves untouched, and the reader's streaming inflater takes it from the same place, so
damage is reported exactly as before.

libdeflate is loaded at import with ``dlopen`` (``libdeflate.so.0``, Debian's ``libdeflate0``; the
``CCRAWL_LIBDEFLATE`` environment variable names the file to load instead, and a name that does
not load turns the fast path off). It ships no header here, so the four
entry points are declared below from its stable C API (v1.0 on). Without the library the import fails
with ImportError and the reader streams every member, as it does without the native core.
"""

import os

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from posix.dlfcn cimport RTLD_LOCAL, RTLD_NOW, dlopen, dlsym


cdef extern from "string.h" nogil:
    void* memmem(const void* haystack, size_t haystacklen, const void* needle, size_t needlelen)


ctypedef void* (*alloc_fn)() noexcept nogil
ctypedef void (*free_fn)(void* d) noexcept nogil
ctypedef int (*gzip_ex_fn)(void* d, const void* src, size_t src_len, void* out, size_t out_avail,
                           size_t* src_used, size_t* out_made) noexcept nogil

cdef enum:
    LIBDEFLATE_SUCCESS = 0
    FHCRC = 0x02
    FRESERVED = 0xE0
    GZIP_MIN = 18  # a 10-byte header and an 8-byte trailer: nothing shorter is a whole member

cdef alloc_fn _alloc = NULL
cdef free_fn _free = NULL
cdef gzip_ex_fn _gzip_ex = NULL


cdef int _load() except -1:
    global _alloc, _free, _gzip_ex
    wanted = os.environ.get("CCRAWL_LIBDEFLATE")
    names = [wanted] if wanted else ["libdeflate.so.0", "libdeflate.so"]
    cdef void* handle = NULL
    for name in names:
        handle = dlopen(os.fsencode(name), RTLD_NOW | RTLD_LOCAL)
        if handle != NULL:
            break
    if handle == NULL:
        raise ImportError(f"libdeflate is not installed (tried {', '.join(names)})")
    _alloc = <alloc_fn>dlsym(handle, b"libdeflate_alloc_decompressor")
    _free = <free_fn>dlsym(handle, b"libdeflate_free_decompressor")
    _gzip_ex = <gzip_ex_fn>dlsym(handle, b"libdeflate_gzip_decompress_ex")
    if _alloc == NULL or _free == NULL or _gzip_ex == NULL:
        raise ImportError("libdeflate lacks libdeflate_gzip_decompress_ex (it needs version 1.0 or later)")
    return 0


_load()


cdef class Inflater:
    """One decompressor and one scratch buffer of ``cap`` bytes; not shared between threads.

    :meth:`member` inflates a member onto the reader's window. :meth:`inflate` inflates one into the
    scratch buffer and keeps it there (``made`` bytes), where :meth:`find` and :meth:`slice` read it
    and :meth:`spill` appends it to a window: the reader frames a record that fills its member
    straight from the scratch buffer, copying only the parts it keeps.
    """

    cdef void* dec
    cdef char* scratch
    cdef readonly Py_ssize_t cap
    cdef readonly Py_ssize_t made

    def __cinit__(self, Py_ssize_t cap):
        if cap <= 0:
            raise ValueError("cap must be positive")
        self.cap = cap
        self.dec = _alloc()
        self.scratch = <char*>malloc(cap)
        if self.dec == NULL or self.scratch == NULL:
            raise MemoryError()

    def __dealloc__(self):
        if self.dec != NULL:
            _free(self.dec)
        free(self.scratch)

    def member(self, const unsigned char[::1] raw not None, Py_ssize_t pos, bytearray buf not None):
        """Inflate the member at ``raw[pos:]`` onto ``buf``: (True, compressed size, inflated size), or
        (False, 0, 0) with ``buf`` untouched when it is not whole, not valid or larger than ``cap``."""
        ok, used, made = self.inflate(raw, pos)
        if ok:
            self.spill(buf)
        return ok, used, made

    def inflate(self, const unsigned char[::1] raw not None, Py_ssize_t pos):
        """Inflate the member at ``raw[pos:]`` into the scratch buffer: as :meth:`member`, without
        appending it anywhere (``made`` is 0 after a failure)."""
        cdef Py_ssize_t avail = raw.shape[0] - pos
        cdef size_t used = 0, made = 0
        cdef int result
        self.made = 0
        if pos < 0 or avail < GZIP_MIN:
            return False, 0, 0
        if raw[pos] != 0x1F or raw[pos + 1] != 0x8B or raw[pos + 2] != 8 or raw[pos + 3] & (FHCRC | FRESERVED):
            return False, 0, 0
        with nogil:
            result = _gzip_ex(self.dec, &raw[pos], <size_t>avail, self.scratch, <size_t>self.cap, &used, &made)
        if result != LIBDEFLATE_SUCCESS:
            return False, 0, 0
        self.made = <Py_ssize_t>made
        return True, <Py_ssize_t>used, <Py_ssize_t>made

    def spill(self, bytearray buf not None):
        """Append the inflated member to ``buf``."""
        cdef Py_ssize_t size
        if self.made:
            size = PyByteArray_GET_SIZE(buf)
            PyByteArray_Resize(buf, size + self.made)
            memcpy(PyByteArray_AS_STRING(buf) + size, self.scratch, self.made)

    def find(self, const unsigned char[::1] needle not None, Py_ssize_t start, Py_ssize_t stop):
        """Where ``needle`` first lies wholly inside ``[start, stop)`` of the member, else -1
        (``bytes.find``'s rule, with ``stop`` cut to the member's end)."""
        cdef Py_ssize_t n = needle.shape[0]
        cdef const char* hit
        if start < 0:
            start = 0
        if stop > self.made:
            stop = self.made
        if n == 0:
            return start if start <= stop else -1
        if stop - start < n:
            return -1
        hit = <const char*>memmem(self.scratch + start, <size_t>(stop - start), &needle[0], <size_t>n)
        return -1 if hit == NULL else <Py_ssize_t>(hit - self.scratch)

    def slice(self, Py_ssize_t start, Py_ssize_t stop):
        """``bytes`` of ``[start, stop)`` of the member (cut to it, as slicing cuts)."""
        if start < 0:
            start = 0
        if stop > self.made:
            stop = self.made
        if stop <= start:
            return b""
        return PyBytes_FromStringAndSize(self.scratch + start, stop - start)
