# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled SURT keys: the same steps as ``ccrawl.url.surt.surt_bytes`` with the byte loops in C.

The rare branches (ARC ``filedesc`` lines, non-ASCII hosts, numeric hosts, session identifiers in
the query or an ASP.NET session segment in the path) call the pure-Python helpers of
``ccrawl.url.surt``, so both implementations share one definition of those rules.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE

cdef object _py = None  # ccrawl.url.surt, imported on first use (it imports this module)

cdef unsigned char _SAFE[256]
cdef unsigned char _HEX[256]
cdef const char* _UPPER_HEX = b"0123456789ABCDEF"


cdef void _init_tables():
    cdef int c
    cdef bytes safe = (b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~"
                       b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~")
    for c in range(256):
        _SAFE[c] = 0
        _HEX[c] = 255
    for c in safe:
        _SAFE[c] = 1
    for c in range(10):
        _HEX[48 + c] = c
    for c in range(6):
        _HEX[65 + c] = 10 + c
        _HEX[97 + c] = 10 + c


_init_tables()


cdef object _helpers():
    global _py
    if _py is None:
        from ccrawl.url import surt as module
        _py = module
    return _py


cdef bytes _unescape_once(bytes data):
    """One percent-decoding pass; returns ``data`` itself when it holds no valid escape."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = 0, j = 0
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    cdef bint found = False
    for i in range(n - 2):
        if s[i] == 37 and _HEX[s[i + 1]] != 255 and _HEX[s[i + 2]] != 255:
            found = True
            break
    if not found:
        return data
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n)
    cdef unsigned char* o = <unsigned char*> PyBytes_AS_STRING(out)
    i = 0
    while i < n:
        if s[i] == 37 and i + 2 < n and _HEX[s[i + 1]] != 255 and _HEX[s[i + 2]] != 255:
            o[j] = _HEX[s[i + 1]] * 16 + _HEX[s[i + 2]]
            i += 3
        else:
            o[j] = s[i]
            i += 1
        j += 1
    return out[:j]


cdef bytes _unescape_repeatedly(bytes data):
    cdef bytes decoded
    while True:
        decoded = _unescape_once(data)
        if decoded is data:
            return data
        data = decoded


cdef bytes _escape_once(bytes data):
    """Percent-encode every byte outside the safe table, uppercase hex; ``data`` itself when clean."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i, extra = 0, j = 0
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    for i in range(n):
        if not _SAFE[s[i]]:
            extra += 2
    if extra == 0:
        return data
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n + extra)
    cdef unsigned char* o = <unsigned char*> PyBytes_AS_STRING(out)
    for i in range(n):
        if _SAFE[s[i]]:
            o[j] = s[i]
            j += 1
        else:
            o[j] = 37
            o[j + 1] = _UPPER_HEX[s[i] >> 4]
            o[j + 2] = _UPPER_HEX[s[i] & 15]
            j += 3
    return out


cdef bint _is_ascii(bytes data):
    cdef Py_ssize_t i
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    for i in range(PyBytes_GET_SIZE(data)):
        if s[i] >= 128:
            return False
    return True


cdef bint _digits_and_dots(bytes data):
    cdef Py_ssize_t i, n = PyBytes_GET_SIZE(data)
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    if n == 0:
        return False
    for i in range(n):
        if not (48 <= s[i] <= 57 or s[i] == 46):
            return False
    return True


cdef Py_ssize_t _scheme_end(bytes raw):
    """Index of the ``:`` closing a leading scheme, or -1 when the URL has none."""
    cdef Py_ssize_t i, n = PyBytes_GET_SIZE(raw)
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(raw)
    cdef unsigned char c
    if n == 0 or not (65 <= s[0] <= 90 or 97 <= s[0] <= 122):
        return -1
    for i in range(1, n):
        c = s[i]
        if c == 58:
            return i
        if not (65 <= c <= 90 or 97 <= c <= 122 or 48 <= c <= 57 or c == 43 or c == 45 or c == 46):
            return -1
    return -1


cdef Py_ssize_t _repeated_http_end(bytes raw):
    """Start of the last of a run of leading ``http://``/``https://`` prefixes, -1 when none."""
    cdef Py_ssize_t pos = 0, last = -1
    while True:
        if raw[pos:pos + 7] == b"http://":
            last = pos
            pos += 7
        elif raw[pos:pos + 8] == b"https://":
            last = pos
            pos += 8
        else:
            break
    return last


cdef bytes _normalize_path(bytes path):
    if not path:
        return b"/"
    if path[0] == 47 and b"//" not in path and b"/." not in path:
        return path  # no empty or dot segments: nothing to resolve
    cdef list kept = []
    cdef bytes segment
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(segment)
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    cdef list out = [b""]
    cdef Py_ssize_t k
    for k in range(len(kept) - 1):
        segment = kept[k]
        if segment:
            out.append(segment)
    out.append(kept[len(kept) - 1])
    return b"/".join(out)


cdef bytes _sort_query(bytes query):
    if len(query) <= 1:
        return query
    if b"&" not in query:
        return query
    fields = sorted([tuple(arg.split(b"=", 1)) for arg in query.split(b"&")])
    return b"&".join([b"=".join(f) for f in fields])


