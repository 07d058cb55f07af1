"""The extraction engines behind one interface: ``get_extractor(name).extract(html, url)``.

========== ============================================================================
engine     what it does
========== ============================================================================
h2m        default: main-content container + in-walk pruning, GitHub-flavoured Markdown
readability Arc90-style paragraph scoring, rendered by the same Markdown renderer
raw        the whole ``<body>`` as Markdown, nothing removed but scripts and styles (control)
wet        plain text passed through unchanged (Common Crawl WET records)
trafilatura the trafilatura package, when installed (comparison only)
========== ============================================================================

Every result names its engine as ``name@version`` (:attr:`Extractor.label`). The version of the
in-house engines changes whenever their output for some page changes, so rows written by two
releases can be told apart.
"""

from __future__ import annotations

import re
import time
from typing import Any, Protocol

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ccrawl.errors import UsageError
from ccrawl.extract.decode import ascii_compatible, decode_body
from ccrawl.extract.guards import flatten_deep_nesting
from ccrawl.extract.lang import detect_language
from ccrawl.extract.mainsel import select_main
from ccrawl.extract.model import DEFAULT_BUDGET, Budget, Extraction
from ccrawl.extract.readability import select_readable
from ccrawl.extract.render import Renderer, count_lt, outlinks, strip_tags, word_count
from ccrawl.extract.tree import head_and_hrefs, text_length
from ccrawl.extract.urls import Resolver

