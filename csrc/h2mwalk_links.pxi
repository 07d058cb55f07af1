# outlinks: ``ccrawl.extract.urls.outlinks`` (its twin) with the resolver's common cases in C.
# Included by h2mwalk.pyx.
#
# ``Resolver.resolve`` strips the href, drops non-navigational schemes (case-insensitively), keeps
# absolute http(s) hrefs, and joins protocol- and root-relative ones by concatenation; only the
# rest reaches ``urljoin``. Here those first cases are decided without a Python call and written
# to the resolver's cache exactly as ``resolve`` would write them; anything else (a relative
# path, no base, a non-ASCII character where a scheme would be) goes to ``resolver.resolve``.

cdef tuple _SKIP_PREFIXES = (b"javascript:", b"mailto:", b"tel:", b"data:", b"about:", b"#")


cdef bint _ascii_prefix_ci(str s, Py_ssize_t start, Py_ssize_t end, bytes prefix, bint *undecided):
    """``s[start:end].lower().startswith(prefix)`` for an ASCII ``prefix``; sets ``undecided``
    on a non-ASCII character within the prefix's length (whose lowercase this does not model)."""
    cdef Py_ssize_t n = len(prefix), i
    cdef const char *p = prefix
    cdef uint32_t c
    cdef bint match = end - start >= n
    for i in range(min(n, end - start)):
        c = <uint32_t>s[start + i]
        if c >= 0x80:
            undecided[0] = True
            return False
        if 0x41 <= c <= 0x5A:
            c += 0x20
        if c != <uint32_t>(<unsigned char>p[i]):
            return False
    return match


cdef object _resolve_fast(str href, str scheme, str origin):
    """What ``Resolver._resolve(href.strip())`` returns, or None when only it can tell."""
    cdef Py_ssize_t n = len(href), start = 0, end
    cdef bint undecided = False
    cdef str s
    end = n
    while start < end and Py_UNICODE_ISSPACE(href[start]):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(href[end - 1]):
        end -= 1
    if start == end:
        return ""
    for prefix in _SKIP_PREFIXES:
        if _ascii_prefix_ci(href, start, end, <bytes>prefix, &undecided):
            return ""
    if undecided:
        return None
    s = href if start == 0 and end == n else href[start:end]
    if s.startswith("http://") or s.startswith("https://"):
        return s
    if s.startswith("//"):
        return (scheme or "https") + ":" + s
    if s.startswith("/") and origin:
        return origin + s
    return None


def outlinks(list hrefs not None, resolver, Py_ssize_t limit):
    """Absolute http(s) URLs of ``hrefs``, fragments dropped, deduplicated in page order
    (twin: ``ccrawl.extract.urls.outlinks``, which this matches, resolver cache included)."""
    cdef dict cache = resolver.cache
    cdef dict seen = {}
    cdef str scheme = resolver.scheme
    cdef str origin = resolver.origin
    cdef Py_ssize_t hash_at
    for href in hrefs:
        url = cache.get(href)
        if url is None:
            url = _resolve_fast(href, scheme, origin) if type(href) is str else None
            if url is None:
                url = resolver.resolve(href)
            else:
                cache[href] = url
        if not (url.startswith("http://") or url.startswith("https://")):
            continue
        hash_at = url.find("#")
        if hash_at >= 0:
            url = url[:hash_at]
        if " " in url:
            url = url.replace(" ", "%20")
        if url not in seen:
            seen[url] = None
            if len(seen) >= limit:
                break
    return list(seen)
