"""Quality signals of one page: length, title, main content, a spam score and parked-domain detection.

Every signal is defined in ``docs/content.md`` with the thresholds below; the constants here are
the single place they live. The signals read two things: the extractor's result for the page
(:class:`~ccrawl.extract.model.Extraction`: its text, title, word count, main-content flag and
outlinks) and the page's own HTML, parsed once more here for what the extractor throws away on
purpose (hidden elements, link text, redirect scripts, parking-service markers).

The spam score is a *noisy-or* of six cues, each a value in 0..1 scaled by its weight::

    spam_score = 1 - prod(1 - weight_i * cue_i)

so one cue alone can never reach 1 (its weight caps it) and several together approach it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from ccrawl.extract.model import Extraction

Node = Any

# -- spam cues: (weight, floor, full) -- the cue is 0 at or below ``floor`` and 1 at ``full`` --------

#: Most frequent word of 4+ letters as a share of those words (keyword stuffing). Ordinary prose
#: stays under 5%: short function words are not counted and no content word dominates.
STUFFING = (0.6, 0.08, 0.25)
#: Share of word trigrams that repeat an earlier trigram (spun or duplicated blocks); prose ~2-8%.
REPETITION = (0.5, 0.30, 0.70)
#: Link text as a share of all visible text, on pages with at least ``MIN_LINKS`` links.
LINK_DENSITY = (0.4, 0.50, 0.90)
#: Words inside hidden elements (not link text, not page furniture) as a share of all words.
HIDDEN_TEXT = (0.5, 0.20, 0.50)
#: Distinct outlinks to other registered domains.
OUTLINKS = (0.3, 50, 300)
#: Words of 3+ letters written in capitals, as a share of those words.
ALL_CAPS = (0.3, 0.20, 0.50)

#: Minimum words before the word-statistics cues say anything: a few words are not a sample.
MIN_WORDS = 50
MIN_CAPS_WORDS = 20
MIN_LINKS = 20

# -- parked cues -------------------------------------------------------------------------------------

#: A parked page is short: above this many extracted words the for-sale and service cues are off,
#: so an article *about* domain sales or linking to a marketplace is not called parked.
PARKED_MAX_WORDS = 300
#: A redirect shell is tiny: at most this much HTML and this many words of text.
SHELL_MAX_HTML = 8_192
SHELL_MAX_WORDS = 10

#: Domain parking and domain marketplace services, matched as host names in the HTML.
PARKING_SERVICES = (
    "sedoparking.com", "sedo.com", "bodis.com", "parkingcrew.net", "dan.com", "afternic.com",
    "above.com", "parklogic.com", "park.io", "hugedomains.com", "undeveloped.com", "uniregistry.com",
    "domainmarket.com", "parkingpage.namecheap.com", "buydomains.com", "domainsponsor.com",
    "fabulous.com", "smartname.com", "namedrive.com", "skenzo.com", "trafficz.com", "parked.com",
    "domainnamesales.com", "sav.com", "perfectdomain.com", "brandbucket.com", "squadhelp.com",
    "atom.com", "parking-lander", "img1.wsimg.com/parking",
)  # fmt: skip

_NAME_CHAR = re.compile(r"[\w.-]")


def names_parking_service(html: str) -> bool:
    """True when ``html`` names a parking service as a host (``dan.com``, not ``jordan.com``).

    A substring scan per service then a look at the characters around each hit: a regular
    expression alternation over a megabyte of HTML costs ~100 ms, the scan well under one.
    """
    low = html.lower()
    for name in PARKING_SERVICES:
        at = low.find(name)
        while at >= 0:
            start = at - 4 if low.startswith("www.", max(at - 4, 0)) and at >= 4 else at
            before = low[start - 1] if start > 0 else " "
            end = at + len(name)
            after = low[end] if end < len(low) else " "
            if not _NAME_CHAR.match(before) and not (after.isalnum() or after in "_-"):
                return True
            at = low.find(name, at + 1)
    return False


#: For-sale and parked phrases, in the languages of the synthetic web and the corpus.
FOR_SALE = re.compile(
    r"|".join(
        (
            r"\b(?:this|the) domain(?: name)?(?: \S+)? (?:is|may be|might be|could be) for sale\b",
            r"\b(?:this|the) domain(?: name)?(?: \S+)? is available for (?:sale|purchase)\b",
            r"\bbuy this domain\b",
            r"\bdomain (?:names? )?(?:is )?for sale\b",
            r"\binquire about (?:this|the) domain\b",
            r"\b(?:this|the) domain (?:has been|was) (?:registered|parked)\b",
            r"\b(?:this )?(?:web ?page|domain|website|site) is parked\b",
            r"\bparked (?:free|domain)\b",
            r"\bdomain parking\b",
            r"\bdiese domain (?:steht|ist) zum verkauf\b",
            r"\bdomain (?:steht )?zu verkaufen\b",
            r"\bce (?:nom de )?domaine est à vendre\b",
            r"\beste dominio (?:está|esta) (?:a la venta|en venta)\b",
            r"\bquesto dominio è in vendita\b",
            r"\bdeze domein(?:naam)? is te koop\b",
            r"\beste domínio (?:está )?à venda\b",
        )
    ),
    re.IGNORECASE,
)

_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em|rem|%)?\s*(?:;|!|$)"
    r"|text-indent\s*:\s*-\d{3,}|(?:left|top)\s*:\s*-\d{4,}px",
    re.IGNORECASE,
)
_LOCATION = re.compile(
    r"""location(?:\.href)?\s*=\s*["']([^"']+)["']|location\.(?:replace|assign)\(\s*["']([^"']+)["']""",
    re.IGNORECASE,
)
_REFRESH_URL = re.compile(r"""url\s*=\s*['"]?([^'"\s>]+)""", re.IGNORECASE)
#: Hidden containers that ordinary sites fill with real text: slides, tabs, lightboxes, embeds.
_HIDDEN_FURNITURE = re.compile(
    r"(?:^|[-_ ])(?:gallery|slide|slides|slider|carousel|lightbox|tab|tabs|tabpanel|accordion|collapse|"
    r"placeholder|embed|embeds|embedding|video|player|dialog|drawer|offcanvas|flyout)(?:$|[-_ ])"
)
#: A hidden block counts only when it reads like a keyword list: at least ``_MIN_HIDDEN_WORDS``
#: words (tooltips and labels are shorter) and fewer sentence ends than one per
#: ``_WORDS_PER_SENTENCE`` words (cookie notices, hidden tabs and gallery captions are prose).
_MIN_HIDDEN_WORDS = 20
_WORDS_PER_SENTENCE = 40
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)")
#: Tokens longer than this are not words (base64 blobs, minified data in hidden placeholders).
_MAX_TOKEN = 30
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


