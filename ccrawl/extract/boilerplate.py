"""Cues that an element is page furniture rather than content: tags, roles, class and id words.

The words are matched per component of a class or id (``post-footer`` has the components
``post`` and ``footer``), so ``footer`` matches ``site-footer`` and ``footer_links`` but
``navigate`` does not match ``nav``. A cue is only a hint: the renderer keeps an element that
holds half of the container's text, the ``h1`` or the article body whatever it is called
(``<div class="below-banner">`` wrapping the whole article is common; see
``Renderer._small`` in :mod:`ccrawl.extract.render`). :func:`verdict` is the renderer's
one-call check; the smaller functions serve other modules (quality signals).
"""

from __future__ import annotations

import re

#: Elements that are furniture wherever they appear (``header``/``footer`` are handled by the
#: renderer, since inside an ``<article>`` they hold the headline and the byline).
BOILERPLATE_TAGS = frozenset({"nav", "aside", "menu", "dialog", "form"})

BOILERPLATE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search", "dialog", "alert"}
)

_WORDS = (
    "nav|navbar|navigation|navi|menu|menus|submenu|topmenu|megamenu|footer|foot|sidebar|sidebars|"
    "sidenav|share|shares|sharing|sharebar|social|socials|comment|comments|"
    "commentlist|disqus|related|recommended|recommendations|breadcrumb|breadcrumbs|crumbs|cookie|"
    "cookies|consent|gdpr|banner|ad|ads|advert|adverts|advertisement|advertising|sponsor|sponsored|"
    "promo|promotion|newsletter|subscribe|subscription|signup|popup|modal|overlay|masthead|tagcloud|"
    "tags|pagination|pager|skip|skiplink|toolbar|login|rating|ratings|outbrain|taboola|"
    "jumplinks|trending|mostread|mostpopular|popular|follow|sociallinks|"
    "author|authors|byline|authorbox|bio|caption|legend|credit|credits|nextread|readmore|read-more|"
    "copyright|legal|disclaimer|sr-only|visually-hidden|dropdown|infobox|newletter|cta|"
    "textwidget|teasers|contact|kontakt|buybox|donate|donation"
)
_CUE = re.compile(rf"(?:^|[-_ ])(?:{_WORDS})(?:$|[-_ ])")
# Every cue word in a class/id string (the delimiters are looked at, not consumed, so
# "caption-credit" gives both); used only on strings ``_CUE`` already matched.
_CUE_ALL = re.compile(rf"(?<![^-_ ])(?:{_WORDS})(?![^-_ ])")
#: Cue words that name a small part of a page: an element they name is furniture only under
#: ``CAPTION_MAX_CHARS`` of text. A caption is a line or two; a "caption" holding a whole story
#: is markup gone wrong (an unclosed ``<span class="wp-caption-text">`` swallowing the article)
#: or a slideshow whose text sits in its captions.
_SMALL_PART_WORDS = frozenset({"caption"})
CAPTION_MAX_CHARS = 500
#: Cue words that name a comment thread: furniture whatever its size once the article's text
#: has been rendered (a thread of 200 comments is most of a page's text, and not its content).
_THREAD_WORDS = frozenset({"comment", "comments", "commentlist", "disqus"})
# Class tokens that describe state or taxonomy, not a part of the page: WordPress puts
# "category-newsletter" and "tag-social" on the article itself, themes put "has-sidebar" on <body>.
_STATE_TOKENS = re.compile(
    r"(?:^|\s)(?:category|tag|tags|format|type|status|has|no|with|without|is|single|postid|page|"
    r"template|theme|lang|js|view|layout)-\S*"
)
_BEM_MODIFIER = re.compile(r"--[\w-]*")
# The post itself (hAtom's ``hentry``, which WordPress's post_class adds; TypePad's
# ``entry-type-post``) names its author among its taxonomy classes ("hentry post author-matt",
# "entry-author-john_turri entry-type-post entry"): there ``author-...`` is not a byline.
_POST_ENTRY = re.compile(r"(?:^|\s)(?:hentry|entry-type-post)(?:\s|$)")
_POST_AUTHOR = re.compile(r"(?:^|\s)(?:entry-)?author-\S*")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def cue_words(attrs: dict[str, str | None]) -> str:
    """The lowercased class and id of an element, space-separated."""
    cls = attrs.get("class") or ""
    ident = attrs.get("id") or ""
    if not cls and not ident:
        return ""
    words = f"{cls} {ident}".lower()
    if "-" in words:
        words = _STATE_TOKENS.sub(" ", words)
        if "--" in words:  # BEM modifiers ("section--ads") describe a variant, not the part
            words = _BEM_MODIFIER.sub("", words)
    return words


