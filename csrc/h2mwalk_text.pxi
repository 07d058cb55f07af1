# Text helpers: whitespace squeezing on UTF-8 bytes, and the cheap checks that decide when
# the twin's regex-based helpers (escaping, datelines, line starts, link destinations) can be
# skipped because they would return their input unchanged. Included by h2mwalk.pyx.


cdef bint _DEST_UNSAFE[128]
for _c in range(128):
    _DEST_UNSAFE[_c] = chr(_c).isspace() or chr(_c) in "()<>\\"

cdef bint _ESCAPABLE[128]
for _c in "\\`*[]<>|~_&":
    _ESCAPABLE[ord(_c)] = True


ctypedef fused ucs_t:
    uint8_t
    uint16_t
    uint32_t


cdef inline bint _ends_with_char(str text, Py_UCS4 c):
    """``text.endswith(c)`` for one character."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    return n > 0 and PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), n - 1) == c


# str.isspace() of each Latin-1 code point, from Python itself.
cdef bint _SPACE1[256]
for _c in range(256):
    _SPACE1[_c] = chr(_c).isspace()


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _count_words(const ucs_t *data, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i, words = 0
    cdef bint space, after_space = True
    cdef uint32_t c
    for i in range(n):
        c = data[i]
        space = _SPACE1[c] if c < 256 else Py_UNICODE_ISSPACE(c)
        words += after_space and not space
        after_space = space
    return words


def count_lt(bytes data not None):
    """``data.count(b"<")`` in one vectorisable pass (twin: ``render.count_lt_py``)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data)
    cdef Py_ssize_t i, n = PyBytes_GET_SIZE(data), count = 0
    for i in range(n):
        count += p[i] == 60
    return count


cdef const char *_BLOCK_NAMES[22]
_BLOCK_NAME_BYTES = (b"div", b"section", b"article", b"aside", b"nav", b"main", b"header", b"footer",
                     b"blockquote", b"ul", b"ol", b"dl", b"form", b"fieldset", b"figure", b"details", b"center",
                     b"menu", b"dir", b"address", b"hgroup", b"search")
for _k, _name in enumerate(_BLOCK_NAME_BYTES):
    _BLOCK_NAMES[_k] = <const char *>_name


