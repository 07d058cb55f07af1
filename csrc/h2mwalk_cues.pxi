# boilerplate.verdict over the element's attribute list. Included by h2mwalk.pyx.
#
# Most elements name no furniture at all, and the twin finds that out with one search of an
# alternation of 90 words (the slow part of its cue check). Here a class/id string is first
# cut at the delimiters the pattern requires around a word (space, "-", "_"); only when a
# component (or two joined by "-") is one of the words does boilerplate's own check run, so
# its answer, not a re-implementation of it, decides every element that could be furniture.

from ccrawl.extract import boilerplate as _bp

cdef object _HIDDEN_STYLE = _bp._HIDDEN_STYLE
cdef object _ROLES = _bp.BOILERPLATE_ROLES
cdef object _names_furniture = _bp._names_furniture
cdef frozenset _CUE_WORDS = frozenset(_bp._WORDS.split("|"))
cdef unsigned long long _first_len[128]     # bit L: some word of length L starts with this char
cdef dict _furniture_cache = {}
cdef Py_ssize_t _FURNITURE_CACHE_SIZE = 20_000
cdef int _HIDDEN_KIND = HIDDEN
cdef int _KEEP_KIND = KEEP
cdef int _FURNITURE_KIND = _bp.FURNITURE
cdef int _CAPTION_KIND = _bp.CAPTION
cdef int _COMMENTS_KIND = _bp.COMMENTS
cdef Py_ssize_t _CAPTION_MAX_CHARS = _bp.CAPTION_MAX_CHARS


cdef int _init_cue_table() except -1:
    for word in _CUE_WORDS:
        if not word or ord(word[0]) >= 128 or len(word) >= 64:
            raise ImportError(f"cue word {word!r} does not fit the prefilter")
        _first_len[ord(word[0])] |= 1ULL << len(word)
    return 0


_init_cue_table()


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline bint _is_word(str s, Py_ssize_t a, Py_ssize_t b):
    """True when ``s[a:b]`` is one of the cue words."""
    cdef Py_ssize_t n = b - a
    cdef Py_UCS4 c
    if n <= 0 or n >= 64:
        return False
    c = s[a]
    if c >= 128 or not (_first_len[c] >> n) & 1:
        return False
    return s[a:b] in _CUE_WORDS


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline bint _word_ending(str s, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n):
    """A word from ``a`` to ``b``, or to just before a final newline (where ``$`` matches)."""
    if _is_word(s, a, b):
        return True
    return b == n and b - 1 > a and s[b - 1] == u'\n' and _is_word(s, a, b - 1)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _cue_possible(str s):
    """False when ``boilerplate._CUE.search(s)`` finds nothing: no component is a cue word."""
    cdef Py_ssize_t n = len(s), a = 0, b, c
    while a <= n:
        b = a
        while b < n and s[b] != u' ' and s[b] != u'-' and s[b] != u'_':
            b += 1
        if _word_ending(s, a, b, n):
            return True
        if b < n and s[b] == u'-':
            c = b + 1
            while c < n and s[c] != u' ' and s[c] != u'-' and s[c] != u'_':
                c += 1
            if _word_ending(s, a, c, n):
                return True
        a = b + 1
    return False


cdef int _furniture_words(str words) except -1:
    """``boilerplate._names_furniture(words)`` (a kind), with the prefilter and a bounded cache."""
    if not _cue_possible(words):
        return _KEEP_KIND
    found = _furniture_cache.get(words)
    if found is None:
        found = int(_names_furniture(words))
        if len(_furniture_cache) >= _FURNITURE_CACHE_SIZE:
            _furniture_cache.clear()
        _furniture_cache[words] = found
    return found


cdef const char *_word_ptr[128]
cdef size_t _word_len[128]
cdef Py_ssize_t _word_count = 0
cdef list _word_bytes = []


cdef int _init_word_table() except -1:
    global _word_count
    if len(_CUE_WORDS) > 128:
        raise ImportError("too many cue words for the byte prefilter")
    for word in sorted(_CUE_WORDS):
        data = word.encode("ascii")
        _word_bytes.append(data)
        _word_ptr[_word_count] = <const char *>data
        _word_len[_word_count] = len(data)
        _word_count += 1
    return 0


_init_word_table()


