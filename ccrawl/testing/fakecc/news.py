"""A fake CC-NEWS beside the fake Common Crawl: months of multi-member WARC files of real article pages.

Layout, as on ``data.commoncrawl.org``::

    crawl-data/CC-NEWS/<YYYY>/<MM>/warc.paths.gz
    crawl-data/CC-NEWS/<YYYY>/<MM>/CC-NEWS-<YYYYMMDDHHMMSS>-<NNNNN>.warc.gz
    crawl-data/CC-NEWS/news-truth.jsonl      every record written (for tests; not a CC file)

The pages are the shared corpus's real HTML (``html-eval/pages`` with their URLs from
``evaldata.json``: many publishers and languages); nothing of the corpus is kept in the repo, the
bucket is generated from it by a seeded generator (same spec, same bytes). Each file is a
``warcinfo`` record then, per capture, a ``request`` and a ``response`` record, one gzip member each,
the way CC-NEWS's crawler writes them (no ``metadata`` records, no identified language). Mixed in:
3xx redirects with a ``Location``, non-HTML responses (PDF, JPEG, RSS, JSON), exactly one response
without a ``WARC-Payload-Digest``, and one file per month (the month's third) that ends in the middle
of its last record, as a file cut short on upload would.

The fake Common Crawl app serves these through :func:`add_news_routes`: the first request under
``/crawl-data/CC-NEWS/`` builds the bucket, later ones are plain ranged file reads. The corpus is
found the way the tests find it (:func:`find_corpus`): ``$CCRAWL_CORPUS``, else ``shared/corpus``
beside the checkout (``../shared/corpus`` from the repo root) or beside the current directory. When it
is not there every CC-NEWS request answers ``424 Failed Dependency`` whose reason names what is missing
and how to supply it, not a 404 that would read as a month Common Crawl does not have.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import json
import os
import random
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict, Unpack

if TYPE_CHECKING:
    from aiohttp import web

PREFIX = "crawl-data/CC-NEWS"
TRUTH = f"{PREFIX}/news-truth.jsonl"
_MARKER = f"{PREFIX}/.built"


@dataclass(frozen=True, slots=True)
class NewsSpec:
    """How big the fake CC-NEWS is: months as (year, month), files per month, captures per file."""

    months: tuple[tuple[int, int], ...] = ((2026, 5), (2026, 6), (2026, 7))
    files: int = 24
    captures: int = 8
    seed: int = 20260701

    def key(self) -> str:
        return f"{self.months}/{self.files}/{self.captures}/{self.seed}"


class ResponseTruth(TypedDict, total=False):
    """What a response record's truth row adds: its HTTP status, type, body size, digest and redirect."""

    status: int
    mime: str
    body_length: int
    digest: str | None
    redirect: str | None
    whole: bool  # False for the cut last record of a file


class NewsTruth(ResponseTruth):
    """One record of ``news-truth.jsonl``: where it is, what it is; ``whole`` False for the cut last one."""

    filename: Required[str]
    offset: Required[int]
    length: Required[int]
    type: Required[str]
    record_id: Required[str]
    url: Required[str | None]



@dataclass(slots=True)
class NewsSite:
    """What was built: the month paths and every record (dicts as in ``news-truth.jsonl``)."""

    root: Path
    months: dict[str, list[str]] = field(default_factory=dict)
    records: list[NewsTruth] = field(default_factory=list)

    def responses(self, month: str | None = None) -> list[NewsTruth]:
        return [r for r in self.records if r["type"] == "response" and r.get("whole", True)
                and (month is None or r["filename"].startswith(f"{PREFIX}/{month}/"))]


CORPUS_ENV = "CCRAWL_CORPUS"
_PAGES = Path("html-eval") / "pages"


def corpus_candidates() -> list[Path]:
    """Where the shared corpus is looked for without ``$CCRAWL_CORPUS``, in order: ``shared/corpus``
    inside, beside (``../shared/corpus``, as the tests look) and above the checkout this module is in,
    then the same around the current directory (a ccrawl installed elsewhere, run from a checkout)."""
    checkout = Path(__file__).resolve().parents[3]
    cwd = Path.cwd().resolve()
    out: list[Path] = []
    for base in (checkout, cwd):
        for c in (base / "shared" / "corpus", base.parent / "shared" / "corpus",
                  base.parent.parent / "shared" / "corpus"):
            if c not in out:
                out.append(c)
    return out


