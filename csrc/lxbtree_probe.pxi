# Included by lxbtree.pyx: lexbor's tag ids for this build, and the check made at import.

# ---------------------------------------------------------------- ids and the import check

def _tag_id(str name) -> int:
    """lexbor's id for a standard tag name, read off a probe element (custom ids vary per page)."""
    markup = f"<{name}></{name}>"
    tree = LexborHTMLParser(f"<table><tr>{markup}</tr></table>" if name in ("td", "th") else markup)
    node = tree.css_first(name)
    if node is None or node.tag != name:
        raise ValueError(f"no probe element for tag {name!r}")
    tag = as_node(node.mem_id).local_name
    if tag >= STANDARD_TAG_LIMIT:
        raise ValueError(f"{name!r} is not a standard tag")
    return tag


cdef int _resolve_ids() except -1:
    global T_TEXT, T_A, T_TITLE, T_META, T_LINK, T_BASE, T_BODY, T_HTML
    global T_HEADER, T_FOOTER, T_NAV, T_ASIDE, T_DIALOG, T_P, T_PRE, T_TD, T_ARTICLE, T_MAIN, NS_HTML
    T_A, T_TITLE, T_META, T_LINK, T_BASE = _tag_id("a"), _tag_id("title"), _tag_id("meta"), _tag_id("link"), _tag_id("base")
    T_BODY, T_HTML, T_HEADER, T_FOOTER = _tag_id("body"), _tag_id("html"), _tag_id("header"), _tag_id("footer")
    T_NAV, T_ASIDE, T_DIALOG = _tag_id("nav"), _tag_id("aside"), _tag_id("dialog")
    T_P, T_PRE, T_TD = _tag_id("p"), _tag_id("pre"), _tag_id("td")
    T_ARTICLE, T_MAIN = _tag_id("article"), _tag_id("main")
    tree = LexborHTMLParser("<p>x</p>")
    T_TEXT = as_node(tree.css_first("p").first_child.mem_id).local_name
    NS_HTML = as_node(tree.root.mem_id).ns
    return 0


_PROBES = (
    b"<html lang=en><head><title>T &amp; <b>x</b></title><meta name=description content=' d '>"
    b"<meta property=og:title name=description content=o><meta property=og:description>"
    b"<link rel=CANONICAL href=/c><base href>"
    b"</head><body id=Main class='content x'><header><a href=/h>h\xc3\xa9</a></header>"
    b"<div ID=CONTENT class='POST post  entry' itemprop=articleBody role=main>text <!-- c --> "
    b"<a href>\xff\xfe bad</a><a>no</a><a HREF='/x?a=1&amp;b'>x<i>y</i></a></div>"
    b"<math><a xlink:href=/m href=/n>m</a><mi><![CDATA[cd]]></mi></math>"
    b"<section hidden><p style='display:none' aria-hidden=true role=Navigation>p</p></section>"
    b"<nav><div class=text>n</div></nav><dialog>d</dialog></body></html>"
)
_HEAD_QUERY = (
    'title, meta[name="description"], meta[property="og:title"], meta[property="og:description"], '
    'link[rel="canonical"], base[href]'
)
_CHECK_QUERY = "article, main, [role=\"main\"], #content, #main, .content, .post, .entry, .text, [itemprop=\"articleBody\"]"


def _walk(node):
    """Every node under ``node`` (itself included), by selectolax's own pointers."""
    yield node
    child = node.first_child
    while child is not None:
        yield from _walk(child)
        child = child.next


cdef bint _same_pointer(object other, lxb_dom_node_t *ptr):
    return (other.mem_id if other is not None else 0) == <uintptr_t>ptr


def _node_problem(node) -> str:
    """What differs between selectolax's view of ``node`` and this module's, or ""."""
    cdef lxb_dom_node_t *ptr = as_node(node.mem_id)
    cdef const lxb_char_t *name
    cdef size_t name_len = 0
    if not (_same_pointer(node.first_child, ptr.first_child) and _same_pointer(node.next, ptr.next)):
        return f"child/sibling pointers of <{node.tag}>"
    if (ptr.type == NODE_ELEMENT or ptr.type == NODE_DOCUMENT) and _tag(ptr) != node.tag:
        return f"tag of <{node.tag}>"
    if ptr.type == NODE_ELEMENT:
        name = FNS.element_local_name(<void *>ptr, &name_len)
        if _decode(name, name_len) != node.tag:
            return f"element name of <{node.tag}>"
        if _attributes(<lxb_dom_element_t *>ptr) != node.attributes:
            return f"attributes of <{node.tag}>"
        if _link_text_len(ptr) != sum(len(a.text(deep=True)) for a in node.css("a")):
            return f"link text of <{node.tag}>"
        if _compiled(_CHECK_QUERY).matches(ptr) != sum(m.mem_id == node.mem_id for m in node.css(_CHECK_QUERY)):
            return f"selector matching of <{node.tag}>"
    if _text_len(ptr) != len(node.text(deep=True)):
        return f"text length of <{node.tag}>"
    return ""


def _probe_problem(bytes html) -> str:
    tree = LexborHTMLParser(html)
    for node in _walk(tree.root):
        problem = _node_problem(node)
        if problem:
            return problem
    entries, hrefs = head_and_hrefs(tree.root)
    if hrefs != [a.attributes.get("href") or "" for a in tree.css("a[href]")]:
        return "a[href] values"
    if entries != _head_entries_by_css(tree.root):
        return "head fields"
    return ""


def _head_entries_by_css(root) -> list:
    """What ``head_and_hrefs`` must report for the head, read through selectolax."""
    entries = []
    for node in root.css(_HEAD_QUERY):
        attrs = node.attributes
        if node.tag == "title":
            entries.append(("title", node.text(deep=True)))
        elif node.tag == "meta":
            entries.append(((attrs.get("name") or attrs.get("property") or "").lower(), attrs.get("content")))
        else:
            entries.append(("canonical" if node.tag == "link" else "base", attrs.get("href")))
    return entries


def layout_problem() -> str:
    """Why this module must not be used with the loaded selectolax, or "" when it may."""
    for html in (_PROBES, b"<!DOCTYPE html>" + _PROBES):
        problem = _probe_problem(html)
        if problem:
            return problem
    quirky = LexborHTMLParser(b"<p>q</p>").root
    standard = LexborHTMLParser(b"<!DOCTYPE html><p>s</p>").root
    if not _quirks(as_node(quirky.mem_id)) or _quirks(as_node(standard.mem_id)):
        return "document compat mode"
    return ""


cdef int _check_or_refuse() except -1:
    problem = layout_problem()
    if problem:
        raise ImportError(f"ccrawl._native.lxbtree: lexbor's DOM does not read as expected ({problem})")
    return 0