@dataclass(slots=True)
class Signals:
    """The quality signals of one page (see ``docs/content.md`` for each definition)."""

    word_count: int
    title_length: int
    main_content: bool
    text_ratio: float
    link_density: float
    hidden_share: float
    external_links: int
    spam_score: float
    spam_cues: dict[str, float] = field(default_factory=dict)
    parked: bool = False
    parked_cues: list[str] = field(default_factory=list)
    description: str = ""
    canonical: str = ""

    def as_record(self) -> dict[str, object]:
        return {
            "word_count": self.word_count,
            "title_length": self.title_length,
            "main_content": self.main_content,
            "text_ratio": self.text_ratio,
            "link_density": self.link_density,
            "hidden_share": self.hidden_share,
            "external_links": self.external_links,
            "spam_score": self.spam_score,
            "spam_cues": dict(self.spam_cues),
            "parked": self.parked,
            "parked_cues": list(self.parked_cues),
            "description": self.description,
            "canonical": self.canonical,
        }


def ramp(value: float, floor: float, full: float) -> float:
    """0 at or below ``floor``, 1 at or above ``full``, linear between."""
    if value <= floor:
        return 0.0
    if value >= full:
        return 1.0
    return (value - floor) / (full - floor)


def _chars(text: str) -> int:
    """Characters of ``text`` that are not whitespace: markup and layout do not change the count."""
    return len("".join(text.split()))


