# Included by lxbtree.pyx: the main-content candidates and the readability scores.

# ---------------------------------------------------------------- main-content candidates

cdef enum:
    MAX_PER_KIND = 64


cdef class _Query:
    """A selector list of plain ``tag``, ``#id``, ``.class`` and ``[attr="value"]`` alternatives."""

    cdef object keep                   # the bytes the pointers below point into
    cdef int n_tags, n_ids, n_classes, n_attrs
    cdef uintptr_t tags[MAX_PER_KIND]
    cdef const char *ids[MAX_PER_KIND]
    cdef size_t id_lens[MAX_PER_KIND]
    cdef const char *classes[MAX_PER_KIND]
    cdef size_t class_lens[MAX_PER_KIND]
    cdef uint64_t class_len_mask           # bit k set: some class alternative is k bytes (k < 64)
    cdef const char *attr_names[MAX_PER_KIND]
    cdef size_t attr_name_lens[MAX_PER_KIND]
    cdef const char *attr_values[MAX_PER_KIND]
    cdef size_t attr_value_lens[MAX_PER_KIND]
    cdef bint attr_caseless[MAX_PER_KIND]

    def __init__(self, str query):
        self.keep = []
        for part in query.split(","):
            self._add(part.strip())

    cdef int _add(self, str sel) except -1:
        if max(self.n_tags, self.n_ids, self.n_classes, self.n_attrs) >= MAX_PER_KIND:
            raise ValueError("too many selectors for the native candidate query")
        if sel.startswith("#") and _plain(sel[1:]):
            raw = sel[1:].encode()
            self.keep.append(raw)
            self.ids[self.n_ids], self.id_lens[self.n_ids] = <const char *>raw, len(raw)
            self.n_ids += 1
        elif sel.startswith(".") and _plain(sel[1:]):
            raw = sel[1:].encode()
            self.keep.append(raw)
            self.classes[self.n_classes], self.class_lens[self.n_classes] = <const char *>raw, len(raw)
            self.class_len_mask |= (<uint64_t>1) << min(len(raw), 63)
            self.n_classes += 1
        elif sel.startswith("[") and sel.endswith('"]') and '="' in sel:
            name, value = sel[1 : len(sel) - 2].split('="', 1)
            if not _plain(name) or '"' in value or "\\" in value:
                raise ValueError(f"selector {sel!r} is not supported natively")
            raw_name, raw_value = name.lower().encode(), value.encode()
            self.keep += [raw_name, raw_value]
            self.attr_names[self.n_attrs], self.attr_name_lens[self.n_attrs] = <const char *>raw_name, len(raw_name)
            self.attr_values[self.n_attrs], self.attr_value_lens[self.n_attrs] = <const char *>raw_value, len(raw_value)
            self.attr_caseless[self.n_attrs] = name.lower() in _CASELESS_ATTRS
            self.n_attrs += 1
        elif _plain(sel) and sel.isalpha():
            self.tags[self.n_tags] = _tag_id(sel.lower())
            self.n_tags += 1
        else:
            raise ValueError(f"selector {sel!r} is not supported natively")
        return 0

    cdef int matches(self, lxb_dom_node_t *node) except -1:
        """How many alternatives ``node`` (an element) matches: lexbor reports it once for each."""
        cdef lxb_dom_element_t *el = <lxb_dom_element_t *>node
        cdef int count = 0, i
        cdef bint quirks = _quirks(node)
        cdef lexbor_str_t *value
        for i in range(self.n_tags):
            count += node.local_name == self.tags[i]
        if el.attr_id != NULL and el.attr_id.value != NULL and el.attr_id.value.data != NULL:
            value = el.attr_id.value
            for i in range(self.n_ids):
                count += _same(value.data, value.length, <const lxb_char_t *>self.ids[i], self.id_lens[i], quirks)
        if self.n_classes and el.attr_class != NULL and el.attr_class.value != NULL and el.attr_class.value.data != NULL:
            count += self._class_matches(el.attr_class.value, quirks)
        if self.n_attrs and el.first_attr != NULL:
            count += self._attr_matches(el, node.ns == NS_HTML)
        return count

    cdef int _attr_matches(self, lxb_dom_element_t *el, bint html) noexcept:
        """``[name="value"]`` alternatives: each tests the first attribute with its local name."""
        cdef uint64_t seen = 0
        cdef int i, count = 0
        cdef lxb_dom_attr_t *attr = el.first_attr
        cdef const lxb_char_t *got
        cdef size_t got_len = 0
        cdef lexbor_str_t blank
        cdef lexbor_str_t *value
        blank.data, blank.length = <lxb_char_t *>b"", 0
        while attr != NULL:
            got = FNS.attr_local_name(<void *>attr, &got_len)
            for i in range(self.n_attrs):
                if (seen >> i) & 1 or not _same(got, got_len, <const lxb_char_t *>self.attr_names[i],
                                                 self.attr_name_lens[i], False):
                    continue
                seen |= (<uint64_t>1) << i
                value = attr.value if attr.value != NULL and attr.value.data != NULL else &blank
                count += _same(value.data, value.length, <const lxb_char_t *>self.attr_values[i],
                               self.attr_value_lens[i], self.attr_caseless[i] and html)
            attr = attr.next
        return count

    cdef int _class_matches(self, lexbor_str_t *value, bint quirks) noexcept:
        """Class alternatives among the whitespace-separated tokens of ``value``."""
        cdef uint64_t seen = 0
        cdef size_t start = 0, end = 0, n = value.length
        cdef int i, count = 0
        cdef const lxb_char_t *s = value.data
        while start < n:
            while start < n and _space(s[start]):
                start += 1
            end = start
            while end < n and not _space(s[end]):
                end += 1
            if end > start and (self.class_len_mask >> min(end - start, <size_t>63)) & 1:
                for i in range(self.n_classes):
                    if not (seen >> i) & 1 and _same(s + start, end - start, <const lxb_char_t *>self.classes[i],
                                                      self.class_lens[i], quirks):
                        seen |= (<uint64_t>1) << i
                        count += 1
            start = end
        return count


