"""The synthetic web's pages: deterministic HTML in seven languages, and the validators they carry."""

from __future__ import annotations

import contextlib
import hashlib
import random
from email.utils import formatdate, parsedate_to_datetime

from aiohttp import web

DOMAIN = "test"
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)  # fixed, so validators are stable across runs

_WORDS = {
    "en": "the web page crawl river stone garden market city light evening paper window music road winter "
    "history people table story answer village coast letter mountain season harbour engine",
    "de": "der die das und stadt fluss garten markt licht abend papier fenster musik strasse winter "
    "geschichte menschen tisch antwort dorf küste brief berg jahreszeit hafen maschine",
    "fr": "le la les et ville rivière jardin marché lumière soir papier fenêtre musique route hiver "
    "histoire gens table réponse village côte lettre montagne saison port machine",
    "es": "el la los y ciudad río jardín mercado luz tarde papel ventana música camino invierno "
    "historia gente mesa respuesta pueblo costa carta montaña estación puerto máquina",
    "it": "il la gli e città fiume giardino mercato luce sera carta finestra musica strada inverno "
    "storia gente tavolo risposta villaggio costa lettera montagna stagione porto macchina",
    "nl": "de het een en stad rivier tuin markt licht avond papier raam muziek weg winter "
    "geschiedenis mensen tafel antwoord dorp kust brief berg seizoen haven machine",
    "pt": "o a os e cidade rio jardim mercado luz noite papel janela música estrada inverno "
    "história pessoas mesa resposta aldeia costa carta montanha estação porto máquina",
}
LANGUAGES = tuple(_WORDS)
ROBOTS_DEFAULT = "User-agent: *\nDisallow: /private/\n"


def site_host(i: int) -> str:
    return f"site{i}.{DOMAIN}"


def _rng(*key: object) -> random.Random:
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _sentence(rng: random.Random, words: list[str]) -> str:
    chosen = [rng.choice(words) for _ in range(rng.randint(6, 16))]
    return chosen[0].capitalize() + " " + " ".join(chosen[1:]) + "."


def page_html(
    host: str, n: int | None, *, hosts: int, pages: int, target_bytes: int = 24_000, link_port: int | None = None
) -> str:
    """A deterministic page of ``host`` (``n`` None for its home page), about ``target_bytes`` long.

    ``link_port`` puts that port in the links to other sites, so a crawler following them on
    loopback reaches this server rather than port 80.
    """
    authority = f":{link_port}" if link_port else ""
    rng = _rng(host, n)
    lang = LANGUAGES[_rng(host).randrange(len(LANGUAGES))]
    words = _WORDS[lang].split()
    title = " ".join(rng.choice(words) for _ in range(4)).title()
    links = [f'<li><a href="/p/{rng.randrange(pages)}">{rng.choice(words)}</a></li>' for _ in range(8)]
    links += [
        f'<li><a href="http://{site_host(rng.randrange(hosts))}{authority}/">{rng.choice(words)}</a></li>'
        for _ in range(3)
    ]
    parts = [
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>',
        f'<meta name="description" content="{_sentence(rng, words)}"></head><body>',
        f'<header><nav><a href="/">{host}</a><ul>{"".join(links)}</ul></nav></header>',
        f"<main><article><h1>{title}</h1>",
    ]
    size = sum(map(len, parts))
    while size < target_bytes:
        if rng.random() < 0.2:
            block = f"<h2>{_sentence(rng, words)[:-1]}</h2>"
        else:
            block = "<p>" + " ".join(_sentence(rng, words) for _ in range(rng.randint(3, 7))) + "</p>"
        parts.append(block)
        size += len(block)
    parts.append(f'</article></main><footer><p>© {host} · <a href="/private/">private</a></p></footer>')
    parts.append("</body></html>\n")
    return "\n".join(parts)


def etag_for(host: str, path: str) -> str:
    return '"' + hashlib.sha1(f"{host}{path}".encode()).hexdigest()[:16] + '"'


def not_modified(request: web.Request, etag: str) -> bool:
    inm = request.headers.get("If-None-Match")
    if inm is not None:
        return etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"
    ims = request.headers.get("If-Modified-Since")
    if ims:
        with contextlib.suppress(TypeError, ValueError):
            return parsedate_to_datetime(ims) >= parsedate_to_datetime(LAST_MODIFIED)
    return False