# -- word statistics of the extracted text ----------------------------------------------------------


def stuffing_share(words: list[str]) -> float:
    """Share of the most frequent word among words of 4+ letters; 0 below :data:`MIN_WORDS` of them."""
    long_words = [w for w in words if len(w) >= 4]
    if len(long_words) < MIN_WORDS:
        return 0.0
    return Counter(long_words).most_common(1)[0][1] / len(long_words)


def repetition_share(words: list[str]) -> float:
    """Share of word trigrams that already occurred earlier in the text; 0 below :data:`MIN_WORDS`."""
    if len(words) < MIN_WORDS:
        return 0.0
    trigrams = list(zip(words, words[1:], words[2:], strict=False))
    return 1.0 - len(set(trigrams)) / len(trigrams)


def caps_share(raw_words: list[str]) -> float:
    """Share of words of 3+ letters written in capitals; 0 below :data:`MIN_CAPS_WORDS` of them."""
    candidates = [w for w in raw_words if len(w) >= 3]
    if len(candidates) < MIN_CAPS_WORDS:
        return 0.0
    return sum(1 for w in candidates if w.isupper()) / len(candidates)


# -- what the extractor does not keep --------------------------------------------------------------


@dataclass(slots=True)
class PageShape:
    """Measurements of the page's own DOM (scripts and styles removed); characters exclude whitespace."""

    text_chars: int = 0
    link_chars: int = 0
    links: int = 0
    words: int = 0
    hidden_words: int = 0
    redirect_targets: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)


def _words(text: str) -> int:
    """Whitespace-separated tokens that can be words (see :data:`_MAX_TOKEN`)."""
    return sum(1 for t in text.split() if len(t) <= _MAX_TOKEN)


def _is_furniture(node: Node) -> bool:
    """Hidden by design on ordinary sites: dialogs, menus, cookie banners, slides, tabs, embeds."""
    from ccrawl.extract.boilerplate import BOILERPLATE_TAGS, cue_words, has_boilerplate_cue, has_boilerplate_role

    tag = node.tag or ""
    if tag in BOILERPLATE_TAGS or tag.startswith("amp-"):
        return True
    attrs = node.attributes
    if has_boilerplate_role(attrs):
        return True
    words = cue_words(attrs)
    return has_boilerplate_cue(words) or _HIDDEN_FURNITURE.search(words) is not None


def _is_hidden(node: Node) -> bool:
    attrs = node.attributes
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None


def _inside(node: Node, ids: set[int]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.mem_id in ids:
            return True
        parent = parent.parent
    return False


def measure_page(tree: Any) -> PageShape:
    """Text, link text, hidden text, redirect scripts and frames of a parsed page."""
    shape = PageShape()
    for script in tree.css("script"):
        for m in _LOCATION.finditer(script.text(deep=True) or ""):
            shape.redirect_targets.append(m.group(1) or m.group(2))
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attributes.get("http-equiv") or "").lower() == "refresh":
            refresh = _REFRESH_URL.search(meta.attributes.get("content") or "")
            if refresh:
                shape.redirect_targets.append(refresh.group(1))
    shape.frames = [f.attributes.get("src") or "" for f in tree.css("iframe[src], frame[src]")]
    tree.strip_tags(["script", "style", "template", "noscript", "svg"])
    body = tree.body if tree.body is not None else tree.root
    if body is None:
        return shape
    shape.text_chars = _chars(body.text(deep=True))
    shape.words = _words(body.text(deep=True, separator=" "))
    anchors = body.css("a")
    shape.links = len(anchors)
    shape.link_chars = sum(_chars(a.text(deep=True)) for a in anchors)
    hidden_ids: set[int] = set()
    for node in body.css("[style], [hidden]"):
        if not _is_hidden(node) or _inside(node, hidden_ids):
            continue
        hidden_ids.add(node.mem_id)
        if _is_furniture(node):
            continue
        text = node.text(deep=True, separator=" ")
        words = _words(text) - sum(_words(a.text(deep=True, separator=" ")) for a in node.css("a"))
        if words >= _MIN_HIDDEN_WORDS and len(_SENTENCE_END.findall(text)) * _WORDS_PER_SENTENCE < words:
            shape.hidden_words += words
    return shape