cdef inline bint _space(lxb_char_t c) noexcept nogil:
    return c == 0x20 or c == 0x09 or c == 0x0A or c == 0x0C or c == 0x0D


def _plain(str name) -> bool:
    """True for a selector name without escapes, combinators or pseudo-classes."""
    return bool(name) and all(ch.isalnum() or ch in "-_" for ch in name) and name.isascii()


_queries: dict = {}


cdef _Query _compiled(str query):
    found = _queries.get(query)
    if found is None:
        found = _queries[query] = _Query(query)
    return found


cdef bint _inside(lxb_dom_node_t *node, lxb_dom_node_t *top) noexcept:
    while node != NULL and node != top:
        node = node.parent
    return node != NULL


cdef object _node_at(object start, lxb_dom_node_t *top, lxb_dom_node_t *target):
    """The selectolax node for ``target``, reached from ``start`` (the node at ``top``).

    Goes up from ``start`` by ``parent`` until ``target`` is inside, then down by
    ``first_child``/``next`` (or ``last_child``/``prev`` when the end of a sibling list is
    nearer): selectolax's own objects, no node built from an address.
    """
    cdef list steps = []
    cdef lxb_dom_node_t *node = target
    cdef lxb_dom_node_t *sib
    cdef Py_ssize_t before, after
    while not _inside(target, top):
        top, start = top.parent, start.parent
        if top == NULL or start is None:
            raise RuntimeError("lxbtree: a node to return is not in the searched document")
    while node != top:
        before = after = 0
        sib = node.prev
        while sib != NULL:
            before += 1
            sib = sib.prev
        sib = node.next
        while sib != NULL:
            after += 1
            sib = sib.next
        steps.append((before, after))
        node = node.parent
    found = start
    for before, after in reversed(steps):
        if before <= after:
            found = found.first_child
            for _ in range(before):
                found = found.next
        else:
            found = found.last_child
            for _ in range(after):
                found = found.prev
    if found.mem_id != <uintptr_t>target:
        raise RuntimeError("lxbtree: walking to a candidate reached another node")
    return found