def find_corpus() -> tuple[Path | None, str]:
    """(the shared corpus, "") when found, else (None, one line saying what is missing and how to give it).

    ``$CCRAWL_CORPUS`` wins; set and without ``html-eval/pages`` it is that error (no silent fallback)."""
    env = os.environ.get(CORPUS_ENV)
    if env:
        if (Path(env) / _PAGES).is_dir():
            return Path(env), ""
        return None, (f"{CORPUS_ENV}={env} holds no {_PAGES.as_posix()}: point it at the shared corpus "
                      "(the directory holding html-eval/)")
    for c in corpus_candidates():
        if (c / _PAGES).is_dir():
            return c, ""
    return None, (f"the shared corpus ({_PAGES.as_posix()}) was not found: set {CORPUS_ENV}=/path/to/corpus "
                  "or place it at ../shared/corpus beside the checkout")


def default_corpus() -> Path | None:
    """The shared corpus (see :func:`find_corpus`), or None."""
    return find_corpus()[0]


def _pages(corpus: Path) -> list[tuple[str, bytes]]:
    """(url, html) of every corpus page with a known URL, in a stable order."""
    pages_dir = corpus / "html-eval" / "pages"
    meta = json.loads((corpus / "html-eval" / "evaldata.json").read_text(encoding="utf-8"))
    out = []
    for url in sorted(meta):
        path = pages_dir / meta[url]["file"]
        if path.is_file() and url.startswith(("http://", "https://")):
            out.append((url, path.read_bytes()))
    return out


def _sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def _member(headers: list[tuple[str, str]], block: bytes) -> bytes:
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return gzip.compress(head.encode("utf-8") + block + b"\r\n\r\n", compresslevel=6, mtime=0)


