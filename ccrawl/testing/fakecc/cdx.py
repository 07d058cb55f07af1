"""The fake Common Crawl's CDX API: ``/<crawl>-index``, copying what index.commoncrawl.org does.

Common Crawl's index server is pywb over a ZipNum index; this app answers the same requests the
same way, and no more generously:

* ``url`` with ``matchType`` exact (default), prefix, host or domain; ``*.example.com`` means
  domain and a trailing ``*`` means prefix, as pywb rewrites them; the key range is pywb's
  (``calc_search_range``) over SURT keys;
* pagination over ZipNum blocks of ``lines_per_block`` lines: ``showNumPages=true`` answers
  ``{"pages": P, "pageSize": 5, "blocks": B}``; ``page=N`` (default 0) reads ``pageSize`` blocks
  (5 unless the request says otherwise) starting one block before the first key, as pywb's
  binary search does; a page past the end is a 400;
* ``filter=`` repeated, each ``[!][=|~]field:value``: ``=`` exact, ``~`` regex (``re.match``,
  anchored at the start), neither: substring; ``!`` negates; no ``field:`` applies to the whole
  line; ``fl=`` picks fields; ``from``/``to`` clamp timestamps (padded the way pywb pads them);
  ``limit`` caps rows (default 100000);
* ``output=json`` answers JSON lines, otherwise CDXJ text lines;
* nothing left on a page: **404** with ``{"message": "No Captures found for: <url>"}`` (pywb
  itself answers an empty 200 here; Common Crawl answers 404 and this fake copies Common Crawl).

Faults per page, armed on :class:`CdxIndex` (``index.faults``): ``"503"`` answers 503,
``"truncate"`` sends part of the page as a chunked body and ends it cleanly (the way the real
index cuts a large page under load, so the client sees a body that simply stops), ``"drop"``
declares the full length, sends half and closes the connection.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from ccrawl.testing.started import wait_started
from ccrawl.url.surt import surt

__all__ = ["CDX_INDEX", "CdxIndex", "CdxServer", "add_cdx_routes", "index_warc_tree", "write_zipnum"]

DEFAULT_LINES_PER_BLOCK = 3000  # ZipNum block size Common Crawl uses
DEFAULT_PAGE_BLOCKS = 5  # Common Crawl's max_blocks

_ALT_FIELDS = {"statuscode": "status", "mimetype": "mime", "original": "url"}


@dataclass(slots=True)
class PageFault:
    """A misbehaviour of one page: ``kind`` 503, truncate or drop, ``times`` left (-1 forever)."""

    kind: str
    times: int


@dataclass
class CdxIndex:
    """Every crawl's captures, sorted by (urlkey, timestamp), cut into ZipNum blocks."""

    crawls: dict[str, list[dict[str, str]]]
    lines_per_block: int = DEFAULT_LINES_PER_BLOCK
    page_blocks: int = DEFAULT_PAGE_BLOCKS
    faults: dict[tuple[str, int], PageFault] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    delay: float = 0.0  # seconds every answer waits, to hold a client mid-run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _keys: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for crawl, rows in self.crawls.items():
            rows.sort(key=lambda r: (r["urlkey"], r["timestamp"]))
            self._keys[crawl] = [_line_key(rows[i]) for i in range(0, len(rows), self.lines_per_block)]

    def fail(self, crawl: str, page: int, kind: str = "503", times: int = -1) -> None:
        """Arm a fault on ``page`` of ``crawl``: ``503``, ``truncate`` or ``drop``."""
        if kind not in ("503", "truncate", "drop"):
            raise ValueError(f"unknown page fault {kind!r}: 503, truncate or drop")
        with self._lock:
            self.faults[(crawl, page)] = PageFault(kind, times)

    def take_fault(self, crawl: str, page: int) -> str | None:
        with self._lock:
            fault = self.faults.get((crawl, page))
            if fault is None or fault.times == 0:
                return None
            if fault.times > 0:
                fault.times -= 1
            return fault.kind

    def block_range(self, crawl: str, start: str, end: str) -> tuple[int, int] | None:
        """First and last block a [start, end) key range touches, found the way pywb searches."""
        keys = self._keys.get(crawl) or []
        if not keys:
            return None
        first = max(0, bisect.bisect_left(keys, start) - 1)
        last = max(0, bisect.bisect_left(keys, end) - 1)
        return first, max(first, last)

    def block_rows(self, crawl: str, first: int, last: int) -> list[dict[str, str]]:
        rows = self.crawls[crawl]
        return rows[first * self.lines_per_block : (last + 1) * self.lines_per_block]


