# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled canon/1 canonicalisation: the twin of ``ccrawl.url.canon.canonicalize_py``.

The fast path covers what almost every URL looks like: ASCII, an http(s) scheme, a plain host
name and a numeric port. Percent-normalisation, dot segments, path parameters and the tracking
query filter run here in C. Anything else (non-ASCII text, an IPv6 or percent-encoded host, a
URL with whitespace to trim, a bad scheme or port) goes to the pure-Python twin, which is the one
definition of those cases and raises the errors.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE

cdef object _py = None  # ccrawl.url.canon, imported on first use (it imports this module)

cdef unsigned char _UNRESERVED[256]
cdef unsigned char _ALLOWED[256]
cdef unsigned char _HOSTCHAR[256]
cdef unsigned char _TOKENCHAR[256]
cdef unsigned char _HEXVAL[256]
cdef const char* _UPPER_HEX = b"0123456789ABCDEF"


cdef void _init_tables():
    cdef int c
    for c in range(256):
        _UNRESERVED[c] = 0
        _ALLOWED[c] = 0
        _HOSTCHAR[c] = 0
        _TOKENCHAR[c] = 0
        _HEXVAL[c] = 255
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~":
        _UNRESERVED[c] = 1
        _ALLOWED[c] = 1
    for c in b"!$&'()*+,;=:@/?":
        _ALLOWED[c] = 1
    for c in b"abcdefghijklmnopqrstuvwxyz0123456789-_.":
        _HOSTCHAR[c] = 1
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-":
        _TOKENCHAR[c] = 1
    for c in range(10):
        _HEXVAL[48 + c] = c
    for c in range(6):
        _HEXVAL[65 + c] = 10 + c
        _HEXVAL[97 + c] = 10 + c


_init_tables()


cdef object _helpers():
    global _py
    if _py is None:
        from ccrawl.url import canon as module
        _py = module
    return _py


cdef str _normalize_percent(str component):
    """Step 7 on an ASCII path or query (see ``normalize_percent``)."""
    cdef bytes data = component.encode("ascii")
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = 0, j = 0
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    cdef bint clean = True
    cdef unsigned char c, v
    for i in range(n):
        if s[i] == 37 or not _ALLOWED[s[i]]:
            clean = False
            break
    if clean:
        return component
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 3 * n)
    cdef unsigned char* o = <unsigned char*> PyBytes_AS_STRING(out)
    i = 0
    while i < n:
        c = s[i]
        if c == 37:
            if i + 2 < n and _HEXVAL[s[i + 1]] != 255 and _HEXVAL[s[i + 2]] != 255:
                v = _HEXVAL[s[i + 1]] * 16 + _HEXVAL[s[i + 2]]
                if _UNRESERVED[v]:
                    o[j] = v
                    j += 1
                else:
                    o[j] = 37
                    o[j + 1] = _UPPER_HEX[v >> 4]
                    o[j + 2] = _UPPER_HEX[v & 15]
                    j += 3
                i += 3
                continue
            o[j] = 37
            o[j + 1] = 50  # '2'
            o[j + 2] = 53  # '5'
            j += 3
        elif _ALLOWED[c]:
            o[j] = c
            j += 1
        else:
            o[j] = 37
            o[j + 1] = _UPPER_HEX[c >> 4]
            o[j + 2] = _UPPER_HEX[c & 15]
            j += 3
        i += 1
    return out[:j].decode("ascii")


cdef str _remove_dot_segments(str path):
    if "." not in path:
        return path or "/"
    cdef list out = []
    cdef list segments = path.split("/")[1:]
    cdef Py_ssize_t i, last = len(segments) - 1
    cdef str segment
    for i in range(len(segments)):
        segment = segments[i]
        if segment == ".":
            if i == last:
                out.append("")
        elif segment == "..":
            if out:
                out.pop()
            if i == last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


cdef bint _is_session_token(str value):
    cdef Py_ssize_t n = len(value), i
    cdef bint digit = False
    cdef Py_UCS4 ch
    if n < 16:
        return False
    for i in range(n):
        ch = value[i]
        if ch >= 128 or not _TOKENCHAR[ch]:
            return False
        if 48 <= ch <= 57:
            digit = True
    return digit


