"""A work-list column stored as binary (not UTF-8-annotated) is decoded as UTF-8, or refused naming
the part and row; a column of another type is refused up front (issue #13, item 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.errors import InputError, UsageError
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.worklist import LocalWorkList
from ccrawl.testing.synthweb import SynthWeb


def _write(path: Path, column: pa.Array) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"url": column}), path / "part-0.parquet")
    return path


def test_binary_column_is_decoded_as_utf8(tmp_path: Path) -> None:
    values = [b"http://a.test/", None, "http://b.test/\u00e9".encode(), b"example.com"]
    wl = LocalWorkList(_write(tmp_path / "wl", pa.array(values, pa.binary())), "url")
    assert list(wl.iter_rows(0)) == [(0, "http://a.test/"), (1, None), (2, "http://b.test/\u00e9"),
                                     (3, "example.com")]


def test_binary_cell_that_is_not_utf8_is_refused_with_part_and_row(tmp_path: Path) -> None:
    wl = LocalWorkList(_write(tmp_path / "wl", pa.array([b"http://a.test/", b"http://\xff\xfe/"], pa.binary())), "url")
    with pytest.raises(InputError, match=r"part-0.parquet row 1.*not UTF-8"):
        list(wl.iter_rows(0))


@pytest.mark.parametrize("column", [pa.array([1, 2], pa.int64()), pa.array([[b"x"], [b"y"]])])
def test_column_of_another_type_is_refused(tmp_path: Path, column: pa.Array) -> None:
    with pytest.raises(UsageError, match=r"--column 'url'.*text"):
        LocalWorkList(_write(tmp_path / "wl", column), "url")


def test_run_over_a_binary_column_fetches_the_real_urls(
    web: SynthWeb, tmp_path: Path, read_captures: Any
) -> None:
    urls = web.page_urls()[:4]
    wl = _write(tmp_path / "wl", pa.array([u.encode() for u in urls], pa.large_binary()))
    s = run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), delay=0, workers=4, resolve=web.resolve,
                    no_extract=True)
    assert s.done and s.failed == 0
    assert sorted(read_captures(tmp_path / "out").column("url").to_pylist()) == sorted(urls)