cdef Py_ssize_t _measure(_Query q, lxb_dom_node_t *top, list found) except -1:
    """One walk: ``top``'s text length, and [address, times matched, start, length, link start,
    links above, link length] per match.

    A running count of characters in document order gives each match's length as the count
    on leaving it minus the count on entering it. A second running count weighs each piece by
    the ``<a>`` elements open around it, which gives each match's link text (each ``<a>`` as
    ``css("a")`` lists it) without a walk of its own: the rise of that count inside the match,
    less the links opened above it times its length. A text piece that is not UTF-8 sends every
    length back to ``_text_len`` and ``_link_text_len``, which decode as selectolax does.
    """
    cdef Py_ssize_t acc = 0, lacc = 0, count, links_open = 0
    cdef bint clean = True
    cdef int times
    cdef list open_ = []
    cdef lxb_dom_node_t *node = top
    cdef lxb_dom_node_t *innermost = NULL
    cdef lexbor_str_t *data
    while True:
        if node.type == NODE_ELEMENT:
            times = q.matches(node)
            if times:
                entry = [<uintptr_t>node, times, acc, 0, lacc, links_open, 0]
                found.append(entry)
                open_.append(entry)
                innermost = node
            if node.local_name == T_A:
                links_open += 1
        elif node.local_name == T_TEXT:
            data = _text_data(node)
            if data.data != NULL:
                count = _utf8_count(data.data, data.length)
                if count < 0:
                    clean = False
                else:
                    acc += count
                    lacc += count * links_open
        if node.first_child != NULL:
            node = node.first_child
            continue
        while True:
            if node.type == NODE_ELEMENT and node.local_name == T_A:
                links_open -= 1
            if node == innermost:
                entry = open_.pop()
                entry[3] = acc - entry[2]
                entry[6] = (lacc - entry[4]) - entry[5] * entry[3]
                innermost = <lxb_dom_node_t *><uintptr_t>open_[len(open_) - 1][0] if open_ else NULL
            if node == top:
                if clean:
                    return acc
                for entry in found:
                    entry[3] = _text_len(<lxb_dom_node_t *><uintptr_t>entry[0])
                    entry[6] = _link_text_len(<lxb_dom_node_t *><uintptr_t>entry[0])
                return _text_len(top)
            if node.next != NULL:
                node = node.next
                break
            node = node.parent


cdef int _furniture_memo(lxb_dom_node_t *node, dict memo) except -1:
    """``_furniture`` remembering each node's answer, so nested candidates share one climb."""
    cdef uintptr_t tag
    cdef list path = []
    cdef int result = 0
    while node != NULL:
        got = memo.get(<uintptr_t>node)
        if got is not None:
            result = got
            break
        if node.type == NODE_ELEMENT:
            tag = node.local_name
            if tag == T_BODY or tag == T_HTML:
                break
            if tag == T_HEADER or tag == T_FOOTER or tag == T_NAV or tag == T_ASIDE or tag == T_DIALOG:
                result = 1
                break
            if _may_be_hidden(<lxb_dom_element_t *>node):
                attrs = _attributes(<lxb_dom_element_t *>node)
                if is_hidden(attrs) or has_boilerplate_role(attrs):
                    result = 1
                    break
        path.append(<uintptr_t>node)
        node = node.parent
    for key in path:
        memo[key] = result
    return result


cdef object _node_near(object start, lxb_dom_node_t *top, lxb_dom_node_t *target, dict known):
    """``_node_at``, starting from the nearest ancestor of ``target`` already in ``known``."""
    cdef lxb_dom_node_t *node = target
    while node != NULL and node != top:
        got = known.get(<uintptr_t>node)
        if got is not None:
            return _node_at(got, node, target)
        node = node.parent
    return _node_at(start, top, target)


