# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled public-suffix lookup and FNV-1a 64 shard hash: twins of ``ccrawl.url.domain``.

The rule tables are built by ``ccrawl.url.domain.parse_psl`` and handed to :class:`SuffixTable`,
so both implementations read one file through one parser. Non-ASCII hosts are converted with the
module's ``ascii_host`` (IDNA is not a hot path: Common Crawl hosts are punycode already).
"""

from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef uint64_t FNV64_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV64_PRIME = 0x100000001B3ULL

cdef object _py = None  # ccrawl.url.domain, imported on first use (it imports this module)


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


cdef str _host_of(str s):
    cdef Py_ssize_t at, cut, close
    s = s.strip()
    at = s.find("://")
    if at >= 0:
        s = s[at + 3:]
    elif s.startswith("//"):
        s = s[2:]
    for sep in ("/", "?", "#"):
        cut = s.find(sep)
        if cut >= 0:
            s = s[:cut]
    s = s.rpartition("@")[2]
    cdef str host
    if s.startswith("["):
        close = s.find("]")
        host = s[1:close] if close > 0 else ""
    else:
        host = s.partition(":")[0]
    host = host.lower()
    if host.endswith("."):
        host = host[:len(host) - 1]
    return host or None


def host_of(str url_or_host):
    """The host of an absolute URL, host, ``host:port`` or ``[ipv6]:port``; None when there is none."""
    return _host_of(url_or_host)


cdef bint _not_a_domain(str host):
    if ":" in host or host.startswith(".") or ".." in host:
        return True
    cdef str last = host[host.rfind(".") + 1:]
    return last.isdigit()


cdef class SuffixTable:
    """The Public Suffix List rules: exact, wildcard base and exception, each ASCII rule -> is_private."""

    cdef dict exact, wildcard, exception

    def __init__(self, dict exact, dict wildcard, dict exception):
        self.exact = exact
        self.wildcard = wildcard
        self.exception = exception

    cdef int _suffix_labels(self, str name, bint include_private):
        cdef Py_ssize_t start = 0, dot
        cdef int labels = name.count(".") + 1
        cdef object private
        cdef str candidate
        while True:
            candidate = name[start:]
            dot = name.find(".", start)
            private = self.exception.get(candidate)
            if private is not None and (include_private or not private):
                return labels - 1
            private = self.exact.get(candidate)
            if private is not None and (include_private or not private):
                return labels
            if dot < 0:
                return 1
            private = self.wildcard.get(name[dot + 1:])
            if private is not None and (include_private or not private):
                return labels
            start = dot + 1
            labels -= 1

    def suffix_labels(self, str ascii_name, bint include_private=True):
        """How many trailing labels of ``ascii_name`` form its public suffix (at least 1)."""
        return self._suffix_labels(ascii_name, include_private)

    cdef tuple _registered(self, str host, bint include_private):
        if _not_a_domain(host):
            return None
        cdef str name = host if host.isascii() else _helpers().ascii_host(host)
        if name is None or ".." in name or name.startswith(".") or name.endswith("."):
            return None
        cdef int keep = self._suffix_labels(name, include_private) + 1
        cdef Py_ssize_t cut = len(name)
        cdef int k = 0
        for k in range(keep):  # find the keep-th dot from the right without splitting the name
            cut = name.rfind(".", 0, cut)
            if cut < 0:
                break
        if cut >= 0:
            ascii_domain = name[cut + 1:]
        elif k == keep - 1:
            ascii_domain = name  # exactly `keep` labels
        else:
            return None
        if name is host:
            return (ascii_domain, ascii_domain)
        display = ".".join(host.translate(_helpers()._IDEOGRAPHIC_DOTS).split(".")[-keep:])
        return (display, ascii_domain)

    def registered_domain(self, host, bint include_private=True):
        """Registered domain (eTLD+1) of a host, ``host:port`` or URL; None when it has none."""
        if not host:
            return None
        cdef str name = _host_of(host)
        if name is None:
            return None
        found = self._registered(name, include_private)
        return found[0] if found is not None else None

    cpdef str shard_key(self, str url_or_host):
        """The registered domain in ASCII, else the lowercased ASCII host, else ``""`` (no host)."""
        cdef str host = _host_of(url_or_host)
        if host is None:
            return ""
        found = self._registered(host, True)
        if found is not None:
            return found[1]
        if host.isascii():
            return host
        return _helpers().ascii_host(host) or host

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