def _line_key(row: dict[str, str]) -> str:
    return f"{row['urlkey']} {row['timestamp']}"


def search_range(url: str, match_type: str) -> tuple[str, str]:
    """pywb's ``calc_search_range`` over SURT keys."""
    key = surt(url)
    if match_type == "exact":
        return key, key + "!"
    if match_type == "prefix":
        if url.endswith("/") and not key.endswith("/"):
            key += "/"
        if url.endswith("?") and not key.endswith("?"):
            key += "?"
        return key, key[:-1] + chr(ord(key[-1]) + 1)
    host = key.split(")/")[0]
    if match_type == "host":
        return host + ")/", host + "*"
    if match_type == "domain":
        return (host + "," if "," not in host else host + ")/"), host + "-"
    raise ValueError(f"Invalid match_type: {match_type}")


class _Filter:
    """One ``filter=`` expression with pywb's rules."""

    def __init__(self, text: str) -> None:
        self.invert = text.startswith("!")
        if self.invert:
            text = text[1:]
        self.mode = "contains"
        if text.startswith("="):
            self.mode, text = "exact", text[1:]
        elif text.startswith("~"):
            self.mode, text = "regex", text[1:]
        fieldname, sep, value = text.partition(":")
        if sep:
            self.field = _ALT_FIELDS.get(fieldname, fieldname)
        else:
            self.field, value = "", text
        self.value = value
        self.regex = re.compile(value) if self.mode == "regex" else None

    def __call__(self, row: dict[str, str], line: str) -> bool:
        val = str(row.get(self.field, "")) if self.field else line
        if self.mode == "exact":
            hit = val == self.value
        elif self.regex is not None:
            hit = self.regex.match(val) is not None
        else:
            hit = self.value in val
        return hit != self.invert


def _pad(ts: str, up: bool) -> str:
    digits = "".join(c for c in ts if c.isdigit())[:14]
    return digits + ("99991231235959"[len(digits) :] if up else "00000101000000"[len(digits) :])


def _cdxj(row: dict[str, str]) -> str:
    return f"{row['urlkey']} {row['timestamp']} {json.dumps(row)}"


class _BadRequest(Exception):
    pass