cdef class Canonicalizer:
    """canon/1 with one set of tracking rules (names, prefixes, token names; all lowercase)."""

    cdef frozenset names, token_names
    cdef tuple prefixes

    def __init__(self, names, prefixes, token_names):
        self.names = frozenset(names)
        self.prefixes = tuple(prefixes)
        self.token_names = frozenset(token_names)

    cdef bint _removes(self, str param):
        cdef Py_ssize_t eq = param.find("=")
        cdef str name = (param if eq < 0 else param[:eq]).lower()
        if name in self.names:
            return True
        if name in self.token_names and _is_session_token("" if eq < 0 else param[eq + 1:]):
            return True
        return bool(self.prefixes) and name.startswith(self.prefixes)

    cdef str _filter_query(self, str query):
        cdef list fields = query.split("&")
        cdef list kept = [f for f in fields if not self._removes(f)]
        return "&".join(kept) if len(kept) != len(fields) else query

    cdef str _strip_path_params(self, str path):
        if ";" not in path:
            return path
        cdef list segments = path.split("/")
        cdef Py_ssize_t i
        cdef list params, kept
        for i in range(len(segments)):
            segment = segments[i]
            if ";" not in segment:
                continue
            params = segment.split(";")
            kept = [params[0]] + [p for p in params[1:] if not self._removes(p)]
            segments[i] = ";".join(kept)
        return "/".join(segments)

    def filter_query(self, str query):
        """Step 10 on a percent-normalised query."""
        return self._filter_query(query)

    def canonicalize(self, str url):
        """``url`` in canon/1 form; InputError when it is not a crawlable URL."""
        cdef Py_ssize_t n = len(url), i, start, end
        cdef Py_UCS4 ch
        if n == 0 or not url.isascii() or url[0] <= " " or url[n - 1] <= " ":
            return _helpers().canonicalize_py(url)
        if "\t" in url or "\n" in url or "\r" in url:
            return _helpers().canonicalize_py(url)
        cdef str scheme
        if url[:7].lower() == "http://":
            scheme, start = "http", 7
        elif url[:8].lower() == "https://":
            scheme, start = "https", 8
        else:
            return _helpers().canonicalize_py(url)

        # authority ends at the first of "/?#"; the fragment is dropped
        end = n
        cdef Py_ssize_t hash_at = url.find("#", start)
        if hash_at >= 0:
            end = hash_at
        cdef Py_ssize_t q = url.find("?", start, end)
        cdef str query = None
        if q >= 0:
            query = url[q + 1:end]
            end = q
        cdef Py_ssize_t slash = url.find("/", start, end)
        cdef str authority, path
        if slash < 0:
            authority, path = url[start:end], ""
        else:
            authority, path = url[start:slash], url[slash:end]
        at = authority.rfind("@")
        if at >= 0:
            authority = authority[at + 1:]
        if authority.startswith("[") or "%" in authority:
            return _helpers().canonicalize_py(url)
        cdef str host, port
        host, _, port = authority.partition(":")
        host = host.lower()
        if host.endswith("."):
            host = host[:len(host) - 1]
        if not host or ".." in host or host.startswith(".") or host.endswith("."):
            return _helpers().canonicalize_py(url)
        for i in range(len(host)):
            ch = host[i]
            if not _HOSTCHAR[ch]:
                return _helpers().canonicalize_py(url)
        if port:
            if not port.isdigit() or len(port) > 5 or not 0 < int(port) <= 65535:
                return _helpers().canonicalize_py(url)
            port = str(int(port))
            if (scheme == "http" and port == "80") or (scheme == "https" and port == "443"):
                port = ""

        path = _remove_dot_segments(self._strip_path_params(_normalize_percent(path)))
        if query:
            query = self._filter_query(_normalize_percent(query))
        cdef list out = [scheme, "://", host]
        if port:
            out.append(":")
            out.append(port)
        out.append(path)
        if query:
            out.append("?")
            out.append(query)
        return "".join(out)
