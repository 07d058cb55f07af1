# cython: language_level=3, boundscheck=True, wraparound=True, cdivision=True
"""Compiled twin of :class:`ccrawl.extract.render.Renderer`: the same walk over lexbor's structs.

The Python renderer spends most of its time making a selectolax node object per DOM node and
asking it for its tag, text and attributes. This one reads lexbor's nodes by address (see
``lexbor_abi.pxd``): tags are classified once per tag id, text nodes are read as UTF-8 bytes,
attributes through the element's list, and the subtree scans (deep text, the content-marker
query, anchors, table rows) are C loops. Everything that builds the output strings (escaping,
emphasis and link wrapping, block stitching) is the twin's code or a line-for-line port of
it; the twin's regex helpers (furniture cues, datelines, escaping) are called only where a
byte or character scan finds something they could act on. Output, notes and truncation are
identical; ``tests/extract/test_h2mwalk_parity.py`` holds the two side by side on the corpus
and on generated hostile HTML.

Unlike the other modules, bounds checks and negative indices stay on (the header above): the
ported code indexes Python lists and strings the way the twin does (``ctx.md[-1]``).

Three small kernels the engines call around the walk live here too, each with a twin in
``ccrawl.extract``: ``word_count`` (``len(text.split())`` without the list), ``escape_inline``
(the escaping of :mod:`ccrawl.extract.escape`, which the walk itself uses) and ``strip_tags``
(selectolax's ``strip_tags`` for a whole document in one walk instead of one per tag);
``tests/extract/test_raw_path_parity.py`` holds each against its twin. ``outlinks`` (twin
``ccrawl.extract.urls.outlinks``) decides the resolver's common cases in C
(``tests/extract/test_outlinks_parity.py``).

At import the module checks its reading of lexbor's structs against selectolax's Python API
on a probe document (:func:`layout_problem`) and raises ImportError when anything differs,
so ``accel`` falls back to the twin.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_DecodeUTF8,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uintptr_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memcpy
from posix.dlfcn cimport RTLD_LAZY, dlopen, dlsym

from lexbor_abi cimport *

cdef extern from "Python.h":
    # Building strings at a known width, and emptying a list in place (``del lst[:]``).
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object text)
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value)
    const Py_ssize_t PY_SSIZE_T_MAX
    int _list_set_slice "PyList_SetSlice" (object lst, Py_ssize_t low, Py_ssize_t high, void *items) except -1


import time

import selectolax.lexbor as _sx

from ccrawl.extract.blocks import DROPPED, IMAGE_MARK, drop_image_marks, finish_blocks
from ccrawl.extract.boilerplate import HIDDEN, KEEP
from ccrawl.extract.escape import (
    code_fence,
    code_span,
    escape_heading_end,
    escape_line_starts,
    link_destination,
)

# The twin (ccrawl.extract.render) and the parts of it used here, bound at the end of the
# module: render.py imports this module to pick its Renderer, so it is imported only after the
# layout check has passed (see the bottom of this file).
cdef object _twin, _LANG_CLASS, _EDGE_PUNCT, is_metadata_line, _ends_with_bare

# -- tag classification ---------------------------------------------------------------------

cdef enum:
    F_SKIP = 1
    F_INLINE = 2
    F_BOILER = 4
    F_CONTAINER = 8
    F_PRECHECK = 16
    F_PRUNED = 32
    F_LIST = 64
    F_MARKER = 128          # main, h1: the element part of the content-marker query

cdef enum:
    K_OTHER = 0
    K_BR
    K_IMG
    K_WBR
    K_CODE                  # code, kbd, samp, tt
    K_A
    K_PRE
    K_QUOTE
    K_TABLE
    K_HR
    K_HEADER
    K_TR
    K_TSECTION              # thead, tbody, tfoot
    K_TD
    K_TH
    K_OL

cdef enum:
    TAG_TEXT = 2            # lexbor's LXB_TAG__TEXT
    TAG_COMMENT = 4         # LXB_TAG__EM_COMMENT


cdef struct TagInfo:
    unsigned int flags
    unsigned char kind
    unsigned char level     # 1-6 for h1-h6
    unsigned char emph      # 1 "**", 2 "*", 3 "~~"
    bint is_code_tag        # the tag is "code" itself (for a <pre>'s language class)


cdef tuple _MARKERS = ("", "**", "*", "~~")
_EMPH_CODES = {"**": 1, "*": 2, "~~": 3}
_KINDS = {
    "br": K_BR, "img": K_IMG, "wbr": K_WBR, "code": K_CODE, "kbd": K_CODE, "samp": K_CODE,
    "tt": K_CODE, "a": K_A, "pre": K_PRE, "blockquote": K_QUOTE, "table": K_TABLE, "hr": K_HR,
    "header": K_HEADER, "tr": K_TR, "thead": K_TSECTION, "tbody": K_TSECTION,
    "tfoot": K_TSECTION, "td": K_TD, "th": K_TH, "ol": K_OL,
}  # fmt: skip


cdef TagInfo _classify(object name):
    """What the twin's tag-name sets say about ``name`` (a ``LexborNode.tag`` value)."""
    cdef TagInfo info
    info.flags = 0
    info.kind = K_OTHER
    info.level = 0
    info.emph = 0
    info.is_code_tag = name == "code"
    flag_sets = (
        (_twin.SKIP_TAGS, F_SKIP), (_twin.INLINE_TAGS, F_INLINE), (_twin.BOILERPLATE_TAGS, F_BOILER),
        (_twin._CONTAINERS, F_CONTAINER), (_twin._PRECHECK_TAGS, F_PRECHECK),
        (_twin._PRUNED_TAGS, F_PRUNED), (_twin._LISTS, F_LIST), (("main", "h1"), F_MARKER),
    )
    for names, flag in flag_sets:
        if name in names:
            info.flags |= <int>flag
    if name is not None:
        info.kind = _KINDS.get(name, K_OTHER)
        info.level = _twin._HEADINGS.get(name, 0)
        info.emph = _EMPH_CODES.get(_twin._EMPHASIS.get(name), 0)
    return info


