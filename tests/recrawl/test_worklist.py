"""The work-list reader: listing, numeric order, one column, seeking by row group, errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.errors import InputError, UsageError
from ccrawl.recrawl.worklist import LocalWorkList, open_worklist, part_sort_key, to_url


def test_parts_are_listed_in_numeric_order_whatever_the_number_width(tmp_path: Path) -> None:
    for name in ("part-10.parquet", "part-00002.parquet", "part-1.parquet"):
        pq.write_table(pa.table({"url": [name]}), tmp_path / name)
    (tmp_path / "README.md").write_text("not a part")
    wl = LocalWorkList(tmp_path, "urls")
    assert [p.name for p in wl.parts()] == ["part-1.parquet", "part-00002.parquet", "part-10.parquet"]
    assert wl.column == "url"
    assert sorted(["b9", "a10", "c2"], key=part_sort_key) == ["c2", "b9", "a10"]


def test_seek_lands_on_the_exact_row_across_row_groups(tmp_path: Path) -> None:
    pq.write_table(pa.table({"url": [f"u{i}" for i in range(50)], "x": list(range(50))}),
                   tmp_path / "part-0.parquet", row_group_size=8)
    wl = LocalWorkList(tmp_path, "url")
    rows = list(wl.iter_rows(0, 21))
    assert rows[0] == (21, "u21") and rows[-1] == (49, "u49") and len(rows) == 29
    assert list(wl.iter_rows(0, 50)) == []


def test_seek_skips_row_groups_without_reading_them(tmp_path: Path) -> None:
    path = tmp_path / "part-0.parquet"
    pq.write_table(pa.table({"url": [f"u{i}" for i in range(40)]}), path, row_group_size=10)
    # corrupt the first row group's data pages: a reader that reads-and-discards would fail
    meta = pq.ParquetFile(path).metadata
    col = meta.row_group(0).column(0)
    start = col.dictionary_page_offset or col.data_page_offset
    data = bytearray(path.read_bytes())
    data[start : start + col.total_compressed_size] = b"\xff" * col.total_compressed_size
    path.write_bytes(bytes(data))
    wl = LocalWorkList(tmp_path, "url")
    assert next(wl.iter_rows(0, 10)) == (10, "u10")
    with pytest.raises(InputError, match="row group 0"):
        list(wl.iter_rows(0, 0))


def test_domain_becomes_home_page_and_url_stays() -> None:
    assert to_url("example.com") == "https://example.com/"
    assert to_url("http://a.test/x") == "http://a.test/x"


def test_empty_release_and_unreadable_part_and_missing_column_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds no work-list files \(\.parquet, \.jsonl, \.csv, \.txt\)"):
        LocalWorkList(tmp_path, "url")
    (tmp_path / "part-0.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="listed but cannot be read"):
        LocalWorkList(tmp_path, "url")
    good = tmp_path / "g"
    good.mkdir()
    pq.write_table(pa.table({"domain": ["a.test"]}), good / "part-0.parquet")
    with pytest.raises(UsageError, match="--column 'url' is not in"):
        LocalWorkList(good, "url")


def test_newest_release_is_found_by_listing(tmp_path: Path) -> None:
    for rel in ("CC-MAIN-2026-05", "CC-MAIN-2026-25"):
        (tmp_path / rel).mkdir()
        pq.write_table(pa.table({"url": [rel]}), tmp_path / rel / "part-0.parquet")
    wl = open_worklist(str(tmp_path), column="url")
    assert list(wl.iter_rows(0)) == [(0, "CC-MAIN-2026-25")]
    assert wl.identity()["source"].endswith("CC-MAIN-2026-25")
    with pytest.raises(UsageError, match="releases there"):
        open_worklist(str(tmp_path), release="CC-MAIN-1999-01", column="url")
    assert open_worklist(str(tmp_path)).column == "url"  # the column defaults to url
    pq.write_table(pa.table({"domain": ["a.test"]}), tmp_path / "CC-MAIN-2026-25" / "part-1.parquet")
    with pytest.raises(UsageError, match="has no 'url' column; its columns are: domain: name the one"):
        open_worklist(str(tmp_path))
