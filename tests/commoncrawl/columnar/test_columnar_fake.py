"""The fake cc-index-table: the published schema, sorted range-partitioned parts, consistent with the CDX."""

from __future__ import annotations

import gzip
import itertools
import json
import uuid
from pathlib import Path

import pyarrow.parquet as pq

from ccrawl.commoncrawl.columnar.schema import COLUMNS, arrow_schema
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.columnar import part_paths


def test_parts_have_the_published_schema_and_page_index(colroot: Path) -> None:
    parts = part_paths(colroot)
    assert {p.parent.name for p in parts} == {"subset=warc", "subset=crawldiagnostics"}
    for path in parts:
        pf = pq.ParquetFile(path)
        assert pf.schema_arrow == arrow_schema()
        assert [f.name for f in pf.schema_arrow] == [c[0] for c in COLUMNS]
        rg = pf.metadata.row_group(0)
        assert all(rg.column(i).has_column_index and rg.column(i).has_offset_index for i in range(rg.num_columns))
        assert all(rg.column(i).statistics is not None for i in range(rg.num_columns))


def test_parts_are_sorted_and_cut_into_disjoint_surt_ranges(colroot: Path) -> None:
    by_dir: dict[Path, list[list[str]]] = {}
    for path in part_paths(colroot):
        keys = pq.read_table(path, columns=["url_surtkey"]).column(0).to_pylist()
        assert keys == sorted(keys)
        by_dir.setdefault(path.parent, []).append(keys)
    multi = [ks for ks in by_dir.values() if len(ks) > 1]
    assert multi, "some subset has several parts"
    for parts in multi:
        for a, b in itertools.pairwise(parts):
            assert a[-1] <= b[0]
    big = max(part_paths(colroot), key=lambda p: pq.ParquetFile(p).metadata.num_rows)
    assert pq.ParquetFile(big).metadata.num_row_groups > 1


def test_every_row_is_a_cdx_capture_with_its_warc_record_id(colcc: FakeCCServer, colroot: Path) -> None:
    import warcio

    caps = {(c["filename"], int(c["offset"])): c for c in colcc.site.captures}
    rows = [r for p in part_paths(colroot) for r in pq.read_table(p).to_pylist()]
    assert len(rows) == len(caps)
    for r in rows[:: max(1, len(rows) // 25)]:
        cap = caps[(r["warc_filename"], r["warc_record_offset"])]
        assert (r["url"], r["url_surtkey"], r["warc_record_length"], r["content_digest"], r["fetch_status"]) == (
            cap["url"], cap["urlkey"], int(cap["length"]), cap["digest"], int(cap["status"]))
        data = (colroot / r["warc_filename"]).read_bytes()
        seg = data[r["warc_record_offset"] : r["warc_record_offset"] + r["warc_record_length"]]
        import io

        rec = next(iter(warcio.ArchiveIterator(io.BytesIO(seg))))
        header = rec.rec_headers.get_header("WARC-Record-ID")
        assert uuid.UUID(header.removeprefix("<urn:uuid:").removesuffix(">")).bytes == r["warc_record_id"]


def test_manifest_lists_every_part(colcc: FakeCCServer, colroot: Path) -> None:
    for crawl in colcc.site.crawls:
        listed = gzip.decompress((colroot / f"crawl-data/{crawl}/cc-index-table.paths.gz").read_bytes()).decode()
        on_disk = sorted(str(p.relative_to(colroot)) for p in part_paths(colroot) if f"crawl={crawl}/" in str(p))
        assert listed.split() == on_disk
    assert json.loads((colroot / ".cc-index-table.json").read_text())["captures"] == len(colcc.site.captures)
