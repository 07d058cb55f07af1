# Text helpers: whitespace squeezing on UTF-8 bytes, and the cheap checks that decide when
# the twin's regex-based helpers (escaping, datelines, line starts, link destinations) can be
# skipped because they would return their input unchanged. Included by h2mwalk.pyx.


cdef bint _ESCAPABLE[128]
for _c in "\\`*[]<>|~_&":
    _ESCAPABLE[ord(_c)] = True


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
    """``" ".join(raw.split())`` of the text in ``d``, as UTF-8 into ``out``.

    ``edges`` gets bit 1 when the text starts with whitespace, bit 2 when it ends with it, and
    bit 4 when it holds a character ``escape_inline`` may escape (all of them are ASCII).
    ``out.length`` stays 0 when the text is whitespace only (``raw.isspace()``).
    """
    cdef size_t i = 0, w, run
    cdef bint pending = False
    edges[0] = 0
    out.length = 0
    while i < n:
        w = _space_at(d, i, n)
        if w:
            if i == 0:
                edges[0] |= 1
            if i + w == n:
                edges[0] |= 2
            pending = out.length > 0
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
            _buf_add(out, b" ", 1)
            pending = False
        _buf_add(out, d + i, run - i)
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


cdef inline bint _needs_escape(str text):
    """False when ``escape_inline`` would return ``text`` unchanged (no candidate character)."""
    cdef Py_UCS4 ch
    for ch in text:
        if ch < 128 and _ESCAPABLE[ch]:
            return True
    return False


cdef inline str _squeeze_spaces(str text):
    """``_SPACES.sub(" ", text)``: every run of spaces made one."""
    while "  " in text:
        text = text.replace("  ", " ")
    return text


cdef tuple _CREDIT_STARTS = ("foto", "photo", "bild", "image", "quelle", "source", "credit", "copyright")


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _maybe_metadata(str text):
    """False when ``is_metadata_line(text)`` cannot hold; anything non-ASCII is left to it.

    A credit line starts (after non-word characters) with one of the credit words or "(c)";
    each date form has a digit right before ".", "-" or "/".
    """
    cdef Py_ssize_t i = 0, n = len(text)
    cdef Py_UCS4 c, prev = 0
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
    cdef Py_UCS4 c
    for c in url:
        if Py_UNICODE_ISSPACE(c) or c == u'(' or c == u')' or c == u'<' or c == u'>' or c == u'\\':
            return link_destination(url)
    return url


cdef inline str _escape(str text):
    return escape_inline(text) if _needs_escape(text) else text


cdef str _indent(str text, Py_ssize_t width):
    """:func:`ccrawl.extract.blocks.indent`: every non-empty line indented by ``width`` spaces."""
    cdef str pad = " " * width
    if not text.startswith("\n") and not text.endswith("\n") and "\n\n" not in text:
        return pad + text.replace("\n", "\n" + pad) if text else ""
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