cdef inline bint _ascii_word(unsigned char c) noexcept nogil:
    return (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95


def block_opens(bytes data not None):
    """How many ``<name`` start a block tag (guards.BLOCK_NAMES, ASCII case folded) and are not
    followed by an ASCII word byte: at least the opening tags ``guards._BLOCK_TAG`` finds
    (twin: ``guards.block_opens_py``)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data)
    cdef Py_ssize_t i, j, k, n = PyBytes_GET_SIZE(data), count = 0
    cdef const char *name
    cdef unsigned char c
    for i in range(n - 1):
        if p[i] != 60:
            continue
        c = p[i + 1] | 32
        if c != 100 and c != 115 and c != 97 and c != 110 and c != 109 and c != 104 and c != 102 \
                and c != 98 and c != 117 and c != 111 and c != 99:
            continue
        for k in range(22):
            name = _BLOCK_NAMES[k]
            j = 0
            while name[j] != 0 and i + 1 + j < n and (p[i + 1 + j] | 32) == <unsigned char>name[j]:
                j += 1
            if name[j] == 0 and (i + 1 + j >= n or not _ascii_word(p[i + 1 + j])):
                count += 1
                break
    return count


def word_count(str text not None):
    """``len(text.split())`` without building the words (twin: ``render.word_count_py``)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == 1:
        return _count_words(<const uint8_t *>data, n)
    if kind == 2:
        return _count_words(<const uint16_t *>data, n)
    return _count_words(<const uint32_t *>data, n)


cdef Py_ssize_t _squeezed_len(str text):
    """``len(" ".join(text.split()))`` without building the words."""
    cdef Py_ssize_t chars = 0, words = 0
    cdef bint in_word = False
    cdef Py_UCS4 ch
    for ch in text:
        if Py_UNICODE_ISSPACE(ch):
            in_word = False
        else:
            chars += 1
            if not in_word:
                words += 1
                in_word = True
    return chars + words - 1 if words else 0


cdef inline bint _ascii_space_only(const lxb_char_t *data, size_t n) noexcept:
    """True when every byte is one ``str.isspace`` accepts (the ASCII ones)."""
    cdef size_t i
    cdef lxb_char_t c
    for i in range(n):
        c = data[i]
        if not (c == 32 or (9 <= c <= 13) or (28 <= c <= 31)):
            return False
    return True


cdef inline size_t _space_at(const lxb_char_t *d, size_t i, size_t n) noexcept:
    """Bytes of the ``str.isspace`` character starting at ``d[i]`` (UTF-8), or 0.

    Every such character is a complete sequence starting with a byte that cannot continue
    another, so finding it in the bytes is finding it in the decoded text, whatever (even
    invalid) bytes surround it.
    """
    cdef lxb_char_t c = d[i]
    if c < 0x80:
        return 1 if c == 32 or 9 <= c <= 13 or 28 <= c <= 31 else 0
    if c == 0xC2:
        return 2 if i + 1 < n and (d[i + 1] == 0x85 or d[i + 1] == 0xA0) else 0
    if i + 2 >= n or c < 0xE1 or c > 0xE3:
        return 0
    if c == 0xE1:
        return 3 if d[i + 1] == 0x9A and d[i + 2] == 0x80 else 0
    if c == 0xE3:
        return 3 if d[i + 1] == 0x80 and d[i + 2] == 0x80 else 0
    if d[i + 1] == 0x80:
        c = d[i + 2]
        return 3 if 0x80 <= c <= 0x8A or c == 0xA8 or c == 0xA9 or c == 0xAF else 0
    return 3 if d[i + 1] == 0x81 and d[i + 2] == 0x9F else 0


cdef int _squeeze(const lxb_char_t *d, size_t n, Buf *out, int *edges) except -1:
    """``" ".join(raw.split())`` of the text in ``d``, as UTF-8 appended to ``out``.

    ``edges`` gets bit 1 when the text starts with whitespace, bit 2 when it ends with it, and
    bit 4 when it holds a character ``escape_inline`` may escape (all of them are ASCII).
    ``out.length`` is left unchanged when the text is whitespace only (``raw.isspace()``).
    The squeezed text is never longer than ``d``: room for that is made once.
    """
    cdef size_t i = 0, w, run
    cdef size_t base = out.length
    cdef bint pending = False
    cdef char *o
    edges[0] = 0
    _buf_reserve(out, n)
    o = out.data
    while i < n:
        w = _space_at(d, i, n)
        if w:
            if i == 0:
                edges[0] |= 1
            if i + w == n:
                edges[0] |= 2
            pending = out.length > base
            i += w
            continue
        if d[i] < 128 and _ESCAPABLE[d[i]]:
            edges[0] |= 4
        run = i + 1
        while run < n and d[run] != 32 and d[run] >= 0x20 and d[run] < 0x80:
            if _ESCAPABLE[d[run]]:
                edges[0] |= 4
            run += 1
        if pending:
            o[out.length] = 32
            out.length += 1
            pending = False
        memcpy(o + out.length, d + i, run - i)
        out.length += run - i
        i = run
    return 0


cdef inline bint _html_space_only(const lxb_char_t *data, size_t n) noexcept:
    """selectolax's ``skip_empty`` test: only space, tab, LF, FF, CR (or no data)."""
    cdef size_t i
    cdef lxb_char_t c
    if data == NULL:
        return True
    for i in range(n):
        c = data[i]
        if not (c == 32 or c == 9 or c == 10 or c == 12 or c == 13):
            return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _space_flags(str text) noexcept:
    """Bit 1: ``"  " in text``; bit 2: ``"\\n" in text``; bit 4: ``"\\n\\n" in text``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == 1:
        return _space_flags_of(<const uint8_t *>data, n)
    if kind == 2:
        return _space_flags_of(<const uint16_t *>data, n)
    return _space_flags_of(<const uint32_t *>data, n)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _space_flags_of(const ucs_t *data, Py_ssize_t n) noexcept:
    # Branch-free OR-reductions over adjacent pairs, which the compiler vectorizes.
    cdef Py_ssize_t i
    cdef unsigned char doubled = 0, newline = 0, newlines = 0
    if n == 0:
        return 0
    for i in range(n - 1):
        doubled |= (data[i] == 32) & (data[i + 1] == 32)
        newlines |= (data[i] == 10) & (data[i + 1] == 10)
        newline |= data[i] == 10
    newline |= data[n - 1] == 10
    return doubled | (newline << 1) | (newlines << 2)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef str _strip(str text):
    """``text.strip()``: whitespace (``str.isspace``) cut from both ends."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t i = 0, j = n
    while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
        i += 1
    while j > i and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j - 1)):
        j -= 1
    if i == 0 and j == n:
        return text
    return text[i:j]


