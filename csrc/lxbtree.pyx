# cython: language_level=3
"""Native DOM helpers for extraction: the twin of ``ccrawl/extract/tree.py``, same results.

The extraction engines ask selectolax for text lengths, link text, the ``a[href]`` values and
the main-content candidates; each answer builds Python strings and node objects only to count
or test them. These functions walk lexbor's tree by address instead (``csrc/lexbor_abi.pxd``)
and reproduce what the selectolax calls give, including lexbor's CSS matching rules (quirks
mode makes ``#id`` and ``.class`` ASCII case-insensitive; ``rel`` values are case-insensitive on
HTML elements; a node matching several selectors of a list is reported once per selector; a
query includes the node it starts from). Nodes the caller keeps are reached through
selectolax's own ``first_child``/``next`` from the node passed in, so nodes stay selectolax's.

At import the module checks itself against selectolax's Python API on probe documents and
raises ImportError on any difference, so ``accel`` falls back to the twin.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint64_t, uintptr_t
from cpython.unicode cimport Py_UNICODE_ISSPACE
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memset
from posix.dlfcn cimport RTLD_LAZY, dlopen, dlsym

from lexbor_abi cimport *

import gc

import selectolax.lexbor as _sx
from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract.boilerplate import has_boilerplate_role, is_hidden, names_furniture


cdef struct document_head_t:         # lxb_dom_document_t's leading fields
    lxb_dom_node_t node
    int compat_mode                   # lxb_dom_document_cmode_t: 1 = quirks


cdef LexborFns FNS
cdef name_fn ATTR_QNAME               # lxb_dom_attr_qualified_name(attr, &len)
cdef name_fn ELEMENT_QNAME            # lxb_dom_element_qualified_name(element, &len): ``node.tag``
cdef uintptr_t T_TEXT, T_A, T_TITLE, T_META, T_LINK, T_BASE, T_BODY, T_HTML
cdef uintptr_t T_HEADER, T_FOOTER, T_NAV, T_ASIDE, T_DIALOG, T_P, T_PRE, T_TD, T_ARTICLE, T_MAIN
cdef uintptr_t NS_HTML
cdef int QUIRKS = 1

# Attributes whose values HTML selectors compare ASCII case-insensitively (lexbor's list).
_CASELESS_ATTRS = frozenset(
    "accept accept-charset align alink axis bgcolor charset checked clear codetype color compact "
    "declare defer dir direction disabled enctype face frame hreflang http-equiv lang language link "
    "media method multiple nohref noresize noshade nowrap readonly rel rev rules scope scrolling "
    "selected shape target text type valign valuetype vlink".split()
)


cdef int _load() except -1:
    global ATTR_QNAME, ELEMENT_QNAME
    path = _sx.__file__.encode()
    load_fns(path, &FNS)
    cdef void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD)
    ATTR_QNAME = <name_fn>dlsym(handle, b"lxb_dom_attr_qualified_name")
    ELEMENT_QNAME = <name_fn>dlsym(handle, b"lxb_dom_element_qualified_name")
    if ATTR_QNAME == NULL or ELEMENT_QNAME == NULL:
        raise ImportError("selectolax's lexbor module does not export the qualified-name functions")
    return 0


# ---------------------------------------------------------------- text

cdef Py_ssize_t _utf8_count(const unsigned char *s, size_t n) noexcept nogil:
    """Code points in ``s``, or -1 when it is not strict UTF-8 (as Python's decoder sees it)."""
    cdef size_t i = 0
    cdef Py_ssize_t count = 0
    cdef unsigned char c, lo, hi
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2 or c > 0xF4:
            return -1
        elif c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return -1
            i += 2
        else:
            lo, hi = 0x80, 0xBF
            if c == 0xE0:
                lo = 0xA0
            elif c == 0xED:
                hi = 0x9F
            elif c == 0xF0:
                lo = 0x90
            elif c == 0xF4:
                hi = 0x8F
            if i + 1 >= n or s[i + 1] < lo or s[i + 1] > hi:
                return -1
            if c < 0xF0:
                if i + 2 >= n or (s[i + 2] & 0xC0) != 0x80:
                    return -1
                i += 3
            else:
                if i + 3 >= n or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                    return -1
                i += 4
        count += 1
    return count


cdef inline lexbor_str_t *_text_data(lxb_dom_node_t *node) noexcept nogil:
    return &(<lxb_dom_character_data_t *>node).data


cdef str _text(lxb_dom_node_t *root):
    """``node.text(deep=True)``: the node's own data if it is text, then its descendants'."""
    parts = []
    cdef lxb_dom_node_t *node = root
    cdef lexbor_str_t *data
    if root.type == NODE_TEXT:
        data = _text_data(root)
        if data.data != NULL:
            parts.append((<char *>data.data)[:data.length])
    node = root.first_child
    while node != NULL:
        if node.local_name == T_TEXT:
            data = _text_data(node)
            if data.data != NULL:
                parts.append((<char *>data.data)[:data.length])
        node = next_in_subtree(node, root, True)
    joined = b"".join(parts)
    return PyUnicode_DecodeUTF8(joined, len(joined), "replace")


cdef inline Py_ssize_t _piece_len(lxb_dom_node_t *node) noexcept:
    """Code points of one text node's data; -1 when it is not UTF-8 (the caller decodes instead)."""
    cdef lexbor_str_t *data = _text_data(node)
    if data.data == NULL:
        return 0
    return _utf8_count(data.data, data.length)


cdef Py_ssize_t _text_len(lxb_dom_node_t *root) except -1:
    """``len(node.text(deep=True))`` without building the string (unless a piece is not UTF-8)."""
    cdef Py_ssize_t total = 0, count
    cdef lxb_dom_node_t *node
    if root.type == NODE_TEXT:
        count = _piece_len(root)
        if count < 0:
            return len(_text(root))
        total += count
    node = root.first_child
    while node != NULL:
        if node.local_name == T_TEXT:
            count = _piece_len(node)
            if count < 0:
                return len(_text(root))
            total += count
        node = next_in_subtree(node, root, True)
    return total


cdef Py_ssize_t _link_text_len(lxb_dom_node_t *root) except -1:
    """What ``sum(len(a.text(deep=True)) for a in node.css("a"))`` gives (the node included)."""
    cdef Py_ssize_t total = 0
    cdef lxb_dom_node_t *node = root
    while node != NULL:
        if node.type == NODE_ELEMENT and node.local_name == T_A:
            total += _text_len(node)
        node = next_in_subtree(node, root, True)
    return total


def text_length(node) -> int:
    """``len(node.text(deep=True))``."""
    return _text_len(as_node(node.mem_id))


def link_text_length(node) -> int:
    """Characters of link text under ``node``, each ``<a>`` counted as ``node.css("a")`` lists it."""
    return _link_text_len(as_node(node.mem_id))


# ---------------------------------------------------------------- attributes

cdef inline bint _name_is(const lxb_char_t *got, size_t got_len, bytes want) noexcept:
    return got != NULL and got_len == <size_t>len(want) and memcmp(got, <const char *>want, got_len) == 0


cdef object _decode(const lxb_char_t *data, size_t length):
    return PyUnicode_DecodeUTF8(<const char *>data, length, "replace")


cdef object _value(lxb_dom_attr_t *attr):
    """An attribute's value as ``attributes`` reports it: str, or None without a value."""
    if attr.value == NULL or attr.value.data == NULL:
        return None
    return _decode(attr.value.data, attr.value.length)


cdef lxb_dom_attr_t *_by_qname(lxb_dom_element_t *el, bytes name) noexcept:
    """The attribute ``attributes[name]`` reads: the last one with that qualified name."""
    cdef lxb_dom_attr_t *attr = el.first_attr
    cdef lxb_dom_attr_t *found = NULL
    cdef const lxb_char_t *got
    cdef size_t got_len = 0
    while attr != NULL:
        got = ATTR_QNAME(<void *>attr, &got_len)
        if _name_is(got, got_len, name):
            found = attr
        attr = attr.next
    return found


cdef object _get(lxb_dom_element_t *el, bytes name):
    """``node.attributes.get(name)``."""
    cdef lxb_dom_attr_t *attr = _by_qname(el, name)
    return None if attr == NULL else _value(attr)


cdef dict _attributes(lxb_dom_element_t *el):
    """``node.attributes``."""
    cdef dict out = {}
    cdef lxb_dom_attr_t *attr = el.first_attr
    cdef const lxb_char_t *got
    cdef size_t got_len = 0
    while attr != NULL:
        got = ATTR_QNAME(<void *>attr, &got_len)
        out[_decode(got, got_len)] = _value(attr)
        attr = attr.next
    return out


cdef lxb_dom_attr_t *_by_local(lxb_dom_element_t *el, bytes name) noexcept:
    """The attribute a CSS ``[name]`` selector tests: the first with that local name."""
    return find_attr(el, <const char *>name, len(name), &FNS)


cdef bint _same(const lxb_char_t *a, size_t n, const lxb_char_t *b, size_t m, bint caseless) noexcept:
    cdef size_t i
    cdef unsigned char x, y
    if n != m:
        return False
    if not caseless:
        return memcmp(a, b, n) == 0
    for i in range(n):
        x, y = a[i], b[i]
        if 0x41 <= x <= 0x5A:
            x += 32
        if 0x41 <= y <= 0x5A:
            y += 32
        if x != y:
            return False
    return True


cdef bint _attr_equals(lxb_dom_element_t *el, bytes name, bytes want, bint caseless) noexcept:
    """CSS ``[name="want"]``: an attribute without a value compares as the empty string."""
    cdef lxb_dom_attr_t *attr = _by_local(el, name)
    if attr == NULL:
        return False
    if attr.value == NULL or attr.value.data == NULL:
        return len(want) == 0
    return _same(attr.value.data, attr.value.length, <const lxb_char_t *><const char *>want, len(want), caseless)


cdef inline bint _quirks(lxb_dom_node_t *node) noexcept:
    return (<document_head_t *>node.owner_document).compat_mode == QUIRKS


# ---------------------------------------------------------------- furniture

_FURNITURE_CUES = (b"hidden", b"aria-hidden", b"style", b"role")


cdef bint _may_be_hidden(lxb_dom_element_t *el) noexcept:
    """True when ``el`` has an attribute ``is_hidden`` or ``has_boilerplate_role`` reads."""
    cdef lxb_dom_attr_t *attr = el.first_attr
    cdef const lxb_char_t *got
    cdef size_t got_len = 0
    while attr != NULL:
        got = ATTR_QNAME(<void *>attr, &got_len)
        for cue in _FURNITURE_CUES:
            if _name_is(got, got_len, cue):
                return True
        attr = attr.next
    return False


cdef int _furniture(lxb_dom_node_t *node) except -1:
    """Climbs from ``node`` (any node: text and comments have no name or attributes to test)."""
    cdef uintptr_t tag
    while node != NULL:
        if node.type == NODE_ELEMENT:
            tag = node.local_name
            if tag == T_BODY or tag == T_HTML:
                return 0
            if tag == T_HEADER or tag == T_FOOTER or tag == T_NAV or tag == T_ASIDE or tag == T_DIALOG:
                return 1
            if _may_be_hidden(<lxb_dom_element_t *>node):
                attrs = _attributes(<lxb_dom_element_t *>node)
                if is_hidden(attrs) or has_boilerplate_role(attrs):
                    return 1
        node = node.parent
    return 0


def in_furniture(node) -> bool:
    """True when ``node`` or an ancestor is a header, footer, menu, dialog or hidden element."""
    return _furniture(as_node(node.mem_id)) == 1


# ---------------------------------------------------------------- head fields and links

cdef int _meta_matches(lxb_dom_element_t *el) noexcept:
    """How many of the head selectors' ``meta[...]`` alternatives ``el`` matches."""
    return (
        _attr_equals(el, b"name", b"description", False)
        + _attr_equals(el, b"property", b"og:title", False)
        + _attr_equals(el, b"property", b"og:description", False)
    )


cdef void _head_entry(lxb_dom_node_t *node, list entries) except *:
    """Append ``node``'s (key, value) to ``entries`` once per head selector it matches."""
    cdef lxb_dom_element_t *el = <lxb_dom_element_t *>node
    cdef uintptr_t tag = node.local_name
    cdef int times = 0
    if tag == T_TITLE:
        entries.append(("title", _text(node)))
    elif tag == T_META:
        times = _meta_matches(el)
        if times:
            key = (_get(el, b"name") or _get(el, b"property") or "").lower()
            entry = (key, _get(el, b"content"))
            for _ in range(times):
                entries.append(entry)
    elif tag == T_LINK:  # ``rel`` is one of HTML's case-insensitive attributes (in HTML documents)
        if _attr_equals(el, b"rel", b"canonical", node.ns == NS_HTML):
            entries.append(("canonical", _get(el, b"href")))
    elif tag == T_BASE:
        if _by_local(el, b"href") != NULL:
            entries.append(("base", _get(el, b"href")))


def head_and_hrefs(root) -> tuple:
    """The head entries (``HEAD_FIELDS`` matches as (key, value)) and every ``a[href]`` value.

    One walk of the document from ``root`` (``tree.root``) for what two CSS queries gave.
    """
    cdef lxb_dom_node_t *top = as_node(root.mem_id)
    cdef lxb_dom_node_t *node = top
    cdef lxb_dom_element_t *el
    cdef uintptr_t tag
    cdef list entries = [], hrefs = []
    while node != NULL:
        if node.type == NODE_ELEMENT:
            tag = node.local_name
            if tag == T_A:
                el = <lxb_dom_element_t *>node
                if _by_local(el, b"href") != NULL:
                    hrefs.append(_get(el, b"href") or "")
            elif tag == T_TITLE or tag == T_META or tag == T_LINK or tag == T_BASE:
                _head_entry(node, entries)
        node = next_in_subtree(node, top, True)
    return entries, hrefs


include "lxbtree_select.pxi"
include "lxbtree_probe.pxi"

_load()
_resolve_ids()
_check_or_refuse()