def answer(index: CdxIndex, crawl: str, query: dict[str, list[str]]) -> tuple[int, str, str]:
    """(status, content type, body) for one CDX API request; ``query`` maps names to value lists."""

    def one(name: str, default: str = "") -> str:
        values = query.get(name)
        return str(values[0]) if values else default

    url = one("url")
    if not url:
        return 400, "application/json", json.dumps({"message": "The url param is required"})
    match_type = one("matchType", "exact")
    if url.startswith("*."):
        url, match_type = url[2:], "domain"
    elif url.endswith("*"):
        url, match_type = url[:-1], "prefix"
    try:
        start, end = search_range(url, match_type)
    except Exception as exc:
        return 400, "application/json", json.dumps({"message": str(exc)})
    try:
        page_size = int(one("pageSize", str(index.page_blocks)))
        page = int(one("page", "0"))
        limit = int(one("limit", "100000"))
    except ValueError as exc:
        return 400, "application/json", json.dumps({"message": f"Invalid value: {exc}"})
    span = index.block_range(crawl, start, end)
    if one("showNumPages").lower() == "true":
        if span is None:
            return 200, "application/json", json.dumps({"pages": 0, "pageSize": page_size, "blocks": 0})
        blocks = span[1] - span[0]
        return 200, "application/json", json.dumps(
            {"pages": blocks // page_size + 1, "pageSize": page_size, "blocks": blocks + 1}
        )
    not_found = (404, "application/json", json.dumps({"message": f"No Captures found for: {one('url')}"}))
    if span is None:
        return not_found
    blocks = span[1] - span[0]
    pages = blocks // page_size + 1
    if page < 0 or page >= pages:
        msg = f"Page {page} invalid: First Page is 0, Last Page is {pages - 1}"
        return 400, "application/json", json.dumps({"message": msg})
    first = span[0] + page * page_size
    last = min(first + page_size - 1, span[1])
    try:
        filters = [_Filter(f) for f in query.get("filter", [])]
    except re.error as exc:
        return 400, "application/json", json.dumps({"message": f"Invalid filter regex: {exc}"})
    lo = _pad(one("from"), False) if one("from") else ""
    hi = _pad(one("to"), True) if one("to") else ""
    fields = [_ALT_FIELDS.get(f, f) for f in one("fl").split(",") if f] if one("fl") else []
    as_json = one("output") == "json"
    out: list[str] = []
    for row in index.block_rows(crawl, first, last):
        key = _line_key(row)
        if not (start <= key < end):
            continue
        line = _cdxj(row)
        if not all(f(row, line) for f in filters):
            continue
        if (lo and row["timestamp"] < lo) or (hi and row["timestamp"] > hi):
            continue
        if fields:
            picked = {f: row[f] for f in fields if f in row}
            out.append(json.dumps(picked) if as_json else " ".join(picked.values()))
        else:
            out.append(json.dumps(row) if as_json else line)
        if len(out) >= limit:
            break
    if not out:
        return not_found
    return 200, "application/json" if as_json else "text/plain", "".join(f"{line}\n" for line in out)


CDX_INDEX = web.AppKey("cdx_index", CdxIndex)


async def _send_fault(request: web.Request, kind: str, status: int, ctype: str, body: bytes) -> web.StreamResponse:
    if kind == "503":
        return web.Response(status=503, text="Service Temporarily Unavailable")
    if kind == "truncate":
        # Chunked, cut mid-line, ended cleanly: the client cannot tell from the framing.
        stream = web.StreamResponse(status=status, headers={"Content-Type": ctype})
        stream.enable_chunked_encoding()
        await stream.prepare(request)
        await stream.write(body[: max(1, len(body) * 2 // 3)])
        await stream.write_eof()
        return stream
    stream = web.StreamResponse(status=status, headers={"Content-Type": ctype})
    stream.content_length = len(body)
    await stream.prepare(request)
    await stream.write(body[: len(body) // 2])
    if request.transport is not None:
        request.transport.abort()
    raise asyncio.CancelledError


async def _handle(request: web.Request) -> web.StreamResponse:
    index = request.app[CDX_INDEX]
    crawl = request.match_info["crawl"]
    with index._lock:
        index.requests.append(request.path_qs)
    if index.delay > 0:
        await asyncio.sleep(index.delay)
    if crawl not in index.crawls:
        return web.Response(status=404, text=f"No such collection: {crawl}")
    query: dict[str, list[str]] = {}
    for k, v in request.query.items():
        query.setdefault(k, []).append(v)
    status, ctype, body = answer(index, crawl, query)
    paged = "showNumPages" not in query
    if paged:
        kind = index.take_fault(crawl, int(query.get("page", ["0"])[0]) if query.get("page", ["0"])[0].isdigit() else 0)
        if kind is not None:
            return await _send_fault(request, kind, status, ctype, body.encode())
    return web.Response(status=status, body=body.encode(), content_type=ctype.split(";")[0])


def index_warc_tree(root: Path | str) -> dict[str, list[dict[str, str]]]:
    """CDX rows per crawl for every ``crawl-data/<crawl>/.../*.warc.gz`` under ``root``.

    Response and revisit records of the ``warc`` and ``crawldiagnostics`` folders are indexed
    with :mod:`ccrawl.warc.cdxj`, the filename being the path under ``root``.
    """
    from ccrawl.warc.cdxj import index_file

    root = Path(root)
    crawls: dict[str, list[dict[str, str]]] = {}
    for path in sorted(root.glob("crawl-data/*/segments/*/*/*.warc.gz")):
        if path.parent.name not in ("warc", "crawldiagnostics"):
            continue
        rel = path.relative_to(root).as_posix()
        crawl = rel.split("/")[1]
        crawls.setdefault(crawl, []).extend(index_file(path, rel))
    return crawls


def add_cdx_routes(
    app: web.Application, index: CdxIndex | Path | str, *, lines_per_block: int | None = None
) -> CdxIndex:
    """Add ``GET /<crawl>-index`` to ``app``; ``index`` is a :class:`CdxIndex` or a bucket root.

    A root is indexed from its WARC files (:func:`index_warc_tree`), so the offsets served are
    the offsets in the files. Returns the index (also at ``app[CDX_INDEX]``) for arming faults.
    """
    if not isinstance(index, CdxIndex):
        crawls = index_warc_tree(index)
        index = CdxIndex(crawls, lines_per_block=lines_per_block or 50)
    app[CDX_INDEX] = index
    app.router.add_get(r"/{crawl:[^/]+}-index", _handle)
    return index


def write_zipnum(rows: Iterable[dict[str, str]], directory: Path | str, *, lines_per_block: int) -> Path:
    """Write ``rows`` as a ZipNum index (``cdx-00000.gz``, ``cluster.idx``, ``cluster.loc``) for pywb.

    The layout Common Crawl publishes: a gzip member per block of CDXJ lines and a summary line
    per block (``urlkey timestamp<TAB>part<TAB>offset<TAB>length<TAB>block number``). Returns
    the path of ``cluster.idx``.
    """
    import gzip

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: (r["urlkey"], r["timestamp"]))
    lines = [_cdxj(r) for r in ordered]
    shard = directory / "cdx-00000.gz"
    summary = []
    with open(shard, "wb") as out:
        for n, i in enumerate(range(0, len(lines), lines_per_block)):
            block = lines[i : i + lines_per_block]
            start = out.tell()
            out.write(gzip.compress("".join(f"{line}\n" for line in block).encode(), mtime=0))
            key = " ".join(block[0].split(" ", 2)[:2])
            summary.append(f"{key}\tcdx-00000.gz\t{start}\t{out.tell() - start}\t{n + 1}\n")
    (directory / "cluster.idx").write_text("".join(summary), encoding="utf-8")
    (directory / "cluster.loc").write_text(f"cdx-00000.gz\t{shard.resolve()}\n", encoding="utf-8")
    return directory / "cluster.idx"


def rows_of(lines: Iterable[str]) -> Iterator[dict[str, str]]:
    """Rows from CDXJ text lines (``urlkey timestamp {json}``)."""
    for line in lines:
        if line.strip():
            yield json.loads(line.split(" ", 2)[2])


class CdxServer:
    """A bare aiohttp app with only the CDX routes, served on loopback from a background thread."""

    def __init__(self, index: CdxIndex, host: str = "127.0.0.1") -> None:
        self.index = index
        self.host = host
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> CdxServer:
        self._thread = threading.Thread(target=self._serve, name="fakecdx", daemon=True)
        self._thread.start()
        wait_started(self._ready, self._thread, "fake CDX server")
        if not self.port:
            raise RuntimeError("fake CDX server started without a listening port")
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def start() -> None:
            app = web.Application()
            add_cdx_routes(app, self.index)
            self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, 0)
            await site.start()
            server = getattr(site, "_server", None)
            if server is not None and server.sockets:
                self.port = server.sockets[0].getsockname()[1]

        loop.run_until_complete(start())
        self._ready.set()
        loop.run_forever()
        if self._runner is not None:
            loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
