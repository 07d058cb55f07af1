# strip_tags: selectolax's ``LexborHTMLParser.strip_tags`` for a whole document in one walk.
# Included by h2mwalk.pyx; lexbor's node removal is found with the qualified-name functions.

ctypedef void (*remove_fn)(lxb_dom_node_t *) noexcept nogil

cdef remove_fn _node_remove = NULL
cdef dict _strip_ids = {}                 # tag name -> lexbor's static tag id


cdef object _static_tag_id(str name):
    """The static tag id lexbor gives elements named ``name``, or None when it has none.

    Learned from a small document: ``strip_tags`` finds elements by the id of the name and no
    prefix, so an element parsed from ``<name>`` carries exactly the id to look for.
    """
    if name in _strip_ids:
        return _strip_ids[name]
    found = None
    if name.isascii() and name.isalnum() and name == name.lower() and name not in ("html", "head", "body"):
        probe = _sx.LexborHTMLParser(f"<html><head></head><body><{name}></{name}></body></html>")
        node = probe.body.child if probe.body is not None else None
        if node is not None and node.tag == name:
            tag_id = as_node(node.mem_id).local_name
            if tag_id < STANDARD_TAG_LIMIT and as_node(node.mem_id).prefix == 0:
                found = tag_id
    _strip_ids[name] = found
    return found


def strip_tags(tree, list tags not None):
    """``tree.strip_tags(tags)`` (twin: ``render.strip_tags_py``): one walk for all the tags.

    selectolax walks the whole document once per tag; this walk removes every element whose
    tag id is one of the tags' (with no prefix, as lexbor matches them) and skips what it
    holds, which leaves the document reading the same. Fragments, documents without a root
    element, and tags without a static id (custom, head/body) go to selectolax itself.
    """
    cdef uintptr_t ids[16]
    cdef Py_ssize_t nids = 0, k
    cdef lxb_dom_node_t *html
    cdef lxb_dom_node_t *doc
    cdef lxb_dom_node_t *node
    cdef lxb_dom_node_t *following
    cdef bint linked = False, match
    root = tree.root
    if root is None or len(tags) > 16 or _node_remove == NULL:
        tree.strip_tags(tags)
        return
    for name in tags:
        tag_id = _static_tag_id(name) if isinstance(name, str) else None
        if tag_id is None:
            tree.strip_tags(tags)
            return
        ids[nids] = tag_id
        nids += 1
    html = as_node(root.mem_id)
    doc = html.parent
    if doc == NULL or doc.type != NODE_DOCUMENT or doc.parent != NULL:
        tree.strip_tags(tags)
        return
    node = doc.first_child
    while node != NULL:
        linked = linked or node == html
        node = node.next
    if not linked:
        tree.strip_tags(tags)
        return
    node = doc.first_child
    while node != NULL:
        match = False
        if node.type == NODE_ELEMENT and node.prefix == 0:
            for k in range(nids):
                if node.local_name == ids[k]:
                    match = True
                    break
        if match:
            following = next_in_subtree(node, doc, False)
            _node_remove(node)
            node = following
        else:
            node = next_in_subtree(node, doc, True)
    # No tags: nothing found, but selectolax records that its document was edited.
    tree.strip_tags([])