cdef bint _all_space(list pieces) except -1:
    """True when ``"".join(pieces).strip()`` is empty (every piece whitespace only)."""
    cdef str piece
    cdef int kind
    cdef void *data
    cdef Py_ssize_t i
    for piece in pieces:
        kind = PyUnicode_KIND(piece)
        data = PyUnicode_DATA(piece)
        for i in range(PyUnicode_GET_LENGTH(piece)):
            if not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
                return False
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef str _squeeze_spaces(str text):
    """``_SPACES.sub(" ", text)``: every run of spaces made one."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t i, k = 0, dropped = 0
    cdef Py_UCS4 c, prev = 0
    cdef void *out_data
    cdef int out_kind
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c == 32 and prev == 32:
            dropped += 1
        prev = c
    if not dropped:
        return text
    # The same characters stay (one space of every run), so the same widest one.
    out = PyUnicode_New(n - dropped, PyUnicode_MAX_CHAR_VALUE(text))
    out_kind = PyUnicode_KIND(out)
    out_data = PyUnicode_DATA(out)
    prev = 0
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if not (c == 32 and prev == 32):
            PyUnicode_WRITE(out_kind, out_data, k, c)
            k += 1
        prev = c
    return out


cdef tuple _CREDIT_STARTS = ("foto", "photo", "bild", "image", "quelle", "source", "credit", "copyright")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _maybe_metadata(str text):
    """False when ``is_metadata_line(text)`` cannot hold; anything non-ASCII is left to it.

    A credit line starts (after non-word characters) with one of the credit words or "(c)";
    each date form has a digit right before ".", "-" or "/"; a credit inside a line has ":",
    "getty" or the non-ASCII "©".
    """
    cdef Py_ssize_t i = 0, n = len(text)
    cdef Py_UCS4 c, prev = 0
    if u':' in text or u'getty' in text.lower():
        return True  # a credit inside a caption ("(Photo: Getty)"); "©" is non-ASCII
    while i < n:
        c = text[i]
        if c >= 128 or c == u'(':
            return True
        if c == u'_' or (u'0' <= c <= u'9') or (u'a' <= c <= u'z') or (u'A' <= c <= u'Z'):
            break
        i += 1
    if i < n and text[i:i + 9].lower().startswith(_CREDIT_STARTS):
        return True
    for c in text:
        if c >= 128 or ((c == u'.' or c == u'-' or c == u'/') and u'0' <= prev <= u'9'):
            return True
        prev = c
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
cdef str _breaks(str text, str repl):
    """``_BREAKS.sub(repl, text)``: spaces, a newline and the spaces and newlines after it."""
    cdef Py_ssize_t n = len(text), last = 0, j, k, e
    cdef list parts = []
    j = text.find(u"\n")
    while j >= 0:
        k = j
        while k > last and text[k - 1] == u' ':
            k -= 1
        e = j + 1
        while e < n and (text[e] == u' ' or text[e] == u'\n'):
            e += 1
        parts.append(text[last:k])
        parts.append(repl)
        last = e
        j = text.find(u"\n", e)
    parts.append(text[last:])
    return "".join(parts)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _maybe_line_starts(str text):
    """False when no line of ``text`` starts with what ``escape_line_starts`` escapes."""
    cdef Py_ssize_t n = len(text), i = 0
    cdef Py_UCS4 c
    while i < n:
        c = text[i]
        if c >= 128 or c == u'#' or c == u'>' or c == u'+' or c == u'=' or c == u'-' or (u'0' <= c <= u'9'):
            return True
        i = text.find(u"\n", i) + 1
        if i == 0:
            break
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
cdef str _destination_of(str url):
    """``link_destination(url)``, skipped when no character of ``url`` needs it."""
    cdef int kind = PyUnicode_KIND(url)
    cdef void *data = PyUnicode_DATA(url)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(url)
    cdef bint unsafe
    if kind == 1:
        unsafe = _unsafe_in_destination(<const uint8_t *>data, n)
    elif kind == 2:
        unsafe = _unsafe_in_destination(<const uint16_t *>data, n)
    else:
        unsafe = _unsafe_in_destination(<const uint32_t *>data, n)
    return link_destination(url) if unsafe else url


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _unsafe_in_destination(const ucs_t *data, Py_ssize_t n) noexcept:
    """A character ``link_destination`` rewrites: whitespace, parentheses, angle brackets, ``\\``."""
    cdef Py_ssize_t i
    cdef uint32_t c
    for i in range(n):
        c = data[i]
        if c < 128:
            if _DEST_UNSAFE[c]:
                return True
        elif Py_UNICODE_ISSPACE(c):
            return True
    return False


cdef inline bint _ascii_alnum(Py_UCS4 c) noexcept:
    return (u'0' <= c <= u'9') or (u'a' <= c <= u'z') or (u'A' <= c <= u'Z')


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _escapes_at(int kind, void *data, Py_ssize_t n, Py_ssize_t i) noexcept:
    """Whether ``escape_inline``'s pattern matches at ``i``: every match is one character."""
    cdef Py_UCS4 c = PyUnicode_READ(kind, data, i)
    cdef Py_ssize_t j
    if c >= 128 or not _ESCAPABLE[c]:
        return False
    if c == u'_':
        # (?<![A-Za-z0-9])_|_(?![A-Za-z0-9])
        return (
            i == 0 or not _ascii_alnum(PyUnicode_READ(kind, data, i - 1))
            or i + 1 == n or not _ascii_alnum(PyUnicode_READ(kind, data, i + 1))
        )
    if c == u'&':
        # &(?=#?[A-Za-z0-9]+;)
        j = i + 1
        if j < n and PyUnicode_READ(kind, data, j) == u'#':
            j += 1
        if j >= n or not _ascii_alnum(PyUnicode_READ(kind, data, j)):
            return False
        while j < n and _ascii_alnum(PyUnicode_READ(kind, data, j)):
            j += 1
        return j < n and PyUnicode_READ(kind, data, j) == u';'
    return True