def _other_site(target: str, page_url: str) -> bool:
    from ccrawl.url.domain import shard_key

    try:
        absolute = urljoin(page_url, target.strip())
    except ValueError:  # an unparseable target (a bad IPv6 literal) sends nobody anywhere
        return False
    if not absolute.startswith(("http://", "https://")):
        return False
    return bool(page_url) and shard_key(absolute) != shard_key(page_url)


def external_link_count(outlinks: list[str], page_url: str) -> int:
    """Distinct outlinks whose registered domain is not the page's."""
    from ccrawl.url.domain import shard_key

    own = shard_key(page_url) if page_url else ""
    return sum(1 for link in outlinks if shard_key(link) != own)


def parked_cues(html: str, extraction: Extraction, shape: PageShape, page_url: str) -> list[str]:
    """The parked-domain cues that fire (``parking_service``, ``for_sale``, ``redirect_shell``)."""
    cues: list[str] = []
    words = extraction.word_count
    if words <= PARKED_MAX_WORDS:
        if names_parking_service(html):
            cues.append("parking_service")
        if FOR_SALE.search(extraction.title + "\n" + extraction.text):
            cues.append("for_sale")
    if len(html) <= SHELL_MAX_HTML and words <= SHELL_MAX_WORDS:
        targets = shape.redirect_targets + (shape.frames if len(shape.frames) == 1 else [])
        if any(_other_site(t, page_url) for t in targets):
            cues.append("redirect_shell")
    return cues


def quality_signals(html: str, extraction: Extraction, url: str = "") -> Signals:
    """Every signal of one page, from its decoded HTML and the extractor's result for it."""
    from selectolax.lexbor import LexborHTMLParser

    shape = measure_page(LexborHTMLParser(html))
    raw_words = _WORD.findall(extraction.text)
    words = [w.lower() for w in raw_words]

    link_density = shape.link_chars / shape.text_chars if shape.text_chars else 0.0
    hidden_share = shape.hidden_words / shape.words if shape.words else 0.0
    external = external_link_count(extraction.outlinks, url)
    measured = {
        "stuffing": (STUFFING, stuffing_share(words)),
        "repetition": (REPETITION, repetition_share(words)),
        "link_density": (LINK_DENSITY, link_density if shape.links >= MIN_LINKS else 0.0),
        "hidden_text": (HIDDEN_TEXT, hidden_share),
        "outlinks": (OUTLINKS, float(external)),
        "all_caps": (ALL_CAPS, caps_share(raw_words)),
    }
    cues: dict[str, float] = {}
    keep = 1.0
    for name, ((weight, floor, full), value) in measured.items():
        cue = round(ramp(value, floor, full), 3)
        if cue > 0:
            cues[name] = cue
            keep *= 1.0 - weight * cue
    parked = parked_cues(html, extraction, shape, url)
    html_len = len(html)
    return Signals(
        word_count=extraction.word_count,
        title_length=len(extraction.title),
        main_content=extraction.main_content,
        text_ratio=round(len(extraction.text) / html_len, 4) if html_len else 0.0,
        link_density=round(link_density, 4),
        hidden_share=round(hidden_share, 4),
        external_links=external,
        spam_score=round(1.0 - keep, 3),
        spam_cues=cues,
        parked=bool(parked),
        parked_cues=parked,
        description=extraction.description,
        canonical=extraction.canonical,
    )
