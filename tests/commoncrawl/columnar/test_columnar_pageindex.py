"""The page index reader: the Thrift codec round-trips, and any run of pages decodes to the right rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl import accel
from ccrawl.commoncrawl.columnar import pageindex as pi
from ccrawl.errors import InputError
from ccrawl.testing.fakecc.columnar import part_paths
from tests.conftest import native_or_skip

Walk = Callable[[bytes], Any]


@pytest.fixture(params=["python", "native"])
def walk(request: pytest.FixtureRequest) -> Walk:
    if request.param == "python":
        return pi.walk_py
    return native_or_skip("pqfooter").walk  # type: ignore[no-any-return]


def _footer(data: bytes) -> bytes:
    n = int.from_bytes(data[-8:-4], "little")
    return data[-8 - n : -8]


def _biggest(root: Path) -> Path:
    return max(part_paths(root), key=lambda p: pq.ParquetFile(p).metadata.num_rows)


def test_footer_reencodes_byte_for_byte(colroot: Path) -> None:
    for path in part_paths(colroot)[:6]:
        data = path.read_bytes()
        n = int.from_bytes(data[-8:-4], "little")
        assert pi.encode(pi.footer_of(data).meta) == data[-8 - n : -8]


def test_the_footer_walk_finds_what_the_full_decode_finds(colroot: Path) -> None:
    for path in part_paths(colroot):
        data = path.read_bytes()
        full, walked = pi.footer_of(data), pi.footer_index(data)
        row_groups = pi._get(full.meta, 4)[1]
        assert len(walked.places) == len(row_groups) > 0
        for rg, group in enumerate(row_groups):
            assert len(walked.places[rg]) == len(pi._get(group, 1)[1])
            for col in range(len(walked.places[rg])):
                a, b = full.chunk(rg, col), walked.chunk(rg, col)
                assert a.offset_index is not None and a.column_index is not None
                assert walked.locations(rg, col) == (a.offset_index, a.column_index) == (b.offset_index, b.column_index)
                assert b.chunk[3] == a.chunk[3] and b.schema_element == a.schema_element
                assert b.column_order == a.column_order
        assert {k: v for k, v in full.meta.items() if k not in (4, 5)} == walked.meta


def test_both_walks_agree_on_every_part(colroot: Path, walk: Walk) -> None:
    for path in part_paths(colroot):
        footer = _footer(path.read_bytes())
        places, top = walk(footer)
        assert (places, top) == pi.walk_py(footer)
        assert sorted(fid for fid, _, _ in top) == [1, 2, 3, 6, 7] and places and all(places)


def test_a_walk_over_cut_or_garbled_footers_raises_and_never_reads_past_the_end(colroot: Path, walk: Walk) -> None:
    footer = _footer(part_paths(colroot)[0].read_bytes())
    for cut in range(0, len(footer), max(1, len(footer) // 200)):
        with pytest.raises((IndexError, ValueError, InputError)):
            walk(footer[:cut])
    with pytest.raises((IndexError, ValueError, InputError)):
        walk(b"\x49\x1c\x18\xff\xff\xff\x0f")  # a string whose length runs far past the end
    with pytest.raises((IndexError, ValueError, InputError)):
        walk(b"\x4d\x00")  # wire type 13 does not exist
    for cut in range(1, len(footer), max(1, len(footer) // 50)):
        with pytest.raises(InputError):
            pi.footer_index(footer[:cut] + cut.to_bytes(4, "little") + b"PAR1")


def test_the_module_uses_the_compiled_walk_when_built() -> None:
    if accel.extensions_disabled():
        assert pi.walk is pi.walk_py
    else:
        assert pi.walk is native_or_skip("pqfooter").walk


def test_every_page_run_of_every_column_decodes_alone(colroot: Path) -> None:
    path = _biggest(colroot)
    data = path.read_bytes()
    footer = pi.footer_of(data)
    pf = pq.ParquetFile(path)
    names = pf.schema_arrow.names
    multi_page = 0
    for rg in range(pf.metadata.num_row_groups):
        rows = pf.metadata.row_group(rg).num_rows
        for col, name in enumerate(names):
            ci = footer.chunk(rg, col)
            assert ci.offset_index is not None and ci.column_index is not None
            off, length = ci.offset_index
            pages = pi.offset_index(data[off : off + length])
            multi_page += len(pages.offsets) > 1
            cm = pf.metadata.row_group(rg).column(col)
            dict_bytes = data[cm.dictionary_page_offset : pages.offsets[0]] if cm.has_dictionary_page else b""
            whole = pf.read_row_group(rg, columns=[name]).column(0).to_pylist()
            for first in range(len(pages.offsets)):
                for last in range(first, min(len(pages.offsets), first + 3)):
                    body = data[pages.offsets[first] : pages.offsets[last] + pages.sizes[last]]
                    mini, row0 = pi.mini_file(footer, ci, pages, first, last, rows, dict_bytes, body)
                    got = pq.ParquetFile(pa.BufferReader(mini)).read_row_group(0).column(0).to_pylist()
                    assert got == whole[row0 : row0 + len(got)] and got
    assert multi_page > 0


def test_surtkey_page_bounds_cover_their_rows(colroot: Path) -> None:
    path = _biggest(colroot)
    data = path.read_bytes()
    footer = pi.footer_of(data)
    pf = pq.ParquetFile(path)
    ci = footer.chunk(0, 0)
    assert ci.column_index is not None and ci.offset_index is not None
    bounds = pi.column_index_bounds(data[ci.column_index[0] : sum(ci.column_index)])
    pages = pi.offset_index(data[ci.offset_index[0] : sum(ci.offset_index)])
    keys = pf.read_row_group(0, columns=["url_surtkey"]).column(0).to_pylist()
    ends = [*pages.first_rows[1:], len(keys)]
    for b, lo, hi in zip(bounds, pages.first_rows, ends, strict=True):
        assert b is not None and b[0].decode() == min(keys[lo:hi]) and b[1].decode() == max(keys[lo:hi])


def test_broken_footers_are_input_errors() -> None:
    with pytest.raises(InputError):
        pi.footer_of(b"not parquet at all")
    with pytest.raises(InputError):
        pi.footer_of(b"\x15\x00" + (1000).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(InputError):
        pi.footer_index(b"\x15\x00" + (1000).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(InputError):
        pi.footer_index(b"\x49\x1c\x15" + (3).to_bytes(4, "little") + b"PAR1")  # row groups cut short
    with pytest.raises(InputError):
        pi.decode(b"\x19\xfc")  # a list that says it has many elements, then ends
