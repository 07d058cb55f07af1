# The Renderer itself: a port of ccrawl/extract/render.py, method for method (same names), over
# lxb_dom_node_t pointers instead of selectolax nodes. Included by h2mwalk.pyx.


cdef class _Ctx:
    """Output of one container: finished blocks and the inline run being gathered."""

    cdef list blocks
    cdef list md
    cdef list tx

    def __cinit__(self):
        self.blocks = []
        self.md = []
        self.tx = []


cdef class Renderer:
    """One document's walk; create one per document (it holds counters and notes)."""

    cdef public object resolver
    cdef public object budget
    cdef public bint prune
    cdef public bint link_targets
    cdef public Py_ssize_t root_chars
    cdef public bint in_article
    cdef public list notes
    cdef public bint truncated
    cdef public bint stopped
    cdef Py_ssize_t comment_anchors   # link-less anchors named as comments on the page, -1 until counted
    cdef public Py_ssize_t nodes
    cdef public Py_ssize_t chars
    cdef public Py_ssize_t link_chars
    cdef public Py_ssize_t links
    cdef public Py_ssize_t table_cells
    cdef public Py_ssize_t flushes
    cdef public Py_ssize_t drops
    cdef public Py_ssize_t linked_headings
    cdef public Py_ssize_t markup
    cdef public double deadline
    cdef int in_link
    cdef int in_table
    cdef unsigned int in_emphasis     # bit per emphasis code
    cdef dict destinations
    cdef dict _resolved               # the Resolver's cache (href -> URL), when it has one
    cdef Py_ssize_t floor
    cdef bint _depth_noted
    cdef Py_ssize_t max_depth
    cdef Py_ssize_t max_nodes
    cdef Py_ssize_t max_chars
    cdef Py_ssize_t max_table_cells
    cdef Buf _scratch

    def __cinit__(self):
        self._scratch.data = NULL
        self._scratch.length = self._scratch.capacity = self._scratch.pieces = 0

    def __dealloc__(self):
        free(self._scratch.data)

    def __init__(self, resolver, budget, *, bint prune, Py_ssize_t root_chars=0, started=None,
                 bint link_targets=True):
        self.resolver = resolver
        self.link_targets = link_targets
        self.budget = budget
        self.prune = prune
        self.root_chars = root_chars
        self.in_article = False
        self.notes = []
        self.truncated = False
        self.stopped = False
        self.comment_anchors = -1
        self.nodes = self.chars = self.link_chars = self.links = self.table_cells = 0
        self.in_link = self.in_table = 0
        self.in_emphasis = 0
        self.flushes = self.drops = self.markup = 0
        self.linked_headings = 0
        self.destinations = {}
        cache = getattr(resolver, "cache", None)
        self._resolved = cache if type(cache) is dict else None
        self.floor = 0
        self.deadline = (time.perf_counter() if started is None else started) + budget.max_seconds
        self._depth_noted = False
        self.max_depth = budget.max_depth
        self.max_nodes = budget.max_nodes
        self.max_chars = budget.max_chars
        self.max_table_cells = budget.max_table_cells

    # -- entry point -------------------------------------------------------------------------

    def render(self, root):
        """Markdown and plain text of ``root``'s content (a selectolax LexborNode)."""
        cdef _Ctx ctx = _Ctx()
        cdef lxb_dom_node_t *start = as_node(root.mem_id)
        if start.parent != NULL and start.parent.first_child == start and root.parent is None:
            # The root of a fragment (``LexborHTMLParser(html, is_fragment=True).root``): its
            # siblings belong to the fragment too, and selectolax walks them all from the
            # hidden wrapper above it.
            start = start.parent
        self._children(start, ctx, 0)
        self._flush(ctx, "p")
        blocks = _drop_orphan_headings(ctx.blocks)
        if self.prune:
            blocks = finish_blocks(blocks)
        while blocks and blocks[-1][2] == "hr":
            blocks.pop()
        while blocks and blocks[0][2] == "hr":
            blocks.pop(0)
        if not self.link_targets:
            blocks = drop_image_marks(blocks)
        markdown = "\n\n".join([b[0] for b in blocks])
        text = "\n".join([b[1] for b in blocks if b[1]])
        limit = self.max_chars
        if len(markdown) > limit or len(text) > limit:
            if not any(n.startswith("chars:") for n in self.notes):
                self.notes.append(f"chars: output cut at {limit} characters")
            self.truncated = True
            markdown, text = markdown[:limit], text[:limit]
        return markdown, text

    # -- guards ------------------------------------------------------------------------------

    cdef int _stop(self, str note) except -1:
        self.stopped = True
        self.truncated = True
        self.notes.append(note)
        return 0

    cdef bint _tick(self) except -1:
        self.nodes += 1
        if not self.nodes & 255:
            return self._tick_check()
        return not self.stopped

    cdef bint _tick_check(self) except -1:
        if self.nodes >= self.max_nodes:
            self._stop(f"nodes: stopped after {self.nodes} nodes")
        elif time.perf_counter() > self.deadline:
            self._stop(f"time: stopped after {self.budget.max_seconds:g} s")
        elif self.chars >= self.max_chars:
            self._stop(f"chars: stopped after {self.chars} characters")
        return not self.stopped

    # -- walking -----------------------------------------------------------------------------

    cdef int _children(self, lxb_dom_node_t *node, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef lxb_dom_node_t *child = node.first_child
        cdef lxb_dom_node_t *following
        cdef lxb_dom_character_data_t *cd
        cdef TagInfo info
        while child != NULL:
            if self.stopped:
                return 0
            following = child.next
            if child.local_name == TAG_TEXT:
                cd = <lxb_dom_character_data_t *>child
                if cd.data.data != NULL and cd.data.length:
                    self._text_bytes(cd.data.data, cd.data.length, ctx)
            else:
                info = _info(child)
                if not info.flags & F_SKIP:
                    self.nodes += 1
                    if not self.nodes & 255 and not self._tick_check():
                        return 0
                    if depth >= self.max_depth:
                        self._flatten(child, ctx)
                    elif info.flags & F_INLINE:
                        self._inline(child, info, ctx, depth + 1)
                    else:
                        self._block(child, info, ctx, depth + 1)
            child = following
        return 0

    cdef int _flatten(self, lxb_dom_node_t *node, _Ctx ctx) except -1:
        if not self._depth_noted:
            self._depth_noted = True
            self.truncated = True
            self.notes.append(f"depth: content nested deeper than {self.max_depth} kept as flat text")
        self._text(_deep_text(node, " ", 1), ctx)
        return 0

    cdef int _text(self, str raw, _Ctx ctx) except -1:
        if not raw:
            return 0
        if raw.isspace():
            ctx.md.append(" ")
            ctx.tx.append(" ")
            return 0
        plain = " ".join(raw.split())
        cdef Py_ssize_t n = len(plain)
        self.chars += n
        if self.in_link:
            self.link_chars += n
        lead = " " if Py_UNICODE_ISSPACE(raw[0]) else ""
        trail = " " if Py_UNICODE_ISSPACE(raw[len(raw) - 1]) else ""
        ctx.md.append(lead + _escape(plain) + trail)
        ctx.tx.append(lead + plain + trail)
        return 0

    cdef int _text_bytes(self, const lxb_char_t *data, size_t length, _Ctx ctx) except -1:
        """:meth:`_text` of a text node's UTF-8 bytes, squeezed before anything is decoded.

        The squeezed text is decoded with the lead and trail space it gets, so the text piece
        is one string, and the Markdown piece the same one when nothing needs escaping.
        """
        cdef int edges = 0
        cdef Py_ssize_t n, lead, trail
        cdef Buf *buf = &self._scratch
        if _ascii_space_only(data, length):
            ctx.md.append(" ")
            ctx.tx.append(" ")
            return 0
        buf.length = 0
        _buf_add(buf, b" ", 1)
        _squeeze(data, length, buf, &edges)
        if buf.length == 1:
            ctx.md.append(" ")
            ctx.tx.append(" ")
            return 0
        lead = 1 if edges & 1 else 0
        trail = 1 if edges & 2 else 0
        if trail:
            _buf_add(buf, b" ", 1)
        piece = PyUnicode_DecodeUTF8(buf.data + 1 - lead, buf.length - 1 + lead, "replace")
        n = len(piece) - lead - trail
        self.chars += n
        if self.in_link:
            self.link_chars += n
        ctx.tx.append(piece)
        if not edges & 4:
            ctx.md.append(piece)
            return 0
        if not lead and not trail:
            ctx.md.append(_escape_inline(piece))
            return 0
        escaped = _escape_inline(piece[lead:len(piece) - trail])
        ctx.md.append((" " if lead else "") + escaped + (" " if trail else ""))
        return 0

    cdef int _flush(self, _Ctx ctx, str kind) except -1:
        cdef str md, tx
        cdef bint has_break
        cdef int flags
        if not ctx.md:
            return 0
        self.flushes += 1
        if _all_space(ctx.md):
            _list_set_slice(ctx.md, 0, PY_SSIZE_T_MAX, NULL)
            _list_set_slice(ctx.tx, 0, PY_SSIZE_T_MAX, NULL)
            return 0
        md = _strip("".join(ctx.md))
        tx = _strip("".join(ctx.tx))
        _list_set_slice(ctx.md, 0, PY_SSIZE_T_MAX, NULL)
        _list_set_slice(ctx.tx, 0, PY_SSIZE_T_MAX, NULL)
        flags = _space_flags(md)
        if flags & 1:
            md = _squeeze_spaces(md)
            tx = _squeeze_spaces(tx)
        has_break = flags & 2       # _breaks keeps a newline wherever there was one
        if has_break:
            md = _breaks(md, "\\\n")
            tx = _breaks(tx, "\n")
        if self.prune and len(tx) < _METADATA_MAX and not self.in_table and _maybe_metadata(tx) and is_metadata_line(tx):
            return 0
        if (self.prune and tx and tx[0] in _ARTICLE_END_FIRST and not self.in_table
                and self.chars - self.link_chars >= _THREAD_AFTER and _ARTICLE_END.match(tx) is not None):
            self.stopped = True  # a rights notice or a tool line: the article has ended (see render.py)
            return 0
        if (md[0] in u"#>+=-0123456789" or has_break) and _maybe_line_starts(md):
            md = escape_line_starts(md)
        ctx.blocks.append((md, tx, kind))
        return 0

    # -- inline ------------------------------------------------------------------------------

    cdef int _inline(self, lxb_dom_node_t *node, TagInfo info, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef Py_ssize_t start, flushes, floor, markup
        cdef unsigned int bit
        if info.kind == K_BR:
            ctx.md.append("\n")
            ctx.tx.append("\n")
            return 0
        if info.kind == K_IMG:
            return self._image(node, ctx)
        if info.kind == K_WBR:
            return 0
        if self.prune and self._skip_furniture(node, info):
            return 0
        if info.kind == K_CODE:
            return self._code(node, ctx)
        start, flushes, floor = len(ctx.md), self.flushes, self.floor
        self.floor = start
        if info.kind == K_A:
            if self.prune and self.chars - self.link_chars >= _THREAD_AFTER and _attr(node, &A_HREF) == NULL:
                name = _anchor_name(node)
                if name and _COMMENTS_ANCHOR.fullmatch(name) is not None and self._one_comments_anchor(node):
                    self.stopped = True  # the comments' anchor: the article has ended (see render.py)
                    return 0
            self.in_link += 1
            self.links += 1
            self._children(node, ctx, depth)
            self.in_link -= 1
            self.floor = floor
            if self.in_link == 0 and flushes == self.flushes:
                self._wrap_link(node, ctx, start)
            return 0
        bit = 1u << info.emph
        if info.emph == 0 or self.in_emphasis & bit:
            self._children(node, ctx, depth)
            self.floor = floor
            return 0
        self.in_emphasis |= bit
        markup = self.markup
        self._children(node, ctx, depth)
        self.in_emphasis &= ~bit
        self.floor = floor
        if flushes == self.flushes and markup == self.markup:
            self._wrap(ctx, start, _MARKERS[info.emph])
        return 0

    cdef bint _one_comments_anchor(self, lxb_dom_node_t *node) except -1:
        """True when the page has at most two link-less ``a`` named as the comments (render.py's twin)."""
        cdef lxb_dom_node_t *top = node
        cdef uintptr_t addr
        cdef lxb_dom_node_t *a
        if self.comment_anchors < 0:
            while top.parent != NULL:
                top = top.parent
            self.comment_anchors = 0
            for addr in _anchors(top):
                a = <lxb_dom_node_t *>addr
                if _attr(a, &A_HREF) == NULL:
                    name = _anchor_name(a)
                    if name and _COMMENTS_ANCHOR.fullmatch(name) is not None:
                        self.comment_anchors += 1
        return self.comment_anchors <= 2

    cdef int _code(self, lxb_dom_node_t *node, _Ctx ctx) except -1:
        code = " ".join(_deep_text(node, "", 0).split())
        if code:
            self.chars += len(code)
            if self.in_link:
                self.link_chars += len(code)
            if ctx.md and ctx.md[-1].endswith("`"):
                ctx.md.append(_escape(code))
            else:
                ctx.md.append(code_span(code))
                self.markup += 1
            ctx.tx.append(code)
        return 0

    cdef tuple _split_space(self, _Ctx ctx, Py_ssize_t start):
        cdef str content
        if len(ctx.md) == start + 1:
            content = ctx.md[start]
        else:
            content = "".join(ctx.md[start:])
        inner = _strip(content)
        lead = " " if inner and content[0] == " " else ""
        trail = " " if inner and content[-1] == " " else ""
        return lead, inner, trail

    cdef int _wrap(self, _Ctx ctx, Py_ssize_t start, str marker) except -1:
        lead, inner, trail = self._split_space(ctx, start)
        if not inner or _space_flags(inner) & 2:
            return 0
        m = _EDGE_PUNCT.match(inner)
        if m is None:
            return 0
        head, core, tail = m.group(1), m.group(2), m.group(3)
        if head.endswith("\\") or core.endswith("\\"):
            return 0
        prev = ctx.md[start - 1] if start else ""
        if not lead and not head and prev.endswith(marker[0]) and not prev.endswith("\\" + marker[0]):
            run = len(prev) - len(prev.rstrip(marker[0]))
            if run == len(marker) and start - 1 >= self.floor:
                ctx.md[start - 1] = prev[: -len(marker)]
                ctx.md[start:] = [f"{core}{marker}{tail}{trail}"]
            return 0
        ctx.md[start:] = [f"{lead}{head}{marker}{core}{marker}{tail}{trail}"]
        return 0

    cdef int _wrap_link(self, lxb_dom_node_t *node, _Ctx ctx, Py_ssize_t start) except -1:
        if not self.link_targets:
            return 0
        lead, inner, trail = self._split_space(ctx, start)
        if not inner:
            return 0
        href = _attr_value(node, &A_HREF)
        url = self._resolve(href) if href else ""
        if not url or _space_flags(inner) & 2:
            return 0
        if not lead and start and _ends_with_char(ctx.md[start - 1], u"!") and _ends_with_bare(ctx.md[start - 1], "!"):
            ctx.md[start - 1] = ctx.md[start - 1][:-1] + "\\!"
        ctx.md[start:] = [f"{lead}[{inner}]({self._destination(url)}){trail}"]
        self.markup += 1
        return 0

    cdef object _resolve(self, str href):
        """``resolver.resolve(href)``, read from the resolver's own cache when it is there."""
        if self._resolved is not None:
            url = self._resolved.get(href)
            if url is not None:
                return url
        return self.resolver.resolve(href)

    cdef str _destination(self, str url):
        dest = self.destinations.get(url)
        if dest is None:
            dest = self.destinations[url] = _destination_of(url)
        return dest

    cdef int _image(self, lxb_dom_node_t *node, _Ctx ctx) except -1:
        alt = " ".join((_attr_value(node, &A_ALT) or "").split())
        if not alt:
            return 0
        if not self.link_targets:  # links="text": an image would be its alt words alone
            ctx.md.append(IMAGE_MARK)
            self.markup += 1
            return 0
        src = _attr_value(node, &A_SRC) or _attr_value(node, &A_DATA_SRC) or ""
        url = "" if src.startswith("data:") else self._resolve(src)
        ctx.md.append(f"![{_escape(alt)}]({_destination_of(url)})")
        self.markup += 1
        return 0

    # -- blocks ------------------------------------------------------------------------------

    cdef bint _skip_furniture(self, lxb_dom_node_t *node, TagInfo info) except -1:
        """True when a subtree is page furniture and small enough to be sure of it."""
        if info.flags & F_BOILER:
            return self._small(node)
        if node.type != NODE_ELEMENT or (<lxb_dom_element_t *>node).first_attr == NULL:
            return False
        kind = _verdict(node, not info.flags & F_CONTAINER)
        if kind == _KEEP_KIND:
            return False
        if kind == _CAPTION_KIND:  # short, or it is no caption (see boilerplate.CAPTION_MAX_CHARS)
            return self._small(node) and len(_deep_text(node, "", 0)) < _CAPTION_MAX_CHARS
        if kind == _COMMENTS_KIND and self.chars - self.link_chars >= _COMMENTS_AFTER:
            # A comment thread after the article's text, however long: unless the article is in it.
            return not _has_content_marker(node)
        return kind == _HIDDEN_KIND or self._small(node)

    cdef bint _small(self, lxb_dom_node_t *node) except -1:
        if _has_content_marker(node):
            return False
        if self.root_chars < 500:
            return True
        return len(_deep_text(node, "", 0)) < 0.5 * self.root_chars

    cdef int _block(self, lxb_dom_node_t *node, TagInfo info, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef Py_ssize_t before_blocks, chars, link_chars, links, drops, teasers
        if self.prune and (
            self._skip_furniture(node, info)
            or info.flags & F_PRUNED
            or (info.kind == K_HEADER and not self.in_article)
        ):
            if ctx.blocks and ctx.blocks[-1][2] == "h":
                self._drop(ctx)
            return 0
        if ctx.md:
            self._flush(ctx, "p")
        before_blocks = len(ctx.blocks)
        if self.prune and info.flags & F_PRECHECK and self._dense_before_walk(node):
            self._drop(ctx)
            return 0
        chars, link_chars, links, drops = self.chars, self.link_chars, self.links, self.drops
        if info.level:
            self._heading(node, info.level, ctx, depth)
        elif info.flags & F_LIST:
            self._list(node, info.kind == K_OL, ctx, depth)
        elif info.kind == K_PRE:
            self._pre(node, ctx)
        elif info.kind == K_QUOTE:
            self._quote(node, ctx, depth)
        elif info.kind == K_TABLE:
            self._table(node, ctx, depth)
        elif info.kind == K_HR:
            ctx.blocks.append(("---", "", "hr"))
        else:
            teasers = self.linked_headings
            self._children(node, ctx, depth)
            if ctx.md:
                self._flush(ctx, "p")
            if self.prune and self.linked_headings != teasers and self._teasers(chars, link_chars, teasers):
                del ctx.blocks[before_blocks:]
                self._drop(ctx)
                self.chars, self.link_chars, self.links = chars, link_chars, links
                return 0
        if not self.prune:
            return 0
        if self.links != links and _link_dense(
            self.chars - chars, self.link_chars - link_chars, self.links - links, info.level != 0
        ):
            del ctx.blocks[before_blocks:]
            self._drop(ctx)
            self.chars, self.link_chars, self.links = chars, link_chars, links
        elif self.drops != drops and _only_titles_left(ctx.blocks, before_blocks):
            del ctx.blocks[before_blocks:]
            self._drop(ctx)
        return 0

    cdef bint _teasers(self, Py_ssize_t chars, Py_ssize_t link_chars, Py_ssize_t teasers) except -1:
        """True when the block just rendered is teaser cards (see render.py)."""
        cdef Py_ssize_t own = (self.chars - chars) - (self.link_chars - link_chars)
        return chars - link_chars >= _TEASER_AFTER and own < _TEASER_TEXT * (self.linked_headings - teasers)

    cdef int _drop(self, _Ctx ctx) except -1:
        self.drops += 1
        ctx.blocks.append(DROPPED)
        return 0

    cdef bint _dense_before_walk(self, lxb_dom_node_t *node) except -1:
        cdef list anchors = _anchors(node)
        cdef Py_ssize_t chars, linked = 0
        if len(anchors) < 3:
            return False
        chars = _squeezed_len(_deep_text(node, "", 0))
        for address in anchors:
            linked += _squeezed_len(_deep_text(<lxb_dom_node_t *><uintptr_t>address, "", 0))
        return _link_dense(chars, min(linked, chars), len(anchors), False)

    cdef list _sub(self, lxb_dom_node_t *node, Py_ssize_t depth):
        cdef _Ctx sub = _Ctx()
        cdef Py_ssize_t floor = self.floor
        self.floor = 0
        self._children(node, sub, depth)
        if sub.md:
            self._flush(sub, "p")
        self.floor = floor
        return _drop_orphan_headings(sub.blocks) if self.prune else [b for b in sub.blocks if b[0]]

    cdef int _heading(self, lxb_dom_node_t *node, int level, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef Py_ssize_t chars = self.chars, link_chars = self.link_chars
        blocks = self._sub(node, depth)
        if self.chars != chars and self.chars - chars == self.link_chars - link_chars:
            self.linked_headings += 1
        md = _one_line(blocks)
        tx = " ".join([b[1].replace("\n", " ") for b in blocks]).strip()
        if self.prune and chars - link_chars >= _THREAD_AFTER and _COMMENTS_HEADING.fullmatch(tx) is not None:
            self.stopped = True  # the comments begin: the article has ended (see render._THREAD_AFTER)
            return 0
        if md:
            if md.endswith("#") or md.endswith("\n"):
                md = escape_heading_end(md)
            ctx.blocks.append(("#" * level + " " + md, tx, "h"))
        return 0

    cdef int _pre(self, lxb_dom_node_t *node, _Ctx ctx) except -1:
        cdef lxb_dom_node_t *el
        cdef TagInfo info
        cdef int i
        code = _deep_text(node, "", 0).strip("\n")
        if not code.strip():
            return 0
        self.chars += len(code)
        lang = ""
        for i in range(2):
            el = node if i == 0 else node.first_child
            if el != NULL and el.local_name != TAG_TEXT:
                info = _info(el)
                if info.kind == K_PRE or info.is_code_tag:
                    m = _LANG_CLASS.search(_attr_value(el, &A_CLASS) or "")
                    if m:
                        lang = m.group(1)
                        break
        fence = code_fence(code)
        ctx.blocks.append((f"{fence}{lang}\n{code}\n{fence}", code, "pre"))
        return 0

    cdef int _quote(self, lxb_dom_node_t *node, _Ctx ctx, Py_ssize_t depth) except -1:
        blocks = self._sub(node, depth)
        if not blocks:
            return 0
        body = "\n\n".join([b[0] for b in blocks])
        md = "\n".join([("> " + line) if line else ">" for line in body.split("\n")])
        ctx.blocks.append((md, "\n".join([b[1] for b in blocks if b[1]]), "quote"))
        return 0

    cdef int _list(self, lxb_dom_node_t *node, bint ordered, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef Py_ssize_t number = 1, width = 2
        cdef lxb_dom_node_t *child = node.first_child
        cdef lxb_dom_node_t *following
        cdef lxb_dom_character_data_t *cd
        cdef TagInfo info
        cdef _Ctx sub
        cdef list items = []
        cdef list texts = []
        if ordered:
            start = (_attr_value(node, &A_START) or "").strip()
            number = int(start) if start.isdigit() and len(start) < 9 else 1
        while child != NULL:
            following = child.next
            if child.type == NODE_TEXT:
                cd = <lxb_dom_character_data_t *>child
                if _html_space_only(cd.data.data, cd.data.length):
                    child = following
                    continue
            if self.stopped:
                break
            if child.local_name == TAG_TEXT:
                raw = _text_content(child)
                if raw and raw.strip():
                    sub = _Ctx()
                    self._text(raw, sub)
                    self._flush(sub, "p")
                    blocks = sub.blocks
                else:
                    child = following
                    continue
            else:
                info = _info(child)
                if info.flags & F_SKIP or not self._tick() or (self.prune and self._skip_furniture(child, info)):
                    child = following
                    continue
                if info.flags & F_LIST and items:
                    nested = self._sub_list(child, info.kind == K_OL, depth + 1)
                    if nested:
                        items[-1] += "\n" + _indent(nested[0], width)
                        texts[-1] += "\n" + nested[1]
                    child = following
                    continue
                blocks = self._sub(child, depth + 1)
            child = following
            if not blocks:
                continue
            marker = f"{number}. " if ordered else "- "
            width = len(marker)
            number += 1
            items.append(marker + _join_item(blocks, len(marker)))
            texts.append("\n".join([b[1] for b in blocks if b[1]]))
        if items:
            ctx.blocks.append(("\n".join(items), "\n".join([t for t in texts if t]), "list"))
        return 0

    cdef object _sub_list(self, lxb_dom_node_t *node, bint ordered, Py_ssize_t depth):
        cdef _Ctx sub = _Ctx()
        if depth >= self.max_depth:  # as in _children: what is nested deeper is kept as flat text
            self._flatten(node, sub)
            self._flush(sub, "p")
        else:
            self._list(node, ordered, sub, depth)
        return (sub.blocks[0][0], sub.blocks[0][1]) if sub.blocks else None

    cdef int _table(self, lxb_dom_node_t *node, _Ctx ctx, Py_ssize_t depth) except -1:
        cdef list rows = _table_rows(node, self.max_table_cells - self.table_cells + 1)
        cdef Py_ssize_t ncols = 0
        cdef lxb_dom_node_t *cell
        cdef lxb_dom_node_t *first
        for _, cells in rows:
            ncols = max(ncols, len(cells))
        if ncols < 2 or len(rows) < 2 or _has_nested_table(node):
            self._children(node, ctx, depth)
            self._flush(ctx, "p")
            return 0
        md_rows = []
        tx_rows = []
        header_is_th = rows[0][0]
        for _, cells in rows:
            if self.stopped:
                break
            if self.table_cells + len(cells) > self.max_table_cells:
                if not any(n.startswith("table:") for n in self.notes):
                    self.notes.append(f"table: cut after {self.table_cells} cells")
                self.truncated = True
                self.table_cells = self.max_table_cells
                break
            self.table_cells += len(cells)
            md_cells = []
            tx_cells = []
            plain_at = []
            for address in cells:
                cell = <lxb_dom_node_t *><uintptr_t>address
                first = cell.first_child
                if first != NULL and first.next == NULL and first.local_name == TAG_TEXT:
                    plain = " ".join((_text_content(first) or "").split())
                    self.chars += len(plain)
                    plain_at.append(len(md_cells))
                    md_cells.append(plain)
                    tx_cells.append(plain)
                    continue
                self.in_table += 1
                blocks = self._sub(cell, depth + 2)
                self.in_table -= 1
                md_cells.append(_one_line(blocks))
                tx_cells.append(" ".join([b[1].replace("\n", " ") for b in blocks]).strip())
            if plain_at:
                joined = "\0".join([md_cells[i] for i in plain_at])
                escaped = _escape_inline(joined).split("\0")
                if len(escaped) != len(plain_at):
                    escaped = [_escape_inline(md_cells[i]) for i in plain_at]
                for i, value in zip(plain_at, escaped):
                    md_cells[i] = value
            if not any(md_cells):
                continue
            md_rows.append(md_cells + [""] * (ncols - len(md_cells)))
            tx_rows.append("\t".join([c for c in tx_cells if c]))
        if not md_rows:
            return 0
        if header_is_th:
            header, body = md_rows[0], md_rows[1:]
        else:
            header, body = [""] * ncols, md_rows
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * ncols]
        lines.extend(["| " + " | ".join(r) + " |" for r in body])
        ctx.blocks.append(("\n".join(lines), "\n".join(tx_rows), "table"))
        return 0


# Bound from render.py's constants at import (see _bind_twin).
cdef Py_ssize_t _TEASER_AFTER = 0
cdef Py_ssize_t _COMMENTS_AFTER = 0
cdef Py_ssize_t _THREAD_AFTER = 0
cdef object _COMMENTS_HEADING = None
cdef object _COMMENTS_ANCHOR = None
cdef object _ARTICLE_END = None
cdef str _ARTICLE_END_FIRST = ""


cdef object _anchor_name(lxb_dom_node_t *node):
    """``attributes.get("name") or attributes.get("id")``."""
    cdef lxb_dom_attr_t *attr = find_attr(<lxb_dom_element_t *>node, "name", 4, &_fns)
    if attr != NULL and attr.value != NULL and attr.value.data != NULL and attr.value.length:
        return _decode(attr.value.data, attr.value.length)
    return _attr_value(node, &A_ID)
cdef Py_ssize_t _TEASER_TEXT = 0
cdef Py_ssize_t _METADATA_MAX = 0
cdef Py_ssize_t _LINK_LIST_LINKS = 0
cdef double _LINK_LIST_DENSITY = 0.0


cdef bint _link_dense(Py_ssize_t chars, Py_ssize_t link_chars, Py_ssize_t links, bint heading):
    """A block that is mostly link text: a menu, a tag list, a "more stories" rail."""
    cdef double density
    if links == 0 or chars == 0:
        return False
    density = <double>link_chars / <double>chars
    if links >= 3 and density > 0.6 and chars - link_chars < 400:
        return True
    if links >= _LINK_LIST_LINKS and density > _LINK_LIST_DENSITY:  # a link list at any length
        return True
    if heading:
        return False
    return (density > 0.9 and chars < 120) or (density >= 0.5 and chars - link_chars < 40)
