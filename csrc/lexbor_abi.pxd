# cython: language_level=3
"""Read-only access to the DOM that selectolax's lexbor builds, without lexbor's headers.

selectolax ships lexbor compiled into ``selectolax/lexbor.*.so`` but not its C headers, so
the few structs a tree walk reads are declared here with lexbor's field order (lexbor as
vendored by selectolax 1.0.x: ``dom/interfaces/{node,element,attr,character_data}.h``,
``core/str.h``). A walk starts from ``LexborNode.mem_id`` (the node's address) while the
parser object that owns the tree is alive. Names come from lexbor's own exported functions,
found with ``dlsym`` in the already-loaded selectolax module.

A layout that does not match (another lexbor) must never be read blindly: every module that
cimports this file checks itself against selectolax's Python API on a probe document at
import (see ``layout_problem``) and refuses to load when anything differs, so ``accel``
falls back to the pure-Python twin.
"""

from libc.stdint cimport uintptr_t
from libc.string cimport memcmp
from posix.dlfcn cimport RTLD_LAZY, dlopen, dlsym


cdef extern from "<dlfcn.h>":
    const int RTLD_NOLOAD

ctypedef unsigned char lxb_char_t


cdef struct lexbor_str_t:
    lxb_char_t *data
    size_t length


cdef struct lxb_dom_node_t:
    void *events                      # lxb_dom_event_target_t
    uintptr_t local_name              # tag id (lowercase, no prefix) or attribute id
    uintptr_t prefix
    uintptr_t ns
    void *owner_document
    lxb_dom_node_t *next
    lxb_dom_node_t *prev
    lxb_dom_node_t *parent
    lxb_dom_node_t *first_child
    lxb_dom_node_t *last_child
    void *user
    int type                          # lxb_dom_node_type_t


cdef struct lxb_dom_attr_t:
    lxb_dom_node_t node
    uintptr_t upper_name
    uintptr_t qualified_name
    lexbor_str_t *value               # NULL for an attribute without a value
    void *owner
    lxb_dom_attr_t *next
    lxb_dom_attr_t *prev


cdef struct lxb_dom_element_t:       # leading fields only: never sized or allocated here
    lxb_dom_node_t node
    uintptr_t upper_name
    uintptr_t qualified_name
    lexbor_str_t *is_value
    lxb_dom_attr_t *first_attr
    lxb_dom_attr_t *last_attr
    lxb_dom_attr_t *attr_id
    lxb_dom_attr_t *attr_class


cdef struct lxb_dom_character_data_t:
    lxb_dom_node_t node
    lexbor_str_t data


cdef enum:
    NODE_ELEMENT = 1
    NODE_TEXT = 3
    NODE_CDATA = 4
    NODE_COMMENT = 8
    NODE_DOCUMENT = 9
    # lexbor's standard tag ids are small enums (LXB_TAG__LAST_ENTRY is 0xc7 in 1.0.x); custom
    # tags get per-document ids far above this, so caches keyed by id stop here.
    STANDARD_TAG_LIMIT = 1024


ctypedef const lxb_char_t *(*name_fn)(void *, size_t *) noexcept nogil


cdef struct LexborFns:
    name_fn element_local_name        # lxb_dom_element_local_name(element, &len)
    name_fn attr_local_name           # lxb_dom_attr_local_name_noi(attr, &len)


cdef inline int load_fns(bytes so_path, LexborFns *fns) except -1:
    """Find lexbor's name functions in selectolax's loaded module (``so_path``)."""
    cdef void *handle = dlopen(so_path, RTLD_LAZY | RTLD_NOLOAD)
    if handle == NULL:
        raise ImportError("selectolax's lexbor module is not loaded")
    fns.element_local_name = <name_fn>dlsym(handle, b"lxb_dom_element_local_name")
    fns.attr_local_name = <name_fn>dlsym(handle, b"lxb_dom_attr_local_name_noi")
    if fns.element_local_name == NULL or fns.attr_local_name == NULL:
        raise ImportError("selectolax's lexbor module does not export the name functions")
    return 0


cdef inline lxb_dom_node_t *as_node(object mem_id):
    """The node behind ``LexborNode.mem_id``."""
    return <lxb_dom_node_t *><uintptr_t>mem_id


cdef inline lxb_dom_attr_t *find_attr(lxb_dom_element_t *el, const char *name, size_t n,
                                      LexborFns *fns) noexcept nogil:
    """Attribute ``name`` (lowercase, ``n`` bytes) of ``el``, or NULL; its ``value`` may be NULL."""
    cdef lxb_dom_attr_t *attr = el.first_attr
    cdef const lxb_char_t *got
    cdef size_t got_len
    while attr != NULL:
        got = fns.attr_local_name(<void *>attr, &got_len)
        if got != NULL and got_len == n and memcmp(got, name, n) == 0:
            return attr
        attr = attr.next
    return NULL


cdef inline lxb_dom_node_t *next_in_subtree(lxb_dom_node_t *node, lxb_dom_node_t *root,
                                            bint descend) noexcept nogil:
    """The node after ``node`` in document order within ``root``'s subtree, or NULL.

    With ``descend`` false the walk skips ``node``'s own descendants.
    """
    if descend and node.first_child != NULL:
        return node.first_child
    while node != root and node.next == NULL:
        node = node.parent
    if node == root:
        return NULL
    return node.next
