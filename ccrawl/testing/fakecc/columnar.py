"""The fake Common Crawl's cc-index-table: the published columnar index over the captures it serves.

Common Crawl publishes, per crawl, ``cc-index/table/cc-main/warc/crawl=<id>/subset=<subset>/part-*.parquet``:
every capture of the CDX index as one row with the columns of ``cc-index-schema-flat.json``
(:data:`SCHEMA`, in the published order and types). The parts of a subset are contiguous ranges of
``url_surtkey`` and each part is sorted by it, so a host or a domain lives in one or two parts and a
few row groups; the row-group statistics and the page index (ColumnIndex/OffsetIndex) are written,
which is what lets a reader skip what cannot match.

The rows are built from the same captures the CDX index and the WARC files hold
(``site.captures``): same URL, offset, length, digest, and ``warc_record_id`` read out of the WARC
record itself, so ``columnar locations | fetch - --batch`` returns the bodies the CDX API points at.
``subset`` is ``warc`` for captures in ``warc/`` files and ``crawldiagnostics`` for the redirects
and 404s; robots.txt captures are not in the CDX index and so not here either.

:func:`ensure_table` is called by :func:`ccrawl.testing.fakecc.app.make_app`; it (re)writes the table
once per site (a marker file records the layout) and the ``cc-index-table.paths.gz`` manifests.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
import re
import uuid
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ccrawl.commoncrawl.columnar.schema import arrow_schema
from ccrawl.jsontypes import Record
from ccrawl.testing.fakecc.site import FakeSite

TABLE_ROOT = "cc-index/table/cc-main/warc"
MARKER = ".cc-index-table.json"

@dataclass(slots=True, frozen=True)
class Layout:
    """How the table is cut: parts per subset, rows per row group, bytes per data page."""

    max_parts: int = 4
    rows_per_part: int = 4096
    row_group_rows: int = 1024
    page_bytes: int = 8192
    #: pyarrow closes a page only between write batches, so this bounds rows per page too.
    write_batch: int = 128

    def parts_for(self, n_rows: int) -> int:
        return max(1, min(self.max_parts, -(-n_rows // self.rows_per_part)))


def layout_for(n_rows: int) -> Layout:
    """A layout with several parts and row groups even for a tiny site, realistic ones for a big one."""
    if n_rows <= 200:
        return Layout(max_parts=2, rows_per_part=8, row_group_rows=20, page_bytes=200, write_batch=4)
    return Layout(max_parts=2, rows_per_part=max(1024, n_rows // 2), row_group_rows=16384, page_bytes=8192,
                  write_batch=128)


#: Columns with few distinct values are dictionary-encoded; the URL-like ones are plain, as a
#: writer's dictionary overflows on them in a real part (parquet-mr falls back past 1 MiB).
DICTIONARY_ENCODED = (
    "url_host_name", "url_host_tld", "url_host_2nd_last_part", "url_host_3rd_last_part", "url_host_4th_last_part",
    "url_host_5th_last_part", "url_host_registry_suffix", "url_host_registered_domain", "url_host_private_suffix",
    "url_host_private_domain", "url_host_name_reversed", "url_protocol", "url_port", "fetch_status",
    "content_mime_type", "content_mime_detected", "content_charset", "content_languages", "content_truncated",
    "warc_filename", "warc_segment",
)


def many_hosts(n: int, seed: int = 7) -> tuple[str, ...]:
    """``n`` distinct host names over a few TLDs (vn included), for a site whose index is worth pruning."""
    rng = random.Random(seed)
    tlds = ("com", "org", "net", "de", "vn", "co.uk", "fr", "com.vn", "edu", "io")
    subs = ("www", "news", "blog", "shop", "", "", "m", "docs")
    hosts: list[str] = []
    seen: set[str] = set()
    while len(hosts) < n:
        name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10)))
        sub = rng.choice(subs)
        host = ".".join(p for p in (sub, name, rng.choice(tlds)) if p)
        if host not in seen:
            seen.add(host)
            hosts.append(host)
    return tuple(hosts)


_RECORD_ID = re.compile(rb"WARC-Record-ID:\s*<urn:uuid:([0-9a-fA-F-]+)>")


def _record_id(root: Path, filename: str, offset: int, length: int, cache: dict[str, bytes]) -> bytes:
    data = cache.get(filename)
    if data is None:
        data = cache[filename] = (root / filename).read_bytes()
    head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[offset : offset + length], 4096)
    m = _RECORD_ID.search(head)
    if m is None:
        raise ValueError(f"{filename}@{offset}: no WARC-Record-ID in the record")
    return uuid.UUID(m.group(1).decode()).bytes


def _host_parts(host: str) -> dict[str, str | None]:
    from ccrawl.url.domain import registered_domain_py

    labels = host.split(".")
    rev = labels[::-1]
    is_ip = bool(re.fullmatch(r"[0-9.]+", host))
    out: dict[str, str | None] = {
        "url_host_tld": rev[0],
        "url_host_2nd_last_part": rev[1] if len(rev) > 1 else None,
        "url_host_3rd_last_part": rev[2] if len(rev) > 2 else None,
        "url_host_4th_last_part": rev[3] if len(rev) > 3 else None,
        "url_host_5th_last_part": rev[4] if len(rev) > 4 else None,
        "url_host_name_reversed": None if is_ip else ".".join(rev),
    }
    icann = None if is_ip else registered_domain_py(host, include_private=False)
    private = None if is_ip else registered_domain_py(host, include_private=True)
    out["url_host_registered_domain"] = icann
    out["url_host_registry_suffix"] = icann.split(".", 1)[1] if icann and "." in icann else None
    out["url_host_private_domain"] = private
    out["url_host_private_suffix"] = private.split(".", 1)[1] if private and "." in private else None
    return out


def table_row(cap: dict[str, str], record_id: bytes) -> Record:
    """One cc-index-table row for a CDX capture row (the JSON the fake's CDX API serves)."""
    from urllib.parse import urlsplit

    parts = urlsplit(cap["url"])
    host = (parts.hostname or "").lower()
    filename = cap["filename"]
    segment = filename.split("/segments/", 1)[1].split("/", 1)[0]
    row: Record = {
        "url_surtkey": cap["urlkey"],
        "url": cap["url"],
        "url_host_name": host,
        **_host_parts(host),
        "url_protocol": parts.scheme,
        "url_port": parts.port,
        "url_path": parts.path or "/",
        "url_query": parts.query or None,
        "fetch_time": dt.datetime.strptime(cap["timestamp"], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC),
        "fetch_status": int(cap["status"]),
        "fetch_redirect": cap.get("redirect"),
        "content_digest": cap.get("digest"),
        "content_mime_type": cap.get("mime"),
        "content_mime_detected": cap.get("mime-detected"),
        "content_charset": cap.get("charset"),
        "content_languages": cap.get("languages"),
        "content_truncated": cap.get("truncated"),
        "warc_record_id": record_id,
        "warc_filename": filename,
        "warc_record_offset": int(cap["offset"]),
        "warc_record_length": int(cap["length"]),
        "warc_segment": segment,
    }
    return row


def subset_of(filename: str) -> str:
    for subset in ("crawldiagnostics", "robotstxt", "warc"):
        if f"/{subset}/" in filename:
            return subset
    raise ValueError(f"{filename}: not in a warc, crawldiagnostics or robotstxt directory")


def write_parts(root: Path, crawl: str, subset: str, rows: Sequence[Record], layout: Layout) -> list[str]:
    """Write ``rows`` as sorted, range-partitioned parts of one ``crawl=/subset=`` directory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ordered = sorted(rows, key=lambda r: (r["url_surtkey"], r["fetch_time"], r["warc_filename"]))
    n_parts = layout.parts_for(len(ordered))
    directory = root / TABLE_ROOT / f"crawl={crawl}" / f"subset={subset}"
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.parquet"):
        old.unlink()
    schema = arrow_schema()
    written = []
    for p in range(n_parts):
        chunk = ordered[p * len(ordered) // n_parts : (p + 1) * len(ordered) // n_parts]
        table = pa.Table.from_pylist(list(chunk), schema=schema)
        rel = f"{TABLE_ROOT}/crawl={crawl}/subset={subset}/part-{p:05d}.c000.gz.parquet"
        pq.write_table(
            table,
            root / rel,
            compression="gzip",
            row_group_size=layout.row_group_rows,
            data_page_size=layout.page_bytes,
            write_statistics=True,
            write_page_index=True,
            use_dictionary=list(DICTIONARY_ENCODED),
            write_batch_size=layout.write_batch,
        )
        written.append(rel)
    return written


def build_table(site: FakeSite, layout: Layout | None = None) -> dict[str, list[str]]:
    """Write the whole cc-index-table of ``site``; returns the part paths per crawl."""
    root = Path(site.root)
    by_partition: dict[tuple[str, str], list[Record]] = defaultdict(list)
    files: dict[str, bytes] = {}
    for cap in site.captures:
        crawl = cap["filename"].split("/")[1]
        rid = _record_id(root, cap["filename"], int(cap["offset"]), int(cap["length"]), files)
        by_partition[(crawl, subset_of(cap["filename"]))].append(table_row(cap, rid))
    out: dict[str, list[str]] = {c: [] for c in site.crawls}
    for (crawl, subset), rows in sorted(by_partition.items()):
        out[crawl] += write_parts(root, crawl, subset, rows, layout or layout_for(len(rows)))
    # The one part the bucket builder wrote before the table had its real schema is replaced.
    for crawl, parts in out.items():
        manifest = root / f"crawl-data/{crawl}/cc-index-table.paths.gz"
        manifest.write_bytes(gzip.compress("".join(f"{p}\n" for p in parts).encode(), mtime=0))
    return out


def ensure_table(site: FakeSite, layout: Layout | None = None) -> None:
    """Build the table once per site and layout (a marker file beside collinfo.json remembers)."""
    root = Path(site.root)
    marker = root / MARKER
    want = json.dumps({"layout": asdict(layout) if layout else "auto", "captures": len(site.captures), "v": 6})
    if marker.exists() and marker.read_text() == want:
        return
    build_table(site, layout)
    marker.write_text(want)


def part_paths(root: Path | str) -> Iterable[Path]:
    """Every part file under ``root`` (for tests and the local-copy path)."""
    return sorted(Path(root).glob(f"{TABLE_ROOT}/crawl=*/subset=*/*.parquet"))
