"""The oracle: every row of every part read whole with pyarrow, the filters applied in plain Python."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ccrawl.commoncrawl.columnar.filters import Filters
from ccrawl.testing.fakecc.columnar import part_paths


def all_rows(root: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows = []
    for path in part_paths(root):
        crawl = path.parent.parent.name.split("=", 1)[1]
        subset = path.parent.name.split("=", 1)[1]
        for r in pq.read_table(path).to_pylist():
            r["crawl"], r["subset"] = crawl, subset
            rows.append(r)
    return rows


def _langs(v: str | None) -> set[str]:
    return set(v.split(",")) if v else set()


def keep(r: dict[str, Any], f: Filters) -> bool:
    checks = [
        not f.crawls or r["crawl"] in f.crawls,
        not f.subsets or r["subset"] in f.subsets,
        not f.domains or r["url_host_registered_domain"] in f.domains,
        not f.hosts or r["url_host_name"] in f.hosts,
        not f.tlds or r["url_host_tld"] in f.tlds,
        not f.mimes or r["content_mime_type"] in f.mimes,
        not f.statuses or r["fetch_status"] in f.statuses,
        not f.langs or bool(_langs(r["content_languages"]) & set(f.langs)),
        f.path_prefix is None or r["url_path"].startswith(f.path_prefix),
        not f.not_tlds or r["url_host_tld"] is None or r["url_host_tld"] not in f.not_tlds,
        not f.not_mimes or r["content_mime_type"] is None or r["content_mime_type"] not in f.not_mimes,
        not f.not_statuses or r["fetch_status"] not in f.not_statuses,
        not f.not_langs or r["content_languages"] is None or not (_langs(r["content_languages"]) & set(f.not_langs)),
    ]
    return all(checks)


def answer(rows: list[dict[str, Any]], f: Filters, kind: str) -> Any:
    hit = [r for r in rows if keep(r, f)]
    if kind == "count":
        return [{"count": len(hit)}]
    if kind == "urls":
        return sorted(r["url"] for r in hit)
    if kind == "locations":
        return sorted((r["url"], r["warc_filename"], r["warc_record_offset"], r["warc_record_length"]) for r in hit)
    if kind in ("langs", "mimes"):
        col, name = ("content_languages", "lang") if kind == "langs" else ("content_mime_type", "mime")
        c = Counter(r[col] for r in hit)
        ordered = sorted(c.items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] or ""))
        return [{name: k, "count": n} for k, n in ordered]
    raise ValueError(kind)


def shape(records: list[dict[str, Any]], kind: str) -> Any:
    """Engine output in the oracle's shape (row kinds as sorted multisets)."""
    if kind == "urls":
        return sorted(r["url"] for r in records)
    if kind == "locations":
        return sorted((r["url"], r["warc_filename"], r["warc_record_offset"], r["warc_record_length"]) for r in records)
    return records