cdef bint _named_furniture(lxb_dom_node_t *node) except -1:
    """A candidate (not an ``article``, ``main`` or ``body``) whose role, class or id names
    furniture (the twin's test)."""
    cdef lxb_dom_element_t *el
    if node.type != NODE_ELEMENT or node.local_name == T_BODY or node.local_name == T_HTML:
        return False
    if node.local_name == T_ARTICLE or node.local_name == T_MAIN:
        return False
    el = <lxb_dom_element_t *>node
    if el.first_attr == NULL:
        return False
    return bool(names_furniture(_attributes(el)))


def scored_candidates(body, str query, int min_chars, double share_of_best) -> tuple:
    """``body``'s text length and the candidates ``select_main`` weighs, as the twin finds them.

    Every match of ``query`` under ``body`` (``body`` included) with ``min_chars`` or more,
    longest first; going down, stop below ``share_of_best`` of the best so far, skip furniture
    (inside it, or named so itself),
    subtract link text, keep what still has ``min_chars``: a list of (chars, node). Linear in
    the page however the candidates nest: lengths and link text come from one walk, the
    furniture test and the node lookups reuse what the enclosing candidates found.
    """
    cdef _Query q = _compiled(query)
    cdef lxb_dom_node_t *top = as_node(body.mem_id)
    cdef lxb_dom_node_t *node
    cdef Py_ssize_t n, order = 0, best_so_far = 0
    cdef list found = [], raw = [], scored = []
    cdef dict furniture = {}
    body_chars = _measure(q, top, found)
    for addr, times, _, n, _, _, link in found:
        if n >= min_chars:
            for _ in range(times):
                raw.append((-n, order, addr, link))
                order += 1
    raw.sort()
    for neg, _, addr, link in raw:
        n = -neg
        if n < share_of_best * best_so_far:
            break
        node = <lxb_dom_node_t *><uintptr_t>addr
        if _furniture_memo(node, furniture) or _named_furniture(node):
            continue
        n -= link
        if n >= min_chars:
            scored.append((n, addr))
            best_so_far = max(best_so_far, n)
    nodes = {}
    for n, addr in scored:
        if addr not in nodes:
            nodes[addr] = _node_near(body, top, <lxb_dom_node_t *><uintptr_t>addr, nodes)
    return body_chars, [(n, nodes[addr]) for n, addr in scored]


# ---------------------------------------------------------------- readability scores

cdef object _tag(lxb_dom_node_t *node):
    """``node.tag`` for an element or the document; None for other nodes, as selectolax says."""
    cdef const lxb_char_t *name
    cdef size_t name_len = 0
    if node.type == NODE_DOCUMENT:
        return "-document"
    if node.type != NODE_ELEMENT:
        return None
    name = ELEMENT_QNAME(<void *>node, &name_len)
    return None if name == NULL else _decode(name, name_len)


cdef int _credit(lxb_dom_node_t *node, double amount, dict scores, dict tag_weight, object class_weight) except -1:
    """Add ``amount`` to ``node``'s score, starting it from its tag and class/id weights."""
    cdef lxb_dom_element_t *el
    if node == NULL or node.type == NODE_DOCUMENT or (node.type == NODE_ELEMENT and node.local_name == T_HTML):
        return 0
    key = <uintptr_t>node
    if key not in scores:
        if node.type == NODE_ELEMENT:
            el = <lxb_dom_element_t *>node
            weight = class_weight(_get(el, b"class"), _get(el, b"id"))
        else:
            weight = class_weight(None, None)
        scores[key] = tag_weight.get(_tag(node), 0) + weight
    scores[key] += amount
    return 0


