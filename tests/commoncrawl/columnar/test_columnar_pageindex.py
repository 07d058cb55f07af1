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


@pytest.fixture(params=["python", "native"])
def decoders(request: pytest.FixtureRequest) -> dict[str, Callable[..., Any]]:
    """The page-index decoders and the footer slicers, one side of each twin pair."""
    if request.param == "python":
        return {"offset_index": pi.offset_index_py, "column_index": pi.column_index_py, "fields": pi.fields_py,
                "elements": pi.elements_py}
    native = native_or_skip("pqfooter")
    return {name: getattr(native, name) for name in ("offset_index", "column_index", "fields", "elements")}


def test_both_page_index_decoders_agree_on_every_chunk(colroot: Path,
                                                       decoders: dict[str, Callable[..., Any]]) -> None:
    for path in part_paths(colroot):
        data = path.read_bytes()
        full = pi.footer_of(data)
        walked = pi.footer_index(data)
        for rg, row in enumerate(walked.places):
            for col, (oi, ci, at) in enumerate(row):
                assert oi is not None and ci is not None
                o, c = data[oi[0] : sum(oi)], data[ci[0] : sum(ci)]
                assert decoders["offset_index"](o) == pi.offset_index_py(o)
                nulls, mins, maxs = decoders["column_index"](c)
                assert (nulls, mins, maxs) == pi.column_index_py(c)
                meta = pi._get(full.chunk(rg, col).chunk, 3)
                got, end = decoders["fields"](walked.data, at)
                assert [fid for fid, *_ in got] == sorted(meta) and end > at
                assert (got, end) == pi.fields_py(walked.data, at)
        for fid, wtype, pos in walked.top:
            if wtype == pi.LIST and fid in (2, 7):
                etype, spans = decoders["elements"](walked.data, pos)
                assert (etype, spans) == pi.elements_py(walked.data, pos)
                assert len(spans) == len(pi._get(full.meta, fid)[1])