_NON_HTML = (
    ("application/pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 2000),
    ("image/jpeg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 8),
    ("application/rss+xml; charset=utf-8",
     b'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>News</title></channel></rss>\n'),
    ("application/json", b'{"articles": [{"title": "fake", "id": 1}]}\n'),
)


class _Writer:
    """One WARC file in memory: members and the truth rows for them."""

    def __init__(self, path: str, created: dt.datetime, rng: random.Random) -> None:
        self.path = path
        self.rng = rng
        self.parts: list[bytes] = []
        self.size = 0
        self.truth: list[NewsTruth] = []
        info = b"software: StormCrawler (fake)\r\nformat: WARC File Format 1.0\r\nisPartOf: CC-NEWS\r\n"
        self.add("warcinfo", None, created, info, [("Content-Type", "application/warc-fields"),
                                                   ("WARC-Filename", path.rsplit("/", 1)[1])])

    def _id(self) -> str:
        return f"<urn:uuid:{uuid.UUID(int=self.rng.getrandbits(128), version=4)}>"

    def add(self, wtype: str, url: str | None, when: dt.datetime, block: bytes,
            extra: list[tuple[str, str]], **truth: Unpack[ResponseTruth]) -> NewsTruth:
        rid = self._id()
        headers = [("WARC-Type", wtype), ("WARC-Date", when.strftime("%Y-%m-%dT%H:%M:%SZ")), ("WARC-Record-ID", rid)]
        if url is not None:
            headers.append(("WARC-Target-URI", url))
        headers += extra
        data = _member(headers, block)
        row: NewsTruth = {"filename": self.path, "offset": self.size, "length": len(data), "type": wtype,
                          "record_id": rid, "url": url, **truth}
        self.parts.append(data)
        self.size += len(data)
        self.truth.append(row)
        return row

    def capture(self, url: str, when: dt.datetime, status: int, ctype: str, body: bytes,
                location: str | None, digest: bool, truncated: str | None) -> None:
        host = url.split("/")[2]
        path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
        req = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: CCBot/2.0\r\nAccept: */*\r\n\r\n".encode()
        self.add("request", url, when, req, [("Content-Type", "application/http; msgtype=request")])
        reason = {200: "OK", 301: "Moved Permanently", 302: "Found"}[status]
        http = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\nServer: x\r\n"
        if location:
            http += f"Location: {location}\r\n"
        block = http.encode("latin-1") + b"\r\n" + body
        extra = [("Content-Type", "application/http; msgtype=response"), ("WARC-IP-Address", "127.0.0.1")]
        if digest:
            extra.append(("WARC-Payload-Digest", _sha1(body)))
        if truncated:
            extra.append(("WARC-Truncated", truncated))
        self.add("response", url, when, block, extra, status=status, mime=ctype.split(";")[0], body_length=len(body),
                 digest=_sha1(body)[5:] if digest else None, redirect=location)

    def bytes(self, cut: bool) -> bytes:
        data = b"".join(self.parts)
        if not cut:
            return data
        last = self.truth[-1]
        last["whole"] = False
        return data[: last["offset"] + last["length"] // 2]


def build_news(root: Path | str, spec: NewsSpec | None = None, corpus: Path | None = None) -> NewsSite:
    """Write the fake CC-NEWS under ``root`` (idempotent for one spec) and return what it holds."""
    spec = spec or NewsSpec()
    root = Path(root)
    if corpus is None:
        corpus, missing = find_corpus()
        if corpus is None:
            raise FileNotFoundError(f"the fake CC-NEWS needs the shared corpus: {missing}")
    marker = root / _MARKER
    if marker.is_file() and marker.read_text() == spec.key():
        return load_news(root)
    pages = _pages(corpus)
    rng = random.Random(spec.seed)
    site = NewsSite(root)
    used: dict[str, int] = {}
    no_digest_done = False
    for year, month in spec.months:
        ym = f"{year:04d}/{month:02d}"
        paths = []
        start = dt.datetime(year, month, 1, 0, 25, 1)
        for f in range(spec.files):
            when = start + dt.timedelta(hours=f * 7, minutes=rng.randint(0, 59))
            serial = 8000 + (year % 100 * 12 + month) * 40 + f
            path = f"{PREFIX}/{ym}/CC-NEWS-{when:%Y%m%d%H%M%S}-{serial:05d}.warc.gz"
            w = _Writer(path, when, rng)
            for c in range(spec.captures):
                t = when + dt.timedelta(seconds=17 * c + rng.randint(0, 9))
                url, html = pages[rng.randrange(len(pages))]
                n = used.get(url, 0)
                used[url] = n + 1
                if n:
                    url = f"{url}{'&' if '?' in url else '?'}p={n}"
                roll = rng.random()
                if roll < 0.08:
                    w.capture(url, t, rng.choice((301, 302)), "text/html; charset=utf-8",
                              b"<html><body>Moved</body></html>", url.split("?")[0].rstrip("/") + "/amp/", True,
                              None)
                elif roll < 0.14:
                    ctype, body = _NON_HTML[rng.randrange(len(_NON_HTML))]
                    w.capture(url.rstrip("/") + "/media", t, 200, ctype, body, None, True, None)
                else:
                    digest = no_digest_done or c != 3
                    no_digest_done = no_digest_done or not digest
                    w.capture(url, t, 200, "text/html; charset=utf-8" if rng.random() < 0.7 else "text/html",
                              html, None, digest, "length" if c == 5 and f == 1 else None)
            cut = f == 2
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(w.bytes(cut))
            paths.append(path)
            site.records.extend(w.truth)
        site.months[ym] = paths
        manifest = gzip.compress("".join(p + "\n" for p in paths).encode(), mtime=0)
        (root / PREFIX / ym / "warc.paths.gz").write_bytes(manifest)
    with open(root / TRUTH, "w", encoding="utf-8") as fh:
        for row in site.records:
            fh.write(json.dumps(row) + "\n")
    marker.write_text(spec.key())
    return site


def load_news(root: Path | str) -> NewsSite:
    """A bucket :func:`build_news` wrote, read back from its truth file."""
    root = Path(root)
    site = NewsSite(root)
    with open(root / TRUTH, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            site.records.append(row)
            month = row["filename"][len(PREFIX) + 1 : len(PREFIX) + 8]
            paths = site.months.setdefault(month, [])
            if not paths or paths[-1] != row["filename"]:
                paths.append(row["filename"])
    return site


_LOCK = threading.Lock()


def ensure_news(root: Path, spec: NewsSpec | None = None) -> NewsSite | None:
    """Build the bucket once per root (thread-safe); None when the corpus is absent."""
    with _LOCK:
        if spec is None and (root / _MARKER).is_file():
            return load_news(root)  # whatever spec built it (a test's or a benchmark's) is the bucket
        try:
            return build_news(root, spec)
        except FileNotFoundError:
            return None


def no_corpus_response(key: str) -> web.Response:
    """``424 Failed Dependency``: the fake cannot make CC-NEWS without the corpus (its reason says what is
    missing; the client prints it). Not 404: that would read as a month Common Crawl does not have."""
    from xml.sax.saxutils import escape

    from aiohttp import web

    missing = find_corpus()[1] or "the shared corpus could not be read"
    reason = f"fakecc has no CC-NEWS: {missing}"
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoCorpus</Code>'
           f"<Message>{escape(reason)}</Message><Key>{escape(key)}</Key></Error>")
    return web.Response(status=424, reason=reason, text=xml, content_type="application/xml")


def add_news_routes(app: web.Application, root: Path,
                    serve_file: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
    """Serve CC-NEWS under ``/crawl-data/CC-NEWS/``, building it on the first request."""
    import asyncio


    async def news_file(request: web.Request) -> web.StreamResponse:
        site = await asyncio.get_running_loop().run_in_executor(None, ensure_news, root)
        if site is None:
            return no_corpus_response(request.match_info["key"])
        response: web.StreamResponse = await serve_file(request)
        return response

    app.router.add_route("GET", "/{key:crawl-data/CC-NEWS/.+}", news_file)
    app.router.add_route("HEAD", "/{key:crawl-data/CC-NEWS/.+}", news_file)