cdef int _score_paragraph(lxb_dom_node_t *para, dict scores, dict tag_weight, object class_weight) except -1:
    """Credit the parent and grandparent of a ``p``/``pre``/``td`` with 25+ characters of text."""
    if _text_len(para) < 25:  # stripping only shortens it
        return 0
    text = _text(para)
    if len(text.strip()) < 25:
        return 0
    amount = 1 + text.count(",") + text.count("\uff0c") + min(len(text) // 100, 3)
    _credit(para.parent, amount, scores, tag_weight, class_weight)
    _credit(para.parent.parent if para.parent != NULL else NULL, amount / 2, scores, tag_weight, class_weight)
    return 0


cdef struct _Agg:
    lxb_dom_node_t *node
    Py_ssize_t length                 # code points of the subtree's text
    Py_ssize_t link                   # code points of its link text (each ``<a>`` as css("a") lists it)
    Py_ssize_t commas                 # "," and "\uff0c" in its text
    Py_ssize_t lead                   # leading whitespace (str.strip's) of its text
    Py_ssize_t trail                  # trailing whitespace
    bint allws                        # the text is whitespace only (or empty)
    bint para_child                   # a child is a p/pre/td
    bint para_grandchild              # a grandchild is


cdef inline Py_UCS4 _cp_at(const unsigned char *s, size_t i, size_t *width) noexcept nogil:
    """The code point starting at ``s[i]`` (valid UTF-8 assumed) and its byte width."""
    cdef unsigned char c = s[i]
    if c < 0x80:
        width[0] = 1
        return c
    if c < 0xE0:
        width[0] = 2
        return ((c & 0x1F) << 6) | (s[i + 1] & 0x3F)
    if c < 0xF0:
        width[0] = 3
        return ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
    width[0] = 4
    return ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)


cdef int _agg_piece(_Agg *acc, lxb_dom_node_t *node) noexcept:
    """Add one text node to ``acc``; -1 when its data is not UTF-8 (the caller falls back)."""
    cdef lexbor_str_t *data = _text_data(node)
    cdef const unsigned char *s = data.data
    cdef size_t n = data.length, i = 0, j, w = 0
    cdef Py_ssize_t count, lead = 0, trail = 0, commas = 0
    if s == NULL or n == 0:
        return 0
    count = _utf8_count(s, n)
    if count < 0:
        return -1
    while i < n:
        if s[i] == 0x2C:
            commas += 1
        elif s[i] == 0xEF and i + 2 < n and s[i + 1] == 0xBC and s[i + 2] == 0x8C:
            commas += 1
        i += 1
    i = 0
    while i < n and Py_UNICODE_ISSPACE(_cp_at(s, i, &w)):
        lead += 1
        i += w
    if i >= n:                        # whitespace only
        trail = count
    else:
        j = n
        while j > 0:
            i = j - 1
            while i > 0 and (s[i] & 0xC0) == 0x80:
                i -= 1
            if not Py_UNICODE_ISSPACE(_cp_at(s, i, &w)):
                break
            trail += 1
            j = i
    _agg_join(acc, count, 0, commas, lead, trail, lead == count)
    return 0


cdef inline void _agg_join(_Agg *acc, Py_ssize_t length, Py_ssize_t link, Py_ssize_t commas,
                           Py_ssize_t lead, Py_ssize_t trail, bint allws) noexcept nogil:
    """Append a piece of text (a text node or a finished child's subtree) to ``acc``."""
    if acc.allws:
        acc.lead = acc.length + lead
    if allws:
        acc.trail += length
    else:
        acc.trail = trail
    acc.allws = acc.allws and allws
    acc.length += length
    acc.link += link
    acc.commas += commas


cdef inline bint _is_para(lxb_dom_node_t *node) noexcept nogil:
    return node.type == NODE_ELEMENT and (node.local_name == T_P or node.local_name == T_PRE or node.local_name == T_TD)


