"""The CDXJ indexer writes what Common Crawl's index holds for the same WARC records."""

from __future__ import annotations

import json
from pathlib import Path

from ccrawl.testing.fakecc.site import SiteSpec, build_site
from ccrawl.warc.cdxj import index_file, index_files, to_line

FIELDS = ("urlkey", "timestamp", "url", "mime", "status", "digest", "length", "offset", "filename", "languages")


def test_index_matches_the_fake_buckets_own_index(tmp_path: Path) -> None:
    site = build_site(tmp_path, SiteSpec(records=20, files=2, older_records=2, older_files=1))
    files = sorted({c["filename"] for c in site.captures})
    rows = index_files((tmp_path / f, f) for f in files)
    want = sorted(site.captures, key=lambda r: (r["urlkey"], r["timestamp"], r["filename"], int(r["offset"])))
    assert [tuple(r.get(k) for k in FIELDS) for r in rows] == [tuple(r.get(k) for k in FIELDS) for r in want]


def test_only_responses_and_revisits_are_indexed_with_their_locations(corpus_dir: Path) -> None:
    rows = list(index_file(corpus_dir / "warc" / "example.warc.gz", "example.warc.gz"))
    assert [(r["mime"], r["offset"], r["length"]) for r in rows] == [("text/html", "784", "1228"),
                                                                      ("warc/revisit", "2621", "586")]
    first = rows[0]
    assert first["urlkey"] == "com,example)/" and first["timestamp"] == "20170306040206"
    assert first["status"] == "200" and "encoding" not in first and len(first["digest"]) == 32  # no charset sent


def test_a_line_is_urlkey_timestamp_and_the_json(corpus_dir: Path) -> None:
    row = next(iter(index_file(corpus_dir / "warc" / "example.warc.gz", "x.warc.gz")))
    key, ts, obj = to_line(row).split(" ", 2)
    assert (key, ts) == (row["urlkey"], row["timestamp"]) and json.loads(obj) == row