# Class names that say "this is the content" outright; they win over a furniture word beside
# them ("entry-content entry-content-read-more").
_CONTENT = re.compile(
    r"(?:^|\s)(?:entry-content|post-content|post-body|article-body|article-content|articlebody|story-body|"
    r"main-content|post-entry|single-content)(?:\s|$)"
)


def has_boilerplate_cue(words: str) -> bool:
    """True when a class or id component names furniture (nav, footer, share, comments...)."""
    return bool(words) and _CUE.search(words) is not None and _CONTENT.search(words) is None


def is_hidden(attrs: dict[str, str | None]) -> bool:
    """True for elements a browser would not show (``hidden``, ``display:none``, ``aria-hidden``)."""
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None  # type: ignore[arg-type]


def has_boilerplate_role(attrs: dict[str, str | None]) -> bool:
    """True for ARIA landmark roles that are never the main content."""
    role = attrs.get("role")
    return bool(role) and role.lower() in BOILERPLATE_ROLES  # type: ignore[union-attr]


KEEP, HIDDEN, FURNITURE, CAPTION, COMMENTS = 0, 1, 2, 3, 4


def verdict(attrs: dict[str, str | None], use_cues: bool = True) -> int:
    """:data:`HIDDEN`, :data:`FURNITURE` (by role or, with ``use_cues``, class/id),
    :data:`CAPTION` (class/id cue words that all name a small part: furniture only when short,
    see ``CAPTION_MAX_CHARS``) or :data:`KEEP`.

    One call per element on the renderer's hot path, so the checks are inlined.
    """
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return HIDDEN
    style = attrs.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return HIDDEN
    role = attrs.get("role")
    if role and role.lower() in BOILERPLATE_ROLES:
        return FURNITURE
    if use_cues:
        cls = attrs.get("class")
        ident = attrs.get("id")
        if cls or ident:
            key = (cls, ident)
            kind = _cue_cache.get(key)
            if kind is None:
                kind = _names_furniture(f"{cls or ''} {ident or ''}".lower())
                if len(_cue_cache) >= _CUE_CACHE_SIZE:
                    _cue_cache.clear()
                _cue_cache[key] = kind
            return kind
    return KEEP


def names_furniture(attrs: dict[str, str | None]) -> bool:
    """True when an element's role, class or id names furniture (a ``FURNITURE`` :func:`verdict`).

    ``h2m`` does not take such an element as its main-content container, whatever its size: a
    ``div.post.comments-width`` holding a long comment thread is the comments, not the post.
    """
    return verdict(attrs) in (FURNITURE, COMMENTS)


# A page repeats its class names (every teaser, every menu item), and so do the pages of one
# site: the verdict on a (class, id) pair is cached, in a dict cleared when it fills up.
_CUE_CACHE_SIZE = 20_000
_cue_cache: dict[tuple[str | None, str | None], int] = {}


# A documentation section (docutils/Sphinx ``div.section``, pandoc ``div.section.level2``) whose id
# is its heading's slug: "sharing-with-a-single-developer" names a chapter, not a share bar.
_HEADING_SLUG = re.compile(r"section(?: level\d)? [a-z0-9]+(?:-[a-z0-9]+){2,}")


def _names_furniture(words: str) -> int:
    """:data:`FURNITURE`, :data:`CAPTION` or :data:`KEEP` for a lowercased "class id" string."""
    # Most elements match no cue at all: test first, clean the state tokens only if one does.
    if _CUE.search(words) is None or _HEADING_SLUG.fullmatch(words) is not None:
        return KEEP
    if "-" in words:
        if _POST_ENTRY.search(words) is not None:
            words = _POST_AUTHOR.sub(" ", words)
        words = _STATE_TOKENS.sub(" ", words)
        if "--" in words:
            words = _BEM_MODIFIER.sub("", words)
    if _CUE.search(words) is None or _CONTENT.search(words) is not None:
        return KEEP
    found = frozenset(_CUE_ALL.findall(words))
    if found and found <= _SMALL_PART_WORDS:
        return CAPTION
    return COMMENTS if found & _THREAD_WORDS else FURNITURE