cdef bytes _canonical_host(bytes host):
    host = _unescape_repeatedly(host)
    if not _is_ascii(host):
        try:
            host = host.decode("utf-8", "ignore").encode("idna")
        except ValueError:
            pass
    if b".." in host:
        host = host.replace(b"..", b".")
    host = host.strip(b".")
    if _digits_and_dots(host):
        ip = _helpers().numeric_host(host)
        if ip is not None:
            return ip
    return _escape_once(host.lower())


cdef bytes _strip_www(bytes host):
    cdef Py_ssize_t i = 3, n = PyBytes_GET_SIZE(host)
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(host)
    if n < 4 or s[0] != 119 or s[1] != 119 or s[2] != 119:
        return host
    while i < n and 48 <= s[i] <= 57:
        i += 1
    if i < n and s[i] == 46:
        return host[i + 1:]
    return host


def surt_bytes(bytes url):
    """SURT of a URL given as UTF-8 bytes (compiled twin of ``ccrawl.url.surt.surt_bytes``)."""
    if url.startswith(b"filedesc"):
        return url
    cdef bytes raw = url.strip()
    if b"\t" in raw or b"\n" in raw or b"\r" in raw:
        raw = raw.translate(None, b"\t\n\r")
    if not raw:
        from ccrawl.errors import InputError
        raise InputError("empty URL: give an absolute URL such as https://example.com/")
    cdef Py_ssize_t colon = _scheme_end(raw)
    if colon < 0:
        raw = b"http://" + raw
        colon = 4
    cdef Py_ssize_t last = _repeated_http_end(raw)
    if last > 0:
        raw = raw[last:]
        colon = raw.index(b":")

    # split: scheme, netloc, path, query (the fragment is dropped)
    cdef bytes scheme = raw[:colon]
    cdef bytes rest = raw[colon + 1:]
    cdef Py_ssize_t at = rest.find(b"#")
    if at >= 0:
        rest = rest[:at]
    cdef bytes query = None, netloc = b"", path = None, host = None, port_text
    at = rest.find(b"?")
    if at >= 0:
        query = rest[at + 1:] or None
        rest = rest[:at]
    if rest.startswith(b"//"):
        at = rest.find(b"/", 2)
        if at < 0:
            netloc, rest = rest[2:], b""
        else:
            netloc, rest = rest[2:at], rest[at:]
    path = rest or None

    # host and port, read the way urllib reads a netloc
    cdef object port = None
    netloc = netloc.rstrip(b":")
    cdef bytes hostinfo = netloc.rpartition(b"@")[2]
    at = hostinfo.find(b"[")
    if at >= 0:
        host, _, port_text = hostinfo[at + 1:].partition(b"]")
        port_text = port_text.partition(b":")[2]
    else:
        host, _, port_text = hostinfo.partition(b":")
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            from ccrawl.errors import InputError
            raise InputError(
                f"bad port {port_text.decode('utf-8', 'replace')!r}: a port is a number from 0 to 65535"
            )
        port = int(port_text) or None
    if not host:
        host = None
    elif b"%" in host:
        name, percent, zone = host.partition(b"%")
        host = name.lower() + percent + zone
    else:
        host = host.lower()
    if host is None and path is not None and scheme.startswith(b"http"):
        host, _, rest = path.lstrip(b"/").partition(b"/")
        path = b"/" + rest

    if query:
        query = _escape_once(_unescape_repeatedly(query))
    if host:
        host = _canonical_host(host)
    if path is not None:
        path = _unescape_repeatedly(path)
    if host:
        path = _normalize_path(path)
    if path:
        path = _escape_once(path).lower()
        if b"(" in path:
            path = _helpers().strip_path_session_ids(path)
        if len(path) > 1 and path.endswith(b"/"):
            path = path[:len(path) - 1]

    if host:
        host = _strip_www(host.lower())
    cdef bytes lower_scheme = scheme.lower()
    if (port == 80 and lower_scheme == b"http") or (port == 443 and lower_scheme == b"https"):
        port = None
    cdef bytes lowered
    if query:
        lowered = query.lower()
        if b"sid=" in lowered or b"sessionid" in lowered or b"cfid=" in lowered:
            lowered = _helpers().strip_query_session_ids(query).lower()
        query = _sort_query(lowered) or None

    cdef list out = []
    if host:
        labels = host.split(b".")
        labels.reverse()
        out.append(b",".join(labels))
        if port is not None:
            out.append(b":%d" % port)
        out.append(b")")
    else:
        out.append(scheme)
        out.append(b":")
    if path:
        out.append(path)
    elif query is not None:
        out.append(b"/")
    if query is not None:
        out.append(b"?")
        out.append(query)
    return b"".join(out)


def surt(str url):
    """SURT key of ``url``; raises InputError for an empty URL or a bad port."""
    cdef bytes raw
    try:
        raw = url.encode("utf-8")
    except UnicodeEncodeError:
        from ccrawl.errors import InputError
        raise InputError(f"URL is not valid Unicode text: {url!r}") from None
    if not raw:
        from ccrawl.errors import InputError
        raise InputError("empty URL: give an absolute URL such as https://example.com/")
    return surt_bytes(raw).decode("utf-8")