ctypedef const lxb_char_t *(*qname_fn)(void *, size_t *) noexcept nogil

cdef LexborFns _fns
cdef qname_fn _element_qname = NULL
cdef qname_fn _attr_qname = NULL
cdef TagInfo _tag_cache[STANDARD_TAG_LIMIT]
cdef bint _tag_known[STANDARD_TAG_LIMIT]
cdef dict _custom_cache = {}
_SPECIAL_NAMES = {2: "-text", 3: "-document", 4: "-comment", 5: "-doctype"}


cdef str _decode(const lxb_char_t *data, size_t length):
    """Bytes from lexbor as selectolax decodes them (invalid UTF-8 becomes U+FFFD)."""
    return PyUnicode_DecodeUTF8(<const char *>data, length, "replace")


cdef object _tag_name(lxb_dom_node_t *node):
    """``LexborNode.tag``: the special names, an element's qualified name, else None."""
    cdef size_t n = 0
    cdef const lxb_char_t *name
    special = _SPECIAL_NAMES.get(node.local_name)
    if special is not None:
        return special
    if node.type != NODE_ELEMENT:
        return None
    name = _element_qname(<void *>node, &n)
    return _decode(name, n) if name != NULL else None


cdef class _InfoBox:
    cdef TagInfo info


cdef TagInfo _info(lxb_dom_node_t *node):
    """The classification of ``node``'s tag: cached per standard tag id, by name for the rest."""
    cdef uintptr_t tag_id = node.local_name
    cdef TagInfo info
    if tag_id < STANDARD_TAG_LIMIT and node.type == NODE_ELEMENT:
        if not _tag_known[tag_id]:
            _tag_cache[tag_id] = _classify(_tag_name(node))
            _tag_known[tag_id] = True
        return _tag_cache[tag_id]
    name = _tag_name(node)
    cached = _custom_cache.get(name)
    if cached is not None:
        return (<_InfoBox>cached).info
    info = _classify(name)
    if len(_custom_cache) < 4096:
        box = _InfoBox()
        box.info = info
        _custom_cache[name] = box
    return info


# -- reading nodes --------------------------------------------------------------------------

cdef struct AttrKey:
    const char *name                  # a qualified name without prefix, lowercase
    size_t n
    uintptr_t id                      # lexbor's static attribute id, or 0: compare the names


cdef AttrKey A_HREF, A_ALT, A_SRC, A_DATA_SRC, A_CLASS, A_ID, A_START, A_STYLE, A_ROLE, A_HIDDEN, A_ARIA_HIDDEN
cdef AttrKey *_ATTR_KEYS[11]
_ATTR_NAMES = (b"href", b"alt", b"src", b"data-src", b"class", b"id", b"start", b"style", b"role", b"hidden",
               b"aria-hidden")


