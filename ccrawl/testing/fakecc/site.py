"""Builds the fake Common Crawl's bucket on disk: crawls, path manifests, WARC/WAT/WET files, indexes.

Everything is deterministic (same arguments, same bytes), laid out the way ``data.commoncrawl.org``
lays it out, so a path that works against the fake is a path that works against the real bucket::

    <root>/collinfo.json
    <root>/crawl-data/<crawl>/{warc,wat,wet,robotstxt,non200responses,segment,cc-index,cc-index-table}.paths.gz
    <root>/crawl-data/<crawl>/segments/<segment>/{warc,wat,wet,robotstxt,crawldiagnostics}/<file>
    <root>/cc-index/collections/<crawl>/indexes/{cdx-00000.gz,cluster.idx}
    <root>/cc-index/table/cc-main/warc/crawl=<crawl>/subset=warc/part-00000.c000.gz.parquet
    <root>/captures.jsonl          every capture the CDX index holds, as the CDX API's JSON rows

WARC files follow Common Crawl's shape: a warcinfo record, then a request, response and metadata
record per capture, each record its own gzip member, so the ``offset``/``length`` of a response
record in ``captures.jsonl`` is exactly what the real index reports. Crawl-diagnostics files hold
the non-200 captures (redirects, 404s); robots.txt files hold robots.txt captures and, as on the
real bucket, are not in the CDX index.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The manifest kinds Common Crawl publishes per crawl, by the name ``paths``/``download`` take.
KINDS = ("warc", "wat", "wet", "robotstxt", "non200responses", "segment", "cc-index", "cc-index-table")

#: Crawls over two years, newest first (the order collinfo.json uses): (year, ISO week).
DEFAULT_CRAWLS = ((2025, 26), (2025, 13), (2025, 5), (2024, 51), (2024, 33), (2024, 22), (2024, 10))

HOSTS = ("example.com", "www.example.org", "news.example.net", "shop.example.co.uk", "blog.example.de")
WORDS = (
    "archive", "crawl", "index", "record", "capture", "page", "web", "common", "data", "open", "research",
    "corpus", "text", "link", "host", "domain", "segment", "offset", "length", "digest", "language", "content",
    "policy", "robots", "sitemap", "feed", "article", "news", "report", "budget", "senate", "library", "museum",
    "science", "history", "weather", "market", "travel", "recipe", "garden",
)
LANGS = (("eng", "en"), ("deu", "de"), ("fra", "fr"), ("vie", "vi"))


@dataclass(slots=True)
class SiteSpec:
    """How big the fake bucket is: ``records``/``files`` for the newest crawl, a sliver for the rest."""

    records: int = 30
    files: int = 3
    older_records: int = 6
    older_files: int = 1
    crawls: tuple[tuple[int, int], ...] = DEFAULT_CRAWLS
    seed: int = 20240601
    #: The hosts captures cycle through (robots.txt files keep :data:`HOSTS`); a bigger set makes
    #: a realistic columnar index (see :func:`ccrawl.testing.fakecc.columnar.many_hosts`).
    hosts: tuple[str, ...] = HOSTS


@dataclass(slots=True)
class FakeSite:
    """What was built: the root, the crawl ids (newest first) and every indexed capture."""

    root: Path
    crawls: list[str]
    captures: list[dict[str, str]] = field(default_factory=list)

    def captures_of(self, crawl: str) -> list[dict[str, str]]:
        return [c for c in self.captures if c["filename"].startswith(f"crawl-data/{crawl}/")]


def crawl_id(year: int, week: int) -> str:
    return f"CC-MAIN-{year}-{week:02d}"


def _crawl_window(year: int, week: int) -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime.fromisocalendar(year, max(1, week), 1)
    return start, start + dt.timedelta(days=13, hours=23, minutes=59, seconds=59)


def _surt(url: str) -> str:
    from ccrawl.url.surt import surt

    return str(surt(url))


def _html(rng: random.Random, url: str, host: str, lang: str) -> bytes:
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))).title()
    paras = []
    for _ in range(rng.randint(3, 12)):
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 60)))
        paras.append(f"<p>{sentence.capitalize()}.</p>")
    links = [f'<a href="https://{host}/{rng.choice(WORDS)}/{rng.randint(1, 999)}">{rng.choice(WORDS)}</a>']
    links += [f'<a href="https://{rng.choice(HOSTS)}/{rng.choice(WORDS)}">{rng.choice(WORDS)}</a>' for _ in range(3)]
    links.append('<a href="/about">About</a>')
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="canonical" href="{url}"></head>\n<body><header><nav>{" | ".join(links[:2])}</nav></header>\n'
        f"<main><h1>{title}</h1>\n{chr(10).join(paras)}\n<ul>{''.join(f'<li>{a}</li>' for a in links)}</ul></main>\n"
        f"<footer>&copy; {host}</footer></body></html>\n"
    ).encode()


def _robots(rng: random.Random, host: str) -> bytes:
    lines = ["User-agent: *", f"Disallow: /{rng.choice(WORDS)}/", f"Sitemap: https://{host}/sitemap.xml"]
    if rng.random() < 0.5:
        lines[1:1] = ["Crawl-delay: 1"]
    return ("\n".join(lines) + "\n").encode()


def _sha1_b32(data: bytes) -> str:
    return base64.b32encode(hashlib.sha1(data).digest()).decode()


def _record_id(rng: random.Random) -> str:
    return f"<urn:uuid:{rng.getrandbits(128):032x}>"


class _WarcFile:
    """Writes one gzip member per record and reports where each one landed."""

    def __init__(self, name: str, created: dt.datetime, rng: random.Random) -> None:
        from warcio.warcwriter import WARCWriter

        self.buffer = io.BytesIO()
        self.writer = WARCWriter(self.buffer, gzip=True, warc_version="1.0")
        self.rng = rng
        self.name = name
        payload = (
            b"software: ccrawl-fakecc\r\nisPartOf: fake\r\noperator: ccrawl tests\r\n"
            b"description: deterministic fake of a Common Crawl file\r\n"
        )
        info = {"WARC-Filename": name.rsplit("/")[-1]}
        self.write("warcinfo", None, payload, "application/warc-fields", created, info)

    def write(
        self,
        rec_type: str,
        uri: str | None,
        payload: bytes,
        content_type: str,
        date: dt.datetime,
        extra: dict[str, str] | None = None,
        http_headers: list[tuple[str, str]] | None = None,
        status_line: str | None = None,
    ) -> tuple[int, int]:
        from warcio.statusandheaders import StatusAndHeaders

        headers = {
            "WARC-Record-ID": _record_id(self.rng),
            "WARC-Date": date.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        headers.update(extra or {})
        hdrs = None
        if http_headers is not None and status_line is not None:
            hdrs = StatusAndHeaders(status_line, http_headers, protocol="HTTP/1.1")
        record = self.writer.create_warc_record(
            uri or "",
            rec_type,
            payload=io.BytesIO(payload),
            length=len(payload),
            warc_content_type=content_type,
            warc_headers_dict=headers,
            http_headers=hdrs,
        )
        start = self.buffer.tell()
        self.writer.write_record(record)
        return start, self.buffer.tell() - start


@dataclass(slots=True)
class _Capture:
    url: str
    host: str
    when: dt.datetime
    status: int
    body: bytes
    mime: str
    lang: tuple[str, str] | None
    location: str | None = None


def _captures(
    rng: random.Random, n: int, start: dt.datetime, kind: str, hosts: tuple[str, ...] = HOSTS
) -> list[_Capture]:
    out = []
    for i in range(n):
        host = hosts[i % len(hosts)]
        when = start + dt.timedelta(seconds=rng.randint(0, 13 * 86400))
        if kind == "robotstxt":
            out.append(_Capture(f"https://{host}/robots.txt", host, when, 200, _robots(rng, host), "text/plain", None))
            continue
        path = f"{rng.choice(WORDS)}/{rng.choice(WORDS)}-{i}.html" if i % 7 else ""
        url = f"https://{host}/{path}"
        if kind == "non200responses":
            if i % 2:
                target = f"https://{host}/{rng.choice(WORDS)}/"
                body = f'<html><body>Moved to <a href="{target}">{target}</a></body></html>'.encode()
                out.append(_Capture(url, host, when, 301, body, "text/html", None, target))
            else:
                out.append(_Capture(url, host, when, 404, b"<html><body>Not Found</body></html>", "text/html", None))
            continue
        lang = LANGS[rng.randrange(len(LANGS))] if i % 5 else LANGS[0]
        out.append(_Capture(url, host, when, 200, _html(rng, url, host, lang[1]), "text/html", lang))
    return out


_REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}


def _write_capture_file(
    wf: _WarcFile, caps: Iterable[_Capture], crawl: str, indexed: bool, out: list[dict[str, str]]
) -> None:
    for cap in sorted(caps, key=lambda c: c.when):
        agent = "CCBot/2.0 (https://commoncrawl.org/faq/)"
        req_headers = [("Host", cap.host), ("User-Agent", agent), ("Accept", "*/*")]
        path = "/" + cap.url.split("/", 3)[3] if cap.url.count("/") >= 3 else "/"
        from warcio.statusandheaders import StatusAndHeaders

        req_sh = StatusAndHeaders(f"GET {path} HTTP/1.1", req_headers, is_http_request=True)
        req = wf.writer.create_warc_record(
            cap.url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            warc_headers_dict={
                "WARC-Record-ID": _record_id(wf.rng),
                "WARC-Date": cap.when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            http_headers=req_sh,
        )
        wf.writer.write_record(req)
        ctype = f"{cap.mime}; charset=utf-8" if cap.mime == "text/html" else cap.mime
        http = [("Content-Type", ctype), ("Content-Length", str(len(cap.body))), ("Server", "nginx")]
        if cap.location:
            http.append(("Location", cap.location))
        extra = {"WARC-Payload-Digest": f"sha1:{_sha1_b32(cap.body)}", "WARC-Target-URI": cap.url}
        if cap.lang:
            extra["WARC-Identified-Content-Language"] = cap.lang[0]
        offset, length = wf.write(
            "response",
            cap.url,
            cap.body,
            "application/http; msgtype=response",
            cap.when,
            extra,
            http,
            f"{cap.status} {_REASONS[cap.status]}",
        )
        meta = f"fetchTimeMs: {wf.rng.randint(20, 900)}\r\n".encode()
        wf.write("metadata", cap.url, meta, "application/warc-fields", cap.when)
        if not indexed:
            continue
        row: dict[str, str] = {
            "urlkey": _surt(cap.url),
            "timestamp": cap.when.strftime("%Y%m%d%H%M%S"),
            "url": cap.url,
            "mime": cap.mime,
            "mime-detected": cap.mime,
            "status": str(cap.status),
            "digest": _sha1_b32(cap.body),
            "length": str(length),
            "offset": str(offset),
            "filename": wf.name,
        }
        if cap.location:
            row["redirect"] = cap.location
        if cap.lang:
            row["charset"] = "UTF-8"
            row["languages"] = cap.lang[0]
        out.append(row)


def _text_of(html: bytes) -> str:
    # The pages are our own well-formed HTML, so dropping tags is all a WET needs here.
    text = re.sub(r"<[^>]+>", "\n", html.decode("utf-8"))
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _derived_files(root: Path, warc_path: str, crawl: str, caps: list[_Capture], rng: random.Random) -> tuple[str, str]:
    """A WAT and a WET beside a WARC, the way Common Crawl derives them."""
    wat_path = warc_path.replace("/warc/", "/wat/").replace(".warc.gz", ".warc.wat.gz")
    wet_path = warc_path.replace("/warc/", "/wet/").replace(".warc.gz", ".warc.wet.gz")
    created = min((c.when for c in caps), default=dt.datetime(2024, 1, 1))
    wat = _WarcFile(wat_path, created, rng)
    wet = _WarcFile(wet_path, created, rng)
    for cap in sorted(caps, key=lambda c: c.when):
        envelope = {"Envelope": {"WARC-Header-Metadata": {"WARC-Target-URI": cap.url}, "Payload-Metadata": {
            "HTTP-Response-Metadata": {"Response-Message": {"Status": str(cap.status)}}}}}
        wat.write("metadata", cap.url, json.dumps(envelope).encode(), "application/json", cap.when)
        wet.write("conversion", cap.url, _text_of(cap.body).encode(), "text/plain", cap.when)
    for rel, wf in ((wat_path, wat), (wet_path, wet)):
        _write_bytes(root / rel, wf.buffer.getvalue())
    return wat_path, wet_path


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _gz_lines(lines: Iterable[str]) -> bytes:
    return gzip.compress("".join(f"{line}\n" for line in lines).encode(), mtime=0)


def _cdx_index(root: Path, crawl: str, rows: list[dict[str, str]]) -> list[str]:
    """A ZipNum CDX shard (gzip member per 50 lines) with its cluster.idx, as Common Crawl publishes."""
    base = f"cc-index/collections/{crawl}/indexes"
    lines = sorted(f"{r['urlkey']} {r['timestamp']} {json.dumps(_cdx_json(r))}" for r in rows)
    shard = io.BytesIO()
    cluster = []
    for i in range(0, len(lines), 50):
        block = lines[i : i + 50]
        start = shard.tell()
        shard.write(gzip.compress("".join(f"{line}\n" for line in block).encode(), mtime=0))
        key = " ".join(block[0].split(" ", 2)[:2])
        cluster.append(f"{key}\tcdx-00000.gz\t{start}\t{shard.tell() - start}\t{i // 50 + 1}")
    _write_bytes(root / base / "cdx-00000.gz", shard.getvalue())
    _write_bytes(root / base / "cluster.idx", "".join(f"{c}\n" for c in cluster).encode())
    return [f"{base}/cdx-00000.gz", f"{base}/cluster.idx"]


def _cdx_json(row: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in row.items() if k not in ("urlkey", "timestamp")}


def _columnar(root: Path, crawl: str, rows: list[dict[str, str]]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rel = f"cc-index/table/cc-main/warc/crawl={crawl}/subset=warc/part-00000.c000.gz.parquet"
    table = pa.table(
        {
            "url_surtkey": [r["urlkey"] for r in rows],
            "url": [r["url"] for r in rows],
            "url_host_name": [r["url"].split("/")[2] for r in rows],
            "fetch_time": [dt.datetime.strptime(r["timestamp"], "%Y%m%d%H%M%S") for r in rows],
            "fetch_status": pa.array([int(r["status"]) for r in rows], pa.int16()),
            "content_mime_type": [r["mime"] for r in rows],
            "content_languages": [r.get("languages") for r in rows],
            "warc_filename": [r["filename"] for r in rows],
            "warc_record_offset": pa.array([int(r["offset"]) for r in rows], pa.int32()),
            "warc_record_length": pa.array([int(r["length"]) for r in rows], pa.int32()),
        }
    )
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, root / rel, compression="gzip")
    return rel


def _spread(n: int, files: int) -> Iterator[int]:
    """How many of ``n`` records go in each of ``files`` files (as even as possible)."""
    for i in range(files):
        yield n // files + (1 if i < n % files else 0)


def build_site(root: Path | str, spec: SiteSpec | None = None) -> FakeSite:
    """Write the whole fake bucket under ``root`` and return what it holds."""
    spec = spec or SiteSpec()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    site = FakeSite(root, [crawl_id(y, w) for y, w in spec.crawls])
    collinfo = []
    for index, (year, week) in enumerate(spec.crawls):
        crawl = crawl_id(year, week)
        start, end = _crawl_window(year, week)
        name = f"{start:%B} {year} Index"
        collinfo.append({"id": crawl, "name": name, "from": start.isoformat(), "to": end.isoformat()})
        rng = random.Random(f"{spec.seed}:{crawl}")
        n_records, n_files = (spec.records, spec.files) if index == 0 else (spec.older_records, spec.older_files)
        manifests: dict[str, list[str]] = {k: [] for k in KINDS}
        rows: list[dict[str, str]] = []
        stamp = f"{start:%Y%m%d%H%M%S}"
        segment = f"crawl-data/{crawl}/segments/{int(start.timestamp() * 1000)}.{index}"
        manifests["segment"].append(f"{segment}/")
        all_caps = _captures(rng, n_records, start, "warc", spec.hosts)
        offset = 0
        for f, count in enumerate(_spread(n_records, n_files)):
            caps = all_caps[offset : offset + count]
            offset += count
            name = f"CC-MAIN-{stamp}-{end:%Y%m%d%H%M%S}-{f:05d}.warc.gz"
            for kind, sub, kcaps, indexed in (
                ("warc", "warc", caps, True),
                ("robotstxt", "robotstxt", _captures(rng, len(HOSTS), start, "robotstxt"), False),
                ("non200responses", "crawldiagnostics",
                 _captures(rng, max(2, count // 5), start, "non200responses", spec.hosts), True),
            ):
                path = f"{segment}/{sub}/{name}"
                wf = _WarcFile(path, start, rng)
                _write_capture_file(wf, kcaps, crawl, indexed, rows)
                _write_bytes(root / path, wf.buffer.getvalue())
                manifests[kind].append(path)
            wat_path, wet_path = _derived_files(root, f"{segment}/warc/{name}", crawl, caps, rng)
            manifests["wat"].append(wat_path)
            manifests["wet"].append(wet_path)
        manifests["cc-index"] = _cdx_index(root, crawl, rows)
        manifests["cc-index-table"] = [_columnar(root, crawl, rows)]
        for kind, paths in manifests.items():
            _write_bytes(root / f"crawl-data/{crawl}/{kind}.paths.gz", _gz_lines(paths))
        site.captures.extend(rows)
    _write_bytes(root / "collinfo.json", json.dumps(collinfo, indent=1).encode())
    with open(root / "captures.jsonl", "w", encoding="utf-8") as fh:
        for row in site.captures:
            fh.write(json.dumps(row) + "\n")
    return site


def load_site(root: Path | str) -> FakeSite:
    """A site :func:`build_site` wrote earlier, read back from its ``collinfo.json`` and ``captures.jsonl``."""
    root = Path(root)
    crawls = [c["id"] for c in json.loads((root / "collinfo.json").read_text())]
    with open(root / "captures.jsonl", encoding="utf-8") as fh:
        captures = [json.loads(line) for line in fh]
    return FakeSite(root, crawls, captures)