@cython.boundscheck(False)
@cython.wraparound(False)
cdef str _escape_inline(str text):
    """:func:`ccrawl.extract.escape.escape_inline`: a backslash before each character it escapes."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Py_ssize_t i, k, extra = 0
    cdef void *out_data
    cdef int out_kind
    for i in range(n):
        if _escapes_at(kind, data, n, i):
            extra += 1
    if not extra:
        return text
    out = PyUnicode_New(n + extra, PyUnicode_MAX_CHAR_VALUE(text))
    out_kind = PyUnicode_KIND(out)
    out_data = PyUnicode_DATA(out)
    k = 0
    for i in range(n):
        if _escapes_at(kind, data, n, i):
            PyUnicode_WRITE(out_kind, out_data, k, u'\\')
            k += 1
        PyUnicode_WRITE(out_kind, out_data, k, PyUnicode_READ(kind, data, i))
        k += 1
    return out


def escape_inline(str text not None):
    """The compiled :func:`ccrawl.extract.escape.escape_inline` (same output, the twin)."""
    return _escape_inline(text)


cdef inline str _escape(str text):
    return _escape_inline(text)


cdef str _indent(str text, Py_ssize_t width):
    """:func:`ccrawl.extract.blocks.indent`: every non-empty line indented by ``width`` spaces."""
    cdef str pad = " " * width
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if not n:
        return ""
    if not _ends_with_char(text, u"\n") and PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), 0) != u"\n":
        if not _space_flags(text) & 4:
            return pad + text.replace("\n", "\n" + pad)
    return "\n".join([(pad + line) if line else "" for line in text.split("\n")])


cdef str _join_item(list blocks, Py_ssize_t width):
    """:func:`ccrawl.extract.blocks.join_item`: one list item's blocks, continuation indented."""
    cdef str out = blocks[0][0]
    cdef Py_ssize_t i, cut
    for i in range(1, len(blocks)):
        b = blocks[i]
        out += ("\n" if b[2] == "list" else "\n\n") + b[0]
    cut = out.find("\n")
    if cut < 0 or cut == len(out) - 1:
        return out[:cut] if cut >= 0 else out
    return out[:cut] + "\n" + _indent(out[cut + 1:], width)


cdef Py_ssize_t _heading_level(tuple block):
    """:func:`ccrawl.extract.blocks.heading_level`."""
    cdef str md = block[0]
    return len(md) - len(md.lstrip("#")) if block[2] == "h" else 0


cdef list _drop_orphan_headings(list blocks):
    """:func:`ccrawl.extract.blocks.drop_orphan_headings` (nothing to drop without a marker)."""
    cdef list out = []
    cdef bint pending = False
    cdef Py_ssize_t i
    cdef tuple block, nxt
    for block in blocks:
        if block[2] == "x":
            break
    else:
        return [b for b in blocks if b[0]]
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if block[2] == "x":
            pending = True
            continue
        if block[2] == "h" and pending:
            if not out:
                continue
            nxt = out[-1]
            if nxt[2] == "h" and _heading_level(nxt) <= _heading_level(block):
                continue
        pending = False
        if block[0]:
            out.append(block)
    out.reverse()
    return out


cdef bint _only_titles_left(list blocks, Py_ssize_t start):
    """:func:`ccrawl.extract.blocks.only_titles_left`."""
    cdef bint dropped = False
    cdef Py_ssize_t i
    cdef tuple block
    for i in range(start, len(blocks)):
        block = blocks[i]
        if block[2] == "x":
            dropped = True
        elif block[2] != "h" and len(block[1]) > 40:
            return False
    return dropped


cdef str _one_line(list blocks):
    """:func:`ccrawl.extract.blocks.one_line`: blocks as one line of inline Markdown."""
    cdef list parts = []
    cdef tuple block
    for block in blocks:
        if block[2] == "p":
            parts.append(block[0].replace("\\\n", " "))
        elif block[1]:
            parts.append(_escape(" ".join(block[1].split())))
    return " ".join(parts).strip()