cdef inline bint _attr_is(lxb_dom_attr_t *attr, AttrKey *key) noexcept:
    """True when ``attr``'s qualified name is ``key``'s name.

    By id when the name has a static one (an unprefixed attribute of that name has exactly
    that id); otherwise by name, skipping attributes whose static id already says they differ.
    """
    cdef uintptr_t local = attr.node.local_name
    cdef const lxb_char_t *got
    cdef size_t got_len = 0
    if key.id:
        return local == key.id and (attr.qualified_name == 0 or attr.qualified_name == local)
    if attr.qualified_name == 0 and local < STANDARD_TAG_LIMIT:
        return False
    got = _attr_qname(<void *>attr, &got_len)
    return got != NULL and got_len == key.n and memcmp(got, key.name, key.n) == 0


cdef lxb_dom_attr_t *_attr(lxb_dom_node_t *node, AttrKey *key) noexcept:
    """The attribute whose qualified name is ``key``'s (as ``LexborNode.attrs`` looks it up)."""
    cdef lxb_dom_attr_t *attr
    if node.type != NODE_ELEMENT:
        return NULL
    attr = (<lxb_dom_element_t *>node).first_attr
    while attr != NULL:
        if _attr_is(attr, key):
            return attr
        attr = attr.next
    return NULL


cdef object _attr_value(lxb_dom_node_t *node, AttrKey *key):
    """``attributes.get(name)``: the value, or None when absent or without a value."""
    cdef lxb_dom_attr_t *attr = _attr(node, key)
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return None
    return _decode(attr.value.data, attr.value.length)


cdef bint _local_attr_equals(lxb_dom_node_t *node, const char *name, size_t n,
                             const char *value, size_t vn) noexcept:
    """CSS ``[name="value"]`` as lexbor matches it: first attribute by local name, exact value."""
    cdef lxb_dom_attr_t *attr = find_attr(<lxb_dom_element_t *>node, name, n, &_fns)
    if attr == NULL:
        return False
    if attr.value == NULL or attr.value.data == NULL:
        return vn == 0
    return attr.value.length == vn and memcmp(attr.value.data, value, vn) == 0


cdef struct Buf:
    char *data
    size_t length
    size_t capacity
    size_t pieces


cdef int _buf_reserve(Buf *buf, size_t n) except -1:
    """Room for ``n`` more bytes after ``buf.length``."""
    cdef size_t need = buf.length + n
    cdef char *grown
    if need > buf.capacity:
        grown = <char *>realloc(buf.data, need * 2 + 64)
        if grown == NULL:
            raise MemoryError()
        buf.data = grown
        buf.capacity = need * 2 + 64
    return 0


cdef int _buf_add(Buf *buf, const void *data, size_t n) except -1:
    _buf_reserve(buf, n)
    if n:
        memcpy(buf.data + buf.length, data, n)
    buf.length += n
    return 0


cdef str _deep_text(lxb_dom_node_t *root, const char *sep, size_t sep_len):
    """``node.text(deep=True, separator=sep)``: descendant text nodes joined, then decoded."""
    cdef Buf buf
    cdef lxb_dom_node_t *node = root.first_child
    cdef lxb_dom_character_data_t *cd
    buf.data = NULL
    buf.length = buf.capacity = buf.pieces = 0
    try:
        while node != NULL:
            if node.local_name == TAG_TEXT:
                cd = <lxb_dom_character_data_t *>node
                if cd.data.data != NULL:
                    if buf.pieces and sep_len:
                        _buf_add(&buf, sep, sep_len)
                    _buf_add(&buf, cd.data.data, cd.data.length)
                    buf.pieces += 1
            node = next_in_subtree(node, root, True)
        if buf.length == 0:
            return ""
        return PyUnicode_DecodeUTF8(buf.data, buf.length, "replace")
    finally:
        free(buf.data)


cdef object _text_content(lxb_dom_node_t *node):
    """``LexborNode.text_content`` of a text node: its data, or None."""
    cdef lxb_dom_character_data_t *cd = <lxb_dom_character_data_t *>node
    if cd.data.data == NULL:
        return None
    return _decode(cd.data.data, cd.data.length)