#: Bumped whenever the in-house engines render some page differently. 2: text ending in a
#: backslash and "!" right before a link no longer turns the link into an image. 3: precision
#: (issue 21): teaser cards, headings and short label lines at the document's edges pruned.
#: 4: with links="text" images are dropped too (they were their alt words alone, which the text lacks).
#: 5: a post wrapper whose classes name its author is no longer a byline. 6 (issue 40): escaped
#: markup in <noscript> parsed, containers named as furniture not chosen, long "captions" kept,
#: a forum thread's posts kept together, long link lists dropped. 7 (issue 40): a comment thread
#: after the article pruned however long, a "Comments" heading after the story ends the walk,
#: <select> menus removed before selection. 8 (issue 40): links are rendered as their text and
#: images left out by default (``links="text"``, what trafilatura's Markdown does); ``+links``
#: (``h2m+links``) keeps ``[text](url)`` and ``![alt](src)``, as every version before did; a
#: docs section whose id is its heading's slug is not furniture; a scored region under 15% of the
#: page is trusted when it (or its parent) is named as the story or the article. 9 (issue 40): a
#: never-closed ``<title>`` that swallowed the page is closed at the next tag; the walk ends at a
#: link-less comments anchor (``<a name="comments">``, at most two on the page), at a rights notice
#: ("Copyright 2008 The Associated Press. All rights reserved.") and at a lone "E-mail this to a
#: friend" / "Print this story" line, each after 500 characters of non-link text.
ENGINE_VERSION = "9"
_FALLBACK_SHARE = 0.15
# ... unless the region, or the element around it, calls itself the story or the article
# ("div.articlePage" in "div.article.story", "div#storyBody", "div.article_content"): then a
# page of tag archives, sidebars and link lists around a short post does not outvote it.
_NAMED_SHARE = 0.03
_STORY_NAME = re.compile(r"story|article")
# <noscript> stays: some blogs (Blogger) put the whole post there for crawlers. A <select> is a
# form's menu: its options' text (a "jump to" list of 300 page titles) is never content, and
# counted as text it made the container around it look like the article.
_STRIP = ["script", "style", "template", "svg", "select"]
# A <noscript> whose markup was escaped into text (``<noscript>&lt;div&gt;&lt;a href=...``: a DOM
# serialised with scripting on, saved pages, some CMSs) would show that markup as words.
_ESCAPED_NOSCRIPT = re.compile(r"<noscript\b[^>]*>\s*&lt;", re.IGNORECASE)
_TITLE_OPEN = re.compile(r"<title\b[^>]*>", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title[\s/>]", re.IGNORECASE)


def close_runaway_title(source: str) -> str | None:
    """The page with its never-closed ``<title>`` closed at the first ``<`` after it, else None.

    A ``<title>`` is raw text up to ``</title>``: with none in the page (a template that cut it,
    ``</titlevalue="true" -->``), an HTML5 parser reads the whole rest of the page as the title
    and the body is empty, as a browser shows it. libxml2 (trafilatura) ends it at the next tag;
    so does this, and only for a page that parsed to an empty body (8 of l3s-gn1's 621 pages,
    every one with its story in the markup; since h2m@9).
    """
    m = _TITLE_OPEN.search(source)
    if m is None or _TITLE_CLOSE.search(source, m.end()) is not None:
        return None
    cut = source.find("<", m.end())
    if cut < 0:
        return None
    return source[:cut] + "</title>" + source[cut:]


class Extractor(Protocol):
    """An extraction engine: a name, a version and ``extract``."""

    name: str
    version: str

    @property
    def label(self) -> str:
        """``name@version``, the value of the ``extractor`` column."""
        ...

    def extract(
        self,
        html: bytes | str,
        url: str = "",
        *,
        content_type: str | None = None,
        budget: Budget = DEFAULT_BUDGET,
    ) -> Extraction:
        """Render one document."""
        ...


def _simhash(markdown: str) -> int | None:
    # Imported lazily: the fingerprint module belongs to the dedup side and is optional here.
    try:
        from ccrawl.extract.simhash import simhash_or_none
    except ImportError:
        return None
    return simhash_or_none(markdown)


def _decode(html: bytes | str, content_type: str | None, budget: Budget, out: Extraction) -> str:
    return _decode_keep_utf8(html, content_type, budget, out)[0]


def _decode_keep_utf8(
    html: bytes | str, content_type: str | None, budget: Budget, out: Extraction
) -> tuple[str, bytes | None]:
    """The decoded text, and the input bytes too when they are exactly its UTF-8 encoding.

    The parser works on UTF-8 bytes: handing it the bytes we have saves it re-encoding the
    text (~0.07 ms a page), and is the same input whenever they decoded cleanly as UTF-8
    without a byte-order mark.
    """
    if len(html) > budget.max_bytes:
        out.notes.append(f"size: input cut from {len(html)} to {budget.max_bytes} bytes")
        out.truncated = True
        html = html[: budget.max_bytes]
    if isinstance(html, str):
        out.charset, out.charset_source = "", "given"
        return html, None
    decoded = decode_body(html, content_type)
    out.charset, out.charset_source = decoded.charset, decoded.source
    if decoded.note:
        out.notes.append(decoded.note)
    # ASCII bytes under an ASCII-compatible charset are their text's UTF-8 too (most pages that
    # declare or are detected as windows-1252): the parser takes them as they are.
    same = decoded.source != "bom" and not decoded.note and (
        decoded.charset in _UTF8_NAMES or (html.isascii() and ascii_compatible(decoded.charset))
    )
    return decoded.text, html if same else None


_UTF8_NAMES = frozenset({"utf-8", "utf8", "UTF-8"})


def _first_text(tree: Any, selector: str, attr: str | None = None) -> str:
    node = tree.css_first(selector)
    if node is None:
        return ""
    value = node.attributes.get(attr) if attr else node.text(deep=True)
    return " ".join((value or "").split())


def _head_and_hrefs(tree: Any) -> tuple[dict[str, str], list[str]]:
    """Title, description, canonical, base and ``<html lang>``, and every ``<a href>`` value.

    One walk of the page for both; per head field the first non-empty value wins, the hrefs
    come in document order.
    """
    found: dict[str, str] = {}
    root = tree.root
    if root is None:
        return found, []
    entries, hrefs = head_and_hrefs(root)
    for key, value in entries:
        value = " ".join((value or "").split())
        if value and key not in found:
            found[key] = value
    if root.tag == "html":
        lang = root.attributes.get("lang")
        if lang:
            found["lang"] = lang.strip()
    return found, hrefs


def reparse_escaped_noscript(tree: Any) -> int:
    """Parse the text of every ``<noscript>`` that holds only escaped markup as HTML, in place.

    lexbor parses ``<noscript>`` content as markup (scripting off), so this is only the text a
    serialiser escaped: ``&lt;div&gt;&lt;a href="..."&gt;`` read as words would put tags and
    tracking URLs into the text. The parsed nodes replace the text inside the ``noscript``, so
    the content selection and both walks (the compiled one and its twin) see elements. Returns
    how many were re-parsed.
    """
    done = 0
    for node in tree.css("noscript"):
        child = node.child
        if child is None or child.next is not None or child.tag != "-text":
            continue
        raw = child.text_content or ""
        if not raw.lstrip().startswith("<") or ">" not in raw:
            continue
        fragment = LexborHTMLParser(raw)
        strip_tags(fragment, _STRIP)
        body = fragment.body
        if body is None:
            continue
        for part in list(body.iter(include_text=True)):
            child.insert_before(part)
        child.decompose()
        done += 1
    return done


def _finish(out: Extraction, started: float) -> Extraction:
    out.word_count = word_count(out.text)
    out.language, out.language_confidence = detect_language(out.text)
    out.simhash = _simhash(out.markdown)
    out.elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    return out


def _render_roots(renderer: Renderer, roots: list[Any]) -> tuple[str, str]:
    """Markdown and text of several roots, in document order, as one document."""
    parts = [renderer.render(n) for n in roots]
    return "\n\n".join(p[0] for p in parts if p[0]), "\n".join(p[1] for p in parts if p[1])


def _is_body(nodes: list[Any], body: Any) -> bool:
    """True when ``nodes`` is just ``body``.

    By node identity: ``==`` on selectolax nodes compares their serialized HTML, which costs
    two serializations of the page whenever the nodes differ.
    """
    return len(nodes) == 1 and nodes[0].mem_id == body.mem_id


def _names_story(node: LexborNode, body: LexborNode) -> bool:
    """True when ``node`` or its parent has "story" or "article" in its tag, class or id, and
    ``node`` is the only element with its first class (not one part of a story split in two)."""
    cls = (node.attributes.get("class") or "").split()
    if cls and re.fullmatch(r"[A-Za-z_][\w-]*", cls[0]) and len(body.css(f".{cls[0]}")) > 1:
        return False
    for n in (node, node.parent):
        if n is None:
            return False
        attrs = n.attributes
        if _STORY_NAME.search(f"{n.tag} {attrs.get('class') or ''} {attrs.get('id') or ''}".lower()):
            return True
    return False


def _fallback_roots(body: Any, body_chars: int) -> tuple[list[Any], int]:
    """Where h2m renders when no container names itself, and how much text that holds.

    Paragraph scoring (the readability pass) finds the densest region; tuned for recall, a lone
    scored block is widened to its parent (which usually holds the headline and the lead) when
    that at most doubles the text. A region under 15% of the page's text is not trusted.
    """
    nodes = select_readable(body)
    kept = sum(text_length(n) for n in nodes)
    if _is_body(nodes, body) or kept < _NAMED_SHARE * body_chars:
        return [body], body_chars
    if kept < _FALLBACK_SHARE * body_chars and not _names_story(nodes[0], body):
        return [body], body_chars
    if len(nodes) == 1 and nodes[0].parent is not None:
        parent_chars = text_length(nodes[0].parent)
        if parent_chars <= 2 * kept:
            return [nodes[0].parent], parent_chars
    return nodes, kept


LINK_MODES = ("text", "keep")
#: The default: a link is its text, images are left out. A link destination is 5-15 words under a
#: word-level scorer (and more under a BPE tokenizer) that the page's text does not have, and an
#: alt text is words the text never has; on the labelled corpora the Markdown string with them
#: scores 0.026-0.075 F1 below the text, without them within 0.001 (bench/README.md, issue 40).
DEFAULT_LINKS = "text"
#: ``name+links`` keeps ``[text](url)`` and ``![alt](src)``; ``name+textlinks`` is the default's
#: old name (h2m@4-7, when ``keep`` was the default), still accepted and the same engine as ``name``.
KEEP_LINKS_SUFFIX = "+links"
TEXT_LINKS_SUFFIX = "+textlinks"


class HtmlExtractor:
    """The in-house HTML engines (``h2m``, ``readability``, ``raw``): one pipeline, three policies.

    ``links="text"`` (the default) renders a link as its text alone and leaves images out;
    ``links="keep"`` writes ``[text](url)`` and ``![alt](src)``, and the label says so
    (``h2m@9+links``), since the Markdown differs. The text column is the same either way.
    """

    def __init__(self, name: str, links: str = DEFAULT_LINKS) -> None:
        if links not in LINK_MODES:
            raise UsageError(f"unknown links mode {links!r}: use one of {', '.join(LINK_MODES)}")
        self.name = name
        self.version = ENGINE_VERSION
        self.links = links

    @property
    def label(self) -> str:
        """``name@version`` (``+links`` with ``links="keep"``)."""
        return f"{self.name}@{self.version}" + (KEEP_LINKS_SUFFIX if self.links == "keep" else "")

    def extract(
        self,
        html: bytes | str,
        url: str = "",
        *,
        content_type: str | None = None,
        budget: Budget = DEFAULT_BUDGET,
    ) -> Extraction:
        """Decode, parse, pick the content, render Markdown and text, and label the result."""
        started = time.perf_counter()
        out = Extraction(extractor=self.label)
        source, utf8 = _decode_keep_utf8(html, content_type, budget, out)
        if utf8 is None:
            # Encoded here, as selectolax would (errors="ignore": the same bytes), because its own
            # str path costs more: 3.75 against 1.35 + 1.42 ms on a 1.25 MB windows-1252 page
            # holding a "€" (htmltotext's cnbc page); the "<" count then reads the bytes natively.
            utf8 = source.encode("utf-8", "ignore")
        tags = count_lt(utf8)
        source, removed = flatten_deep_nesting(source, budget.max_block_nesting, tags=tags, utf8=utf8)
        if removed:
            out.truncated = True
            out.notes.append(f"nesting: {removed} block tags deeper than {budget.max_block_nesting} removed")
        tree = LexborHTMLParser(source if removed else utf8)
        if tree.body is None or tree.body.child is None:
            closed = close_runaway_title(source)
            if closed is not None:
                tree = LexborHTMLParser(closed)
        strip_tags(tree, _STRIP)
        if "&lt;" in source and _ESCAPED_NOSCRIPT.search(source) is not None:
            reparse_escaped_noscript(tree)
        meta, hrefs = _head_and_hrefs(tree)
        out.title = meta.get("title") or meta.get("og:title") or _first_text(tree, "h1")
        out.description = meta.get("description") or meta.get("og:description", "")
        out.canonical = meta.get("canonical", "")
        out.declared_language = meta.get("lang", "")
        base = meta.get("base", "")
        resolver = Resolver(url)
        if base:
            resolver = Resolver(resolver.resolve(base) or url)
        if budget.max_outlinks > 0:
            out.outlinks = outlinks(hrefs, resolver, budget.max_outlinks)
        body = tree.body if tree.body is not None else tree.root
        # Past the deadline already (a huge page), the renderer still takes its first few
        # hundred nodes before its clock check stops it: a cut page, never an empty one.
        if body is not None:
            out.markdown, out.text = self._render(body, resolver, budget, out, started)
        return _finish(out, started)

    def _render(
        self, body: Any, resolver: Resolver, budget: Budget, out: Extraction, started: float
    ) -> tuple[str, str]:
        if self.name == "raw":
            renderer = Renderer(resolver, budget, prune=False, started=started, link_targets=self.links == "keep")
            result = renderer.render(body)
        elif self.name == "readability":
            nodes = select_readable(body)
            out.main_content = not _is_body(nodes, body)
            renderer = Renderer(
                resolver,
                budget,
                prune=True,
                root_chars=text_length(body),
                started=started,
                link_targets=self.links == "keep",
            )
            renderer.in_article = True
            result = _render_roots(renderer, nodes)
        else:
            renderer, result = self._render_h2m(body, resolver, budget, out, started, self.links == "keep")
        out.notes.extend(renderer.notes)
        out.truncated = out.truncated or renderer.truncated
        return result

    @staticmethod
    def _render_h2m(
        body: Any, resolver: Resolver, budget: Budget, out: Extraction, started: float, link_targets: bool = True
    ) -> tuple[Renderer, tuple[str, str]]:
        main = select_main(body)
        if main.chosen:
            roots, root_chars = [main.root], main.root_chars
        else:
            roots, root_chars = _fallback_roots(body, main.root_chars)
        out.main_content = not _is_body(roots, body)
        renderer = Renderer(
            resolver, budget, prune=True, root_chars=root_chars, started=started, link_targets=link_targets
        )
        renderer.in_article = main.article_like
        result = _render_roots(renderer, roots)
        return renderer, result


class WetExtractor:
    """Plain text (a WET record's payload) passed through unchanged as text and Markdown."""

    name = "wet"
    version = ENGINE_VERSION

    @property
    def label(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def extract(
        self,
        html: bytes | str,
        url: str = "",
        *,
        content_type: str | None = None,
        budget: Budget = DEFAULT_BUDGET,
    ) -> Extraction:
        """The text as given (decoded as the header says, else UTF-8 as WET files are)."""
        started = time.perf_counter()
        out = Extraction(extractor=self.label)
        if isinstance(html, bytes) and not content_type:
            content_type = "text/plain; charset=utf-8"
        text = _decode(html, content_type, budget, out)
        out.markdown = out.text = text
        return _finish(out, started)


class TrafilaturaExtractor:
    """The trafilatura package (optional), for side-by-side comparison with the in-house engines."""

    name = "trafilatura"

    def __init__(self) -> None:
        try:
            import trafilatura
        except ImportError as exc:
            raise UsageError(
                "extractor trafilatura needs the trafilatura package: pip install 'ccrawl[bench]'"
            ) from exc
        self._traf = trafilatura
        self.version = str(trafilatura.__version__)

    @property
    def label(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def extract(
        self,
        html: bytes | str,
        url: str = "",
        *,
        content_type: str | None = None,
        budget: Budget = DEFAULT_BUDGET,
    ) -> Extraction:
        """trafilatura's Markdown and its plain text (two calls: it renders one format per call)."""
        started = time.perf_counter()
        out = Extraction(extractor=self.label)
        source = _decode(html, content_type, budget, out)
        opts: dict[str, Any] = {"url": url or None, "include_comments": False, "include_tables": True}
        out.markdown = self._traf.extract(source, output_format="markdown", include_links=True, **opts) or ""
        out.text = self._traf.extract(source, **opts) or ""
        tree = LexborHTMLParser(source)
        out.title = _first_text(tree, "title")
        out.declared_language = _first_text(tree, "html", "lang")
        out.main_content = bool(out.text)
        return _finish(out, started)


ENGINES = ("h2m", "readability", "raw", "wet", "trafilatura")
_cache: dict[str, Extractor] = {}


def get_extractor(name: str = "h2m", *, links: str = DEFAULT_LINKS) -> Extractor:
    """The engine called ``name`` (one of :data:`ENGINES`); raises UsageError for others.

    ``links`` (``text``, the default, or ``keep``) is how the in-house HTML engines render links
    and images; the other engines have one rendering and ignore it. ``name+links``
    (``h2m+links``) is ``links="keep"`` and ``name+textlinks`` is ``links="text"``, so every
    command's ``--extractor`` option can ask for either.
    """
    key = name.strip().lower()
    if key.endswith(KEEP_LINKS_SUFFIX):  # "h2m+links": the variant by name, for any --extractor option
        key, links = key[: -len(KEEP_LINKS_SUFFIX)], "keep"
    elif key.endswith(TEXT_LINKS_SUFFIX):
        key, links = key[: -len(TEXT_LINKS_SUFFIX)], "text"
    if links not in LINK_MODES:
        raise UsageError(f"unknown links mode {links!r}: use one of {', '.join(LINK_MODES)}")
    if key in ("h2m", "readability", "raw"):
        key_links = key if links == DEFAULT_LINKS else f"{key}+{links}"
        if key_links not in _cache:
            _cache[key_links] = HtmlExtractor(key, links)
        return _cache[key_links]
    if key != name.strip().lower():
        raise UsageError(f"extractor {name!r} has no links mode: only h2m, readability and raw")
    if key in _cache:
        return _cache[key]
    engine: Extractor
    if key == "wet":
        engine = WetExtractor()
    elif key == "trafilatura":
        engine = TrafilaturaExtractor()
    else:
        raise UsageError(f"unknown extractor {name!r}: use one of {', '.join(ENGINES)}")
    _cache[key] = engine
    return engine
