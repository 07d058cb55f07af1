# Loading lexbor's name functions and checking the struct layout at import. Included by
# h2mwalk.pyx, after everything it checks.

_PROBE = (
    "<!DOCTYPE html><html><head><title>t</title></head><body>"
    "<div id='main-id' class='a  b' hidden data-x='1 &amp; 2'><p>Hello <b>w\u00f6rld</b>"
    "<a href='/x?a=1&amp;b=2' title=''>link</a></p><!-- note -->"
    "<my-widget foo='bar'>custom \u20ac</my-widget><table><tr><td>c</td></tr></table>"
    "<svg><a xlink:href='/y'>s</a></svg>&nbsp;</div>text&lt;end</body></html>"
)


cdef int _load_qualified_names(bytes so_path) except -1:
    """Find lexbor's qualified-name functions, which ``tag`` and ``attributes`` report."""
    global _element_qname, _attr_qname, _node_remove
    cdef void *handle = dlopen(so_path, RTLD_LAZY | RTLD_NOLOAD)
    if handle == NULL:
        raise ImportError("selectolax's lexbor module is not loaded")
    _element_qname = <qname_fn>dlsym(handle, b"lxb_dom_element_qualified_name")
    _attr_qname = <qname_fn>dlsym(handle, b"lxb_dom_attr_qualified_name")
    _node_remove = <remove_fn>dlsym(handle, b"lxb_dom_node_remove")
    if _element_qname == NULL or _attr_qname == NULL:
        raise ImportError("selectolax's lexbor module does not export the qualified-name functions")
    return 0


cdef dict _struct_attributes(lxb_dom_node_t *node):
    """The ``attributes`` dict, read from the structs."""
    cdef dict found = {}
    cdef lxb_dom_attr_t *attr
    cdef const lxb_char_t *name
    cdef size_t n = 0
    if node.type != NODE_ELEMENT:
        return found
    attr = (<lxb_dom_element_t *>node).first_attr
    while attr != NULL:
        name = _attr_qname(<void *>attr, &n)
        found[_decode(name, n)] = (
            None if attr.value == NULL or attr.value.data == NULL else _decode(attr.value.data, attr.value.length)
        )
        attr = attr.next
    return found


cdef str _compare(object py_node, lxb_dom_node_t *node, lxb_dom_node_t *parent):
    """What differs between a selectolax node and the struct at its address ("" if nothing)."""
    where = f"<{py_node.tag}> at {py_node.mem_id:#x}"
    if node.parent != parent:
        return f"{where}: parent pointer differs"
    if _tag_name(node) != py_node.tag:
        return f"{where}: tag read as {_tag_name(node)!r}"
    if node.local_name == TAG_TEXT:
        if _text_content(node) != py_node.text_content:
            return f"{where}: text read as {_text_content(node)!r}"
        return ""
    if _struct_attributes(node) != py_node.attributes:
        return f"{where}: attributes read as {_struct_attributes(node)!r}"
    if node.type == NODE_ELEMENT:
        if _deep_text(node, "|", 1) != py_node.text(deep=True, separator="|"):
            return f"{where}: deep text differs"
        if (_attr_value(node, &A_CLASS) or "") != (py_node.attributes.get("class") or ""):
            return f"{where}: class differs"
    children = list(py_node.iter(include_text=True))
    cdef lxb_dom_node_t *child = node.first_child
    for py_child in children:
        if child == NULL or <uintptr_t>child != py_child.mem_id:
            return f"{where}: child list differs"
        problem = _compare(py_child, child, node)
        if problem:
            return problem
        child = child.next
    if child != NULL:
        return f"{where}: more children than selectolax reports"
    return ""


def layout_problem():
    """Why this module cannot read selectolax's lexbor, or "" when the probe reads back exactly."""
    tree = _sx.LexborHTMLParser(_PROBE)
    root = tree.root
    if root is None or tree.body is None:
        return "the probe document did not parse"
    cdef lxb_dom_node_t *node = as_node(root.mem_id)
    if node.type != NODE_ELEMENT or node.parent == NULL or node.parent.type != NODE_DOCUMENT:
        return "the root element's type or parent reads wrong"
    problem = _compare(root, node, node.parent)
    if problem:
        return problem
    div = tree.css_first("div")
    cdef lxb_dom_element_t *el = <lxb_dom_element_t *>as_node(div.mem_id)
    if el.attr_class == NULL or el.attr_id == NULL or el.attr_class.value == NULL:
        return "the element's class and id slots read wrong"
    if _decode(el.attr_class.value.data, el.attr_class.value.length) != div.attributes["class"]:
        return "the element's class slot reads wrong"
    return ""


cdef int _learn_attribute_ids() except -1:
    """Give each attribute name the renderer reads its static lexbor id, where it has one.

    A static id is the same in every document (and small); a name without one gets a new id
    per document, so it stays compared by name.
    """
    cdef AttrKey *key
    cdef lxb_dom_attr_t *attr
    cdef list ids = []
    cdef int i, k
    _ATTR_KEYS[0], _ATTR_KEYS[1], _ATTR_KEYS[2], _ATTR_KEYS[3] = &A_HREF, &A_ALT, &A_SRC, &A_DATA_SRC
    _ATTR_KEYS[4], _ATTR_KEYS[5], _ATTR_KEYS[6], _ATTR_KEYS[7] = &A_CLASS, &A_ID, &A_START, &A_STYLE
    _ATTR_KEYS[8], _ATTR_KEYS[9], _ATTR_KEYS[10] = &A_ROLE, &A_HIDDEN, &A_ARIA_HIDDEN
    markup = "<p " + " ".join(name.decode() + "=v" for name in _ATTR_NAMES) + ">x</p>"
    for _ in range(2):
        tree = _sx.LexborHTMLParser(markup)
        attr = (<lxb_dom_element_t *>as_node(tree.css_first("p").mem_id)).first_attr
        found = []
        while attr != NULL:
            found.append(attr.node.local_name)
            attr = attr.next
        ids.append(found)
    if len(ids[0]) != len(_ATTR_NAMES):
        raise ImportError("ccrawl._native.h2mwalk: the probe's attributes read wrong")
    for i in range(len(_ATTR_NAMES)):
        key = _ATTR_KEYS[i]
        key.name = <const char *>(<bytes>_ATTR_NAMES[i])
        key.n = len(_ATTR_NAMES[i])
        key.id = ids[0][i] if ids[0][i] == ids[1][i] and ids[0][i] < STANDARD_TAG_LIMIT else 0
    return 0


LOADED = False


def _load():
    """Find lexbor's functions and check the layout; ``LOADED`` says both succeeded."""
    global LOADED
    so_path = _sx.__file__.encode()
    load_fns(so_path, &_fns)
    _load_qualified_names(so_path)
    _learn_attribute_ids()
    problem = layout_problem()
    if problem:
        raise ImportError(f"ccrawl._native.h2mwalk: lexbor's structs do not read as expected ({problem})")
    LOADED = True


_load()