cdef bint _has_content_marker(lxb_dom_node_t *root):
    """``root.css_first('main, h1, [itemprop="articleBody"], [role="main"]') is not None``."""
    cdef lxb_dom_node_t *node = root
    while node != NULL:
        if node.type == NODE_ELEMENT:
            if _info(node).flags & F_MARKER:
                return True
            if _local_attr_equals(node, "itemprop", 8, "articleBody", 11):
                return True
            if _local_attr_equals(node, "role", 4, "main", 4):
                return True
        node = next_in_subtree(node, root, True)
    return False


cdef bint _has_nested_table(lxb_dom_node_t *table):
    cdef lxb_dom_node_t *node = table.first_child
    while node != NULL:
        if node.type == NODE_ELEMENT and _info(node).kind == K_TABLE:
            return True
        node = next_in_subtree(node, table, True)
    return False


cdef list _anchors(lxb_dom_node_t *root):
    """Addresses of the ``a`` elements below ``root`` in document order (``root.css("a")``)."""
    cdef list found = []
    cdef lxb_dom_node_t *node = root
    while node != NULL:
        if node.type == NODE_ELEMENT and _info(node).kind == K_A:
            found.append(<uintptr_t>node)
        node = next_in_subtree(node, root, True)
    return found


cdef list _table_rows(lxb_dom_node_t *table, Py_ssize_t max_cells):
    """:func:`ccrawl.extract.blocks.table_rows` over structs: ``[(all_th, [cell, ...])]``."""
    cdef list rows = []
    cdef list trs = []
    cdef Py_ssize_t seen = 0
    cdef lxb_dom_node_t *part = table.first_child
    cdef lxb_dom_node_t *tr
    cdef lxb_dom_node_t *cell
    cdef unsigned char kind
    cdef bint all_th
    while part != NULL:
        if part.type != NODE_TEXT:
            kind = _info(part).kind
            if kind == K_TR:
                trs.append(<uintptr_t>part)
            elif kind == K_TSECTION:
                tr = part.first_child
                while tr != NULL:
                    if tr.type != NODE_TEXT and _info(tr).kind == K_TR:
                        trs.append(<uintptr_t>tr)
                    tr = tr.next
        part = part.next
    for address in trs:
        cells = []
        all_th = True
        cell = (<lxb_dom_node_t *><uintptr_t>address).first_child
        while cell != NULL:
            if cell.type != NODE_TEXT:
                kind = _info(cell).kind
                if kind == K_TD or kind == K_TH:
                    cells.append(<uintptr_t>cell)
                    all_th = all_th and kind == K_TH
            cell = cell.next
        if cells:
            rows.append((all_th, cells))
            seen += len(cells)
            if seen > max_cells:
                break
    return rows


include "h2mwalk_text.pxi"
include "h2mwalk_cues.pxi"
include "h2mwalk_render.pxi"
include "h2mwalk_strip.pxi"
include "h2mwalk_links.pxi"
include "h2mwalk_probe.pxi"


cdef int _bind_twin(object module) except -1:
    global _twin, _LANG_CLASS, _EDGE_PUNCT, is_metadata_line, _ends_with_bare, _TEASER_AFTER, _TEASER_TEXT, _METADATA_MAX
    global _LINK_LIST_LINKS, _LINK_LIST_DENSITY, _COMMENTS_AFTER, _THREAD_AFTER, _COMMENTS_HEADING
    global _COMMENTS_ANCHOR, _ARTICLE_END, _ARTICLE_END_FIRST
    _twin = module
    _LINK_LIST_LINKS = module._LINK_LIST_LINKS
    _LINK_LIST_DENSITY = module._LINK_LIST_DENSITY
    _TEASER_AFTER = module._TEASER_AFTER
    _COMMENTS_AFTER = module._COMMENTS_AFTER
    _THREAD_AFTER = module._THREAD_AFTER
    _COMMENTS_HEADING = module._COMMENTS_HEADING
    _COMMENTS_ANCHOR = module._COMMENTS_ANCHOR
    _ARTICLE_END = module._ARTICLE_END
    _ARTICLE_END_FIRST = module._ARTICLE_END_FIRST
    _TEASER_TEXT = module._TEASER_TEXT
    _METADATA_MAX = module._METADATA_MAX
    _LANG_CLASS = module._LANG_CLASS
    _EDGE_PUNCT = module._EDGE_PUNCT
    is_metadata_line = module.is_metadata_line
    _ends_with_bare = module._ends_with_bare
    return 0


from ccrawl.extract import render as _render_module

_bind_twin(_render_module)