cdef inline lxb_char_t _lower(lxb_char_t c) noexcept:
    return c + 32 if 65 <= c <= 90 else c


cdef bint _is_word_bytes(const lxb_char_t *d, size_t a, size_t b) noexcept:
    """True when ``d[a:b]``, ASCII-lowercased, is one of the cue words."""
    cdef size_t n = b - a, i, k
    cdef lxb_char_t first
    if n == 0 or n >= 64:
        return False
    first = _lower(d[a])
    if not (_first_len[first] >> n) & 1:
        return False
    for k in range(<size_t>_word_count):
        if _word_len[k] != n or <lxb_char_t>_word_ptr[k][0] != first:
            continue
        for i in range(1, n):
            if _lower(d[a + i]) != <lxb_char_t>_word_ptr[k][i]:
                break
        else:
            return True
    return False


cdef inline bint _is_cue_delim(lxb_char_t c) noexcept:
    return c == 32 or c == 45 or c == 95


cdef int _cue_in_bytes(lxb_dom_attr_t *attr, bint last) noexcept:
    """1 when the value may name a cue word, 0 when it cannot, -1 when it is not ASCII.

    ``last``: the value ends the string the pattern searches, so a word may also end just
    before a final newline there (where ``$`` matches).
    """
    cdef const lxb_char_t *d
    cdef size_t n, a = 0, b, c, i
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return 0
    d = attr.value.data
    n = attr.value.length
    for i in range(n):
        if d[i] >= 128:
            return -1
    while a <= n:
        b = a
        while b < n and not _is_cue_delim(d[b]):
            b += 1
        if _is_word_bytes(d, a, b) or (last and b == n and b > a + 1 and d[b - 1] == 10 and _is_word_bytes(d, a, b - 1)):
            return 1
        if b < n and d[b] == 45:
            c = b + 1
            while c < n and not _is_cue_delim(d[c]):
                c += 1
            if _is_word_bytes(d, a, c) or (last and c == n and c > a + 1 and d[c - 1] == 10 and _is_word_bytes(d, a, c - 1)):
                return 1
        a = b + 1
    return 0


cdef inline object _value_or_none(lxb_dom_attr_t *attr):
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return None
    return _decode(attr.value.data, attr.value.length)


cdef inline bint _has_text(lxb_dom_attr_t *attr) noexcept:
    return attr != NULL and attr.value != NULL and attr.value.data != NULL and attr.value.length > 0


cdef int _verdict(lxb_dom_node_t *node, bint use_cues) except -1:
    """:func:`ccrawl.extract.boilerplate.verdict` of ``node``'s attributes."""
    cdef lxb_dom_attr_t *attr = (<lxb_dom_element_t *>node).first_attr
    cdef lxb_dom_attr_t *hidden = NULL
    cdef lxb_dom_attr_t *aria = NULL
    cdef lxb_dom_attr_t *style = NULL
    cdef lxb_dom_attr_t *role = NULL
    cdef lxb_dom_attr_t *cls = NULL
    cdef lxb_dom_attr_t *ident = NULL
    while attr != NULL:
        if _attr_is(attr, &A_CLASS):
            cls = attr
        elif _attr_is(attr, &A_ID):
            ident = attr
        elif _attr_is(attr, &A_STYLE):
            style = attr
        elif _attr_is(attr, &A_ROLE):
            role = attr
        elif _attr_is(attr, &A_HIDDEN):
            hidden = attr
        elif _attr_is(attr, &A_ARIA_HIDDEN):
            aria = attr
        attr = attr.next
    if hidden != NULL:
        return _HIDDEN_KIND
    if aria != NULL and _value_or_none(aria) == "true":
        return _HIDDEN_KIND
    if _has_text(style) and _HIDDEN_STYLE.search(_value_or_none(style)):
        return _HIDDEN_KIND
    if _has_text(role) and _value_or_none(role).lower() in _ROLES:
        return _FURNITURE_KIND
    if use_cues and (_has_text(cls) or _has_text(ident)):
        if _cue_in_bytes(cls, False) == 0 and _cue_in_bytes(ident, True) == 0:
            return _KEEP_KIND
        words = f"{_value_or_none(cls) or ''} {_value_or_none(ident) or ''}".lower()
        return _furniture_words(words)
    return _KEEP_KIND