cdef int _aggregate(lxb_dom_node_t *top, dict paras, dict parents) except -1:
    """One post-order walk of ``top``'s subtree: each paragraph's (length, commas, stripped
    length) into ``paras`` and each paragraph parent's or grandparent's (length, link length)
    into ``parents``, keyed by address. Returns 1 when some text is not UTF-8 (nothing usable:
    pieces decode differently than joined; the engines hand lexbor UTF-8 only, so pages with
    such text come only from callers parsing raw bytes)."""
    cdef Py_ssize_t cap = 256, d = 0
    cdef _Agg *stack = <_Agg *>malloc(cap * sizeof(_Agg))
    cdef _Agg *grown
    cdef _Agg *acc
    cdef lxb_dom_node_t *child
    if stack == NULL:
        raise MemoryError()
    try:
        memset(&stack[0], 0, sizeof(_Agg))
        stack[0].node = top
        stack[0].allws = True
        child = top.first_child
        while True:
            if child != NULL:
                if child.local_name == T_TEXT:
                    if _agg_piece(&stack[d], child) < 0:
                        return 1
                    child = child.next
                    continue
                d += 1
                if d == cap:
                    cap *= 2
                    grown = <_Agg *>realloc(stack, cap * sizeof(_Agg))
                    if grown == NULL:
                        raise MemoryError()
                    stack = grown
                memset(&stack[d], 0, sizeof(_Agg))
                stack[d].node = child
                stack[d].allws = True
                child = child.first_child
                continue
            acc = &stack[d]
            if acc.node.type == NODE_ELEMENT and acc.node.local_name == T_A:
                acc.link += acc.length
            if _is_para(acc.node):
                paras[<uintptr_t>acc.node] = (
                    acc.length, acc.commas, 0 if acc.allws else acc.length - acc.lead - acc.trail
                )
            if acc.para_child or acc.para_grandchild:
                parents[<uintptr_t>acc.node] = (acc.length, acc.link)
            if d == 0:
                return 0
            _agg_join(&stack[d - 1], acc.length, acc.link, acc.commas, acc.lead, acc.trail, acc.allws)
            if _is_para(acc.node):
                stack[d - 1].para_child = True
            if acc.para_child:
                stack[d - 1].para_grandchild = True
            child = acc.node.next
            d -= 1
    finally:
        free(stack)


cdef int _credit_fast(lxb_dom_node_t *para, tuple info, dict scores, dict tag_weight, object class_weight) except -1:
    """``_score_paragraph`` from the paragraph's aggregates (no walk of its subtree)."""
    cdef Py_ssize_t length = info[0], commas = info[1], stripped = info[2]
    if stripped < 25:
        return 0
    amount = 1 + commas + min(length // 100, 3)
    _credit(para.parent, amount, scores, tag_weight, class_weight)
    _credit(para.parent.parent if para.parent != NULL else NULL, amount / 2, scores, tag_weight, class_weight)
    return 0


def readable_scores(body, dict tag_weight, class_weight) -> tuple:
    """Readability's final score per scored node (by ``mem_id``) and the best node, as the twin.

    Paragraphs (``p``, ``pre``, ``td`` under ``body``) credit their parent and grandparent;
    a score is then discounted by its node's link density. (``{}``, None) when nothing scores.

    Linear in the page: one post-order walk sums each subtree's text length, commas, link
    text and outer whitespace, so nested paragraphs (a table in a table cell, 40,000 deep) do
    not each walk their own subtree again.
    """
    cdef lxb_dom_node_t *top = as_node(body.mem_id)
    cdef lxb_dom_node_t *node = top
    cdef lxb_dom_node_t *best = NULL
    cdef Py_ssize_t chars, link
    cdef dict scores = {}, final = {}, paras = {}, parents = {}
    cdef bint slow
    # Many small tuples at once: the cyclic GC would rescan the growing heap (they hold no cycles).
    collecting = gc.isenabled()
    gc.disable()
    try:
        slow = _aggregate(top, paras, parents) != 0
    finally:
        if collecting:
            gc.enable()
    while node != NULL:
        if _is_para(node):
            if slow:
                _score_paragraph(node, scores, tag_weight, class_weight)
            else:
                _credit_fast(node, paras[<uintptr_t>node], scores, tag_weight, class_weight)
        node = next_in_subtree(node, top, True)
    best_score = None
    for key, score in scores.items():
        node = <lxb_dom_node_t *><uintptr_t>key
        got = None if slow else parents.get(key)
        if got is None:
            chars = _text_len(node)
            link = _link_text_len(node)
        else:
            chars, link = got
        density = 1.0 if chars == 0 else min(link / chars, 1.0)
        final[key] = value = score * (1 - density)
        if best_score is None or value > best_score:
            best, best_score = node, value
    return final, (None if best == NULL else _node_at(body, top, best))