def test_page_index_decoders_raise_on_cut_or_garbled_input(colroot: Path,
                                                           decoders: dict[str, Callable[..., Any]]) -> None:
    data = _biggest(colroot).read_bytes()
    oi, ci, _ = pi.footer_index(data).places[0][0]
    assert oi is not None and ci is not None
    for name, raw in (("offset_index", data[oi[0] : sum(oi)]), ("column_index", data[ci[0] : sum(ci)])):
        for cut in range(0, len(raw), max(1, len(raw) // 60)):
            with pytest.raises((IndexError, ValueError, InputError)):
                decoders[name](raw[:cut])
    with pytest.raises((IndexError, ValueError, InputError)):
        decoders["column_index"](b"\x19\x1c\x15\x00\x00")  # null pages that are structs
    with pytest.raises((IndexError, ValueError, InputError)):
        decoders["offset_index"](b"\x19\x15\x02\x00")  # page locations that are integers
    with pytest.raises(InputError):
        pi.offset_index(data[oi[0] : sum(oi) - 3])
    with pytest.raises(InputError):
        pi.column_index_bounds(data[ci[0] : ci[0] + 5])


def test_one_column_files_from_footer_slices_are_byte_for_byte_the_decoded_ones(colroot: Path) -> None:
    path = _biggest(colroot)
    data = path.read_bytes()
    full, walked = pi.footer_of(data), pi.footer_index(data)
    meta = pq.read_metadata(path)
    runs = 0
    for rg in range(meta.num_row_groups):
        rows = meta.row_group(rg).num_rows
        for col in range(meta.num_columns):
            ci = full.chunk(rg, col)
            assert ci.offset_index is not None
            pages = pi.offset_index(data[ci.offset_index[0] : sum(ci.offset_index)])
            cm = meta.row_group(rg).column(col)
            dict_bytes = data[cm.dictionary_page_offset : pages.offsets[0]] if cm.has_dictionary_page else b""
            template = walked.template(rg, col)
            assert template is not None
            for first in range(len(pages.offsets)):
                last = min(first + 1, len(pages.offsets) - 1)
                body = data[pages.offsets[first] : pages.offsets[last] + pages.sizes[last]]
                want = pi.mini_file(full, ci, pages, first, last, rows, dict_bytes, body)
                assert pi.mini_file_of(template, pages, first, last, rows, dict_bytes, body) == want
                runs += 1
    assert runs > meta.num_columns


def test_key_ranges_from_the_walk_are_pyarrows_statistics(colroot: Path) -> None:
    for path in part_paths(colroot):
        data = path.read_bytes()
        walked = pi.footer_index(data)
        meta = pq.read_metadata(path)
        names = meta.schema.names
        for name in ("url_surtkey", "url", "content_languages", "no_such_column"):
            col = walked.leaf(name)
            assert col == (names.index(name) if name in names else None)
            if col is None:
                continue
            for rg in range(meta.num_row_groups):
                st = meta.row_group(rg).column(col).statistics
                assert walked.string_range(rg, col) == ((st.min, st.max) if st is not None and st.has_min_max else None)


def _decompressor(codec: str) -> Callable[[bytes, int], bytes]:
    if codec == "UNCOMPRESSED":
        return lambda body, size: bytes(body)
    unpack = pa.Codec(codec.lower()).decompress
    return lambda body, size: unpack(body, decompressed_size=size).to_pybytes()  # type: ignore[no-any-return]


def _dictionary_array(got: Any) -> pa.Array:
    offsets, values, size, indexes, valid, nulls, rows = got
    dictionary = pa.StringArray.from_buffers(size, pa.py_buffer(offsets), pa.py_buffer(values))
    codes = pa.Array.from_buffers(pa.int32(), rows, [pa.py_buffer(valid) if valid else None, pa.py_buffer(indexes)],
                                  nulls)
    return pa.DictionaryArray.from_arrays(codes, dictionary)


def _page_runs(path: Path) -> Any:
    """Every dictionary-encoded string chunk of ``path`` and runs of its pages: (column, bytes, max def, rows)."""
    data = path.read_bytes()
    walked = pi.footer_index(data)
    meta = pq.read_metadata(path)
    pf = pq.ParquetFile(path)
    for rg in range(meta.num_row_groups):
        for col in range(meta.num_columns):
            cm = meta.row_group(rg).column(col)
            if cm.physical_type != "BYTE_ARRAY" or not cm.has_dictionary_page:
                continue
            oi = walked.places[rg][col][0]
            assert oi is not None
            pages = pi.offset_index(data[oi[0] : sum(oi)])
            whole = pf.read_row_group(rg, columns=[cm.path_in_schema]).column(0).to_pylist()
            head = data[cm.dictionary_page_offset : pages.offsets[0]]
            for first in range(len(pages.offsets)):
                last = min(first + 1, len(pages.offsets) - 1)
                body = head + data[pages.offsets[first] : pages.offsets[last] + pages.sizes[last]]
                row0 = pages.first_rows[first]
                yield cm, body, meta.schema.column(col).max_definition_level, whole[row0:]


def test_dictionary_pages_decode_to_the_rows_pyarrow_reads(colroot: Path) -> None:
    native = None if accel.extensions_disabled() else native_or_skip("pqfooter")
    runs = 0
    for path in part_paths(colroot):
        for cm, body, max_def, rows in _page_runs(path):
            unpack = _decompressor(cm.compression)
            got = pi.dict_pages_py(body, unpack, max_def)
            assert got is not None
            if native is not None:
                assert native.dict_pages(body, unpack, max_def) == got
            values = _dictionary_array(got).to_pylist()
            assert values == rows[: len(values)] and values
            runs += 1
    assert runs > 100


def test_dictionary_pages_with_nulls_v2_pages_and_other_codecs(tmp_path: Path) -> None:
    native = None if accel.extensions_disabled() else native_or_skip("pqfooter")
    words = [None if i % 7 == 0 else f"w{i % 37}" for i in range(5000)]
    table = pa.table({"s": pa.array(words, pa.string()), "r": pa.array([f"r{i % 5}" for i in range(5000)])})
    schema = pa.schema([pa.field("s", pa.string()), pa.field("r", pa.string(), nullable=False)])
    for version in ("1.0", "2.0"):
        for codec in ("gzip", "snappy", "zstd", "none"):
            path = tmp_path / f"t-{version}-{codec}.parquet"
            pq.write_table(table.cast(schema), path, compression=codec, data_page_version=version, data_page_size=2048,
                           write_page_index=True, use_dictionary=True)
            runs = 0
            for cm, body, max_def, rows in _page_runs(path):
                got = pi.dict_pages_py(body, _decompressor(cm.compression), max_def)
                assert got is not None, (version, codec)
                if native is not None:
                    assert native.dict_pages(body, _decompressor(cm.compression), max_def) == got
                values = _dictionary_array(got).to_pylist()
                assert values == rows[: len(values)], (version, codec, cm.path_in_schema)
                runs += 1
            assert runs > 2


def test_the_dictionary_page_decoder_declines_pages_it_does_not_decode_and_rejects_garbage(tmp_path: Path) -> None:
    decoders = [pi.dict_pages_py] + ([] if accel.extensions_disabled() else [native_or_skip("pqfooter").dict_pages])
    # A dictionary that outgrows its page limit: the writer goes on in PLAIN, which is pyarrow's to read.
    path = tmp_path / "fallback.parquet"
    pq.write_table(pa.table({"s": [f"value-{i:06d}" for i in range(20000)]}), path, dictionary_pagesize_limit=4096,
                   data_page_size=4096, write_page_index=True, compression="gzip")
    meta = pq.read_metadata(path)
    cm = meta.row_group(0).column(0)
    assert "PLAIN" in cm.encodings and cm.has_dictionary_page
    data = path.read_bytes()
    chunk = data[cm.dictionary_page_offset : cm.dictionary_page_offset + cm.total_compressed_size]
    unpack = _decompressor(cm.compression)
    for decode in decoders:
        assert decode(chunk, unpack, 1) is None  # some data pages are PLAIN
        assert decode(chunk, unpack, 2) is None  # not a flat column
        assert decode(chunk[cm.data_page_offset - cm.dictionary_page_offset :], unpack, 1) is None  # no dictionary
    good = next(body for _, body, _, _ in _page_runs(_biggest_with_nulls(tmp_path)))
    for decode in decoders:
        full = decode(good, _decompressor("GZIP"), 1)
        assert full is not None
        for cut in range(1, len(good), max(1, len(good) // 60)):
            try:
                got = decode(good[:cut], _decompressor("GZIP"), 1)
            except (IndexError, ValueError, OSError, InputError):
                continue
            assert got is None or got[6] < full[6]  # cut at a page's end: fewer pages, never rows made up


def _biggest_with_nulls(tmp_path: Path) -> Path:
    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"s": [None if i % 3 == 0 else f"v{i % 11}" for i in range(3000)]}), path,
                   compression="gzip", data_page_size=1024, write_page_index=True)
    return path


@pytest.mark.parametrize("fallback", [False, True])
def test_a_part_reads_dictionary_columns_whole_or_by_pages_either_way(tmp_path: Path, fallback: bool) -> None:
    from ccrawl.commoncrawl.columnar import native
    from ccrawl.commoncrawl.columnar.source import LocalSource

    values = [None if i % 13 == 0 else f"lang-{i if fallback else i % 9:06d}" for i in range(12000)]
    pq.write_table(pa.table({"content_languages": pa.array(values, pa.string())}), tmp_path / "p.parquet",
                   compression="gzip", data_page_size=2048, write_page_index=True,
                   dictionary_pagesize_limit=2048 if fallback else 1 << 20)
    cm = pq.read_metadata(tmp_path / "p.parquet").row_group(0).column(0)
    chunk = (tmp_path / "p.parquet").read_bytes()[cm.dictionary_page_offset :][: cm.total_compressed_size]
    assert (pi.dict_pages_py(chunk, _decompressor("GZIP"), 1) is None) == fallback  # PLAIN pages after the fallback
    src = LocalSource(tmp_path)
    part = native.Part("c", "s", "p.parquet")
    size, tail = src.tail(part.path)
    pfile = native._PartFile(src, part, size, tail, src.footer(part.path))
    pfile.prefetch(pfile.index_ranges(0, ["content_languages"]))
    for spans in (None, [(0, 12000)], [(100, 2100), (5000, 5003), (11990, 12000)]):
        got = pfile.read(0, "content_languages", spans)
        want = values if spans is None else [v for lo, hi in spans for v in values[lo:hi]]
        assert pa.types.is_dictionary(got.type) and got.to_pylist() == want, spans
