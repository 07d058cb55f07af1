"""Deterministic work lists for the URL benches: distinct hosts, realistic paths and query strings.

Every URL has its own host (``count`` distinct registrable names under a mix of TLDs and public
suffixes, some with ``www.``/``m.``/deeper subdomains), and a path and query shaped like crawl data:
dated article slugs, product pages, ``index.php?id=``, tracking parameters, a port now and then, a
few percent-escapes and dot segments. No host cache or repeated input can carry a figure.
"""

from __future__ import annotations

import random

_TLDS = (
    ["com"] * 30 + ["org"] * 6 + ["net"] * 5 + ["de"] * 5 + ["co.uk"] * 4 + ["fr"] * 3 + ["jp"] * 2
    + ["com.au", "co.jp", "com.br", "ru", "nl", "it", "es", "pl", "io", "info", "edu", "gov", "ca", "ch",
       "github.io", "blogspot.com", "herokuapp.com", "net.au", "org.uk", "ac.uk", "in", "cn", "kr", "se"]
)
_SUBS = [""] * 6 + ["www."] * 8 + ["m.", "blog.", "news.", "shop.", "en.", "api.", "static.cdn.", "www2."]
_WORDS = [
    "news", "world", "sport", "story", "article", "politics", "business", "tech", "science", "health",
    "travel", "food", "review", "video", "photo", "gallery", "product", "item", "category", "search", "page",
    "blog", "post", "archive", "tag", "user", "profile", "help", "about", "contact", "en", "de", "fr",
    "index", "default", "main", "content", "media", "2023", "2024", "2025", "local", "opinion", "culture",
]
_PARAMS = ["id", "page", "q", "lang", "ref", "utm_source", "utm_medium", "utm_campaign", "fbclid", "sort",
           "cat", "p", "s", "start", "view", "session", "format", "amp"]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _name(rng: random.Random, i: int) -> str:
    word = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(3, 10)))
    return f"{word}{i:x}" if rng.random() < 0.7 else f"{word}-{rng.choice(_WORDS)}{i:x}"


def _path(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        slug = "-".join(rng.choices(_WORDS, k=rng.randint(3, 9)))
        return f"/{rng.choice(_WORDS)}/{rng.randint(2015, 2025)}/{rng.randint(1, 12):02d}/{slug}.html"
    if kind < 0.5:
        return f"/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}-{rng.randint(1, 10 ** 7)}"
    if kind < 0.6:
        return "/index.php"
    if kind < 0.7:
        return "/"
    if kind < 0.75:
        return f"/{rng.choice(_WORDS)}/../{rng.choice(_WORDS)}/./page%20{rng.randint(1, 99)}/"
    return "/" + "/".join(rng.choices(_WORDS, k=rng.randint(1, 5))) + rng.choice(["", "/", ".html", ".aspx"])


def _query(rng: random.Random) -> str:
    if rng.random() < 0.55:
        return ""
    fields = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(_PARAMS)
        value = rng.choice([str(rng.randint(0, 10 ** rng.randint(1, 9))), rng.choice(_WORDS),
                            "".join(rng.choices(_LETTERS + "0123456789", k=rng.randint(6, 24)))])
        fields.append(f"{name}={value}")
    return "?" + "&".join(fields)


def distinct_host_urls(count: int, seed: int = 27) -> list[str]:
    """``count`` URLs, each on a host of its own."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        host = f"{rng.choice(_SUBS)}{_name(rng, i)}.{rng.choice(_TLDS)}"
        scheme = "https" if rng.random() < 0.7 else "http"
        port = ":8080" if rng.random() < 0.02 else (":443" if rng.random() < 0.01 else "")
        if rng.random() < 0.1:
            host = host.capitalize()
        frag = "#top" if rng.random() < 0.03 else ""
        out.append(f"{scheme}://{host}{port}{_path(rng)}{_query(rng)}{frag}")
    return out


def distinct_hosts(count: int, seed: int = 27) -> list[str]:
    """The hosts of :func:`distinct_host_urls` (each once)."""
    return [u.split("/", 3)[2].split(":")[0] for u in distinct_host_urls(count, seed)]
