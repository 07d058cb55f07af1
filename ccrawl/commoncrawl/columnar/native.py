"""The native engine: pyarrow over ranged reads, pruning parts and row groups before reading a column.

For each part (up to ``2 x jobs`` in flight, their reads on the wire together: :class:`_Scan`;
answers in part order), :func:`part_steps`:

1. the tail (footer) is read: one request, cached; for a key filter a walk of the footer gives each
   row group's ``url_surtkey`` range, and a part none of whose row groups can match stops there;
2. every row group is tested against the statistics in the footer: the ``url_surtkey`` min..max
   against the host/domain/TLD prefixes (the parts are sorted by it, so this is what makes a
   ``--domain`` query touch one or two row groups), and min/max/null counts against the other
   filters; a part none of whose row groups survive costs its footer and nothing else;
3. in a surviving row group the page index of ``url_surtkey`` says which pages can hold a prefix,
   and the predicate and output columns' pages for those rows come in one round trip (small chunks
   whole instead, when the page index would cost a round trip of its own);
4. the predicate columns are decoded one at a time, cheapest (smallest compressed chunk) first, each
   narrowing the mask; a row group whose mask empties stops there; the output columns of whole row
   groups are read last, only for row groups with matching rows.

Low-cardinality string columns are read as dictionaries (decoded by the compiled page decoder where
it can) and a predicate is evaluated once per distinct value, then spread over the rows by index.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ccrawl.commoncrawl.columnar.filters import Filters, range_may_match
from ccrawl.commoncrawl.columnar.source import Job, LocalSource, RangeSource, footer_length
from ccrawl.errors import InputError
from ccrawl.net.rangefile import RangeFile, cached

if TYPE_CHECKING:
    from typing import TypeAlias

    from pyarrow import Array, ChunkedArray, DictionaryArray, Table
    from pyarrow._parquet import ParquetReader
    from pyarrow.parquet import ParquetFile, Statistics

    from ccrawl.commoncrawl.columnar.pageindex import FooterIndex, Pages

    Column: TypeAlias = "Array | ChunkedArray"  # one column's values, read whole or in pieces

DICTIONARY_COLUMNS = (
    "url_host_name",
    "url_host_registered_domain",
    "url_host_tld",
    "content_mime_type",
    "content_languages",
)


@dataclass(slots=True, frozen=True)
class Part:
    """One index part: its crawl and subset (from the path) and its path in the bucket."""

    crawl: str
    subset: str
    path: str


@dataclass(slots=True)
class ScanStats:
    """What a scan touched, for ``--explain``."""

    parts: int = 0
    parts_skipped: int = 0
    row_groups: int = 0
    row_groups_skipped: int = 0
    row_groups_read: int = 0
    pages: int = 0
    pages_skipped: int = 0
    rows_matched: int = 0
    index_bytes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def merge(self, other: ScanStats) -> None:
        with self._lock:
            self.parts += other.parts
            self.parts_skipped += other.parts_skipped
            self.row_groups += other.row_groups
            self.row_groups_skipped += other.row_groups_skipped
            self.row_groups_read += other.row_groups_read
            self.pages += other.pages
            self.pages_skipped += other.pages_skipped
            self.rows_matched += other.rows_matched
            self.index_bytes += other.index_bytes


@dataclass(slots=True)
class PartAnswer:
    """What one part contributed: matching rows (projected), a count, or group counts."""

    tables: list[Table] = field(default_factory=list)
    count: int = 0
    groups: Counter[Any] = field(default_factory=Counter)
    stats: ScanStats = field(default_factory=ScanStats)


@dataclass(slots=True)
class _Predicate:
    column: str
    prune: Callable[[Statistics | None], bool]  # statistics -> may match
    mask: Callable[[Column], ChunkedArray]  # column array -> boolean array (no nulls)


def _stats_range(st: Statistics | None) -> tuple[Any, Any] | None:
    if st is None or not st.has_min_max:
        return None
    return st.min, st.max


def _in_prune(values: Sequence[Any]) -> Callable[[Statistics | None], bool]:
    import bisect

    ordered = sorted(values)

    def prune(st: Statistics | None) -> bool:
        r = _stats_range(st)
        if r is None:
            return True
        lo, hi = r
        return bisect.bisect_left(ordered, lo) < bisect.bisect_right(ordered, hi)

    return prune


def _not_in_prune(values: Sequence[Any]) -> Callable[[Statistics | None], bool]:
    excluded = set(values)

    def prune(st: Statistics | None) -> bool:
        r = _stats_range(st)
        if r is None or st is None or st.null_count is None or st.null_count > 0:
            return True
        lo, hi = r
        return not (lo == hi and lo in excluded)

    return prune


def _always(st: Statistics | None) -> bool:
    return True


def _dict_mask(test: Callable[[str | None], bool]) -> Callable[[Column], ChunkedArray]:
    """A mask evaluated once per dictionary value (``None`` is a missing value) and spread by index."""
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels as pc

    def mask(arr: Column) -> ChunkedArray:
        out = []
        for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
            if pa.types.is_dictionary(chunk.type):
                values = chunk.dictionary.to_pylist()
                table = pa.array([test(v) for v in values], pa.bool_())
                picked = pc.take(table, chunk.indices)
                out.append(pc.fill_null(picked, test(None)) if chunk.null_count else picked)
            else:
                out.append(pa.array([test(v) for v in chunk.to_pylist()], pa.bool_()))
        return pa.chunked_array(out, pa.bool_())

    return mask


def _member_mask(values: Sequence[str], negate: bool = False) -> Callable[[Column], ChunkedArray]:
    """``column in values`` (missing: no), or with ``negate`` ``column not in values`` (missing: yes), in Arrow.

    On a dictionary chunk the test runs over the distinct values and is spread by index, like
    :func:`_dict_mask`, but without a Python call per distinct value (a host column has thousands).
    """
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels as pc

    value_set = pa.array(sorted(set(values)), pa.string())
    one = value_set[0] if len(value_set) == 1 else None

    def mask(arr: Column) -> ChunkedArray:
        out = []
        for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
            if pa.types.is_dictionary(chunk.type):
                hit = pc.equal(chunk.dictionary, one) if one is not None else \
                    pc.is_in(chunk.dictionary, value_set=value_set)
                # Which dictionary entries match: mostly none or one (a domain, a host), so the rows'
                # test is a comparison of their indexes with it rather than a take of the whole table.
                where = pc.indices_nonzero(pc.fill_null(hit, False))
                if len(where) == 0:
                    picked = pa.repeat(pa.scalar(negate), len(chunk))
                else:
                    codes = pc.cast(where, chunk.indices.type)
                    picked = pc.equal(chunk.indices, codes[0]) if len(codes) == 1 else \
                        pc.is_in(chunk.indices, value_set=codes)
                    if negate:
                        picked = pc.invert(picked)
                out.append(pc.fill_null(picked, negate) if chunk.null_count else picked)
            else:
                hit = pc.is_in(chunk, value_set=value_set)  # a missing value is never in the set
                out.append(pc.or_(pc.invert(hit), pc.is_null(chunk)) if negate else hit)
        return pa.chunked_array(out, pa.bool_())

    return mask


def _langs_in(langs: Sequence[str]) -> Callable[[str | None], bool]:
    wanted = set(langs)
    return lambda v: v is not None and not wanted.isdisjoint(v.split(","))


def predicates(f: Filters) -> list[_Predicate]:
    """The row-level tests of ``f``, each with its statistics test."""
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels as pc

    out: list[_Predicate] = []

    if f.domains:
        out.append(_Predicate("url_host_registered_domain", _in_prune(f.domains), _member_mask(f.domains)))
    if f.hosts:
        out.append(_Predicate("url_host_name", _in_prune(f.hosts), _member_mask(f.hosts)))
    if f.tlds:
        out.append(_Predicate("url_host_tld", _in_prune(f.tlds), _member_mask(f.tlds)))
    if f.mimes:
        out.append(_Predicate("content_mime_type", _in_prune(f.mimes), _member_mask(f.mimes)))
    if f.langs:
        out.append(_Predicate("content_languages", _always, _dict_mask(_langs_in(f.langs))))
    if f.statuses:
        wanted = pa.array(f.statuses, pa.int16())
        out.append(_Predicate("fetch_status", _in_prune(f.statuses),
                              lambda a: pc.fill_null(pc.is_in(a, value_set=wanted), False)))
    if f.path_prefix is not None:
        prefix = f.path_prefix
        out.append(_Predicate("url_path", _always, lambda a: pc.fill_null(pc.starts_with(a, prefix), False)))
    if f.not_tlds:
        out.append(_Predicate("url_host_tld", _not_in_prune(f.not_tlds), _member_mask(f.not_tlds, True)))
    if f.not_mimes:
        out.append(_Predicate("content_mime_type", _not_in_prune(f.not_mimes),
                              _member_mask(f.not_mimes, True)))
    if f.not_langs:
        langs = _langs_in(f.not_langs)
        out.append(_Predicate("content_languages", _always, _dict_mask(lambda v: v is None or not langs(v))))
    if f.not_statuses:
        excluded = pa.array(f.not_statuses, pa.int16())
        out.append(_Predicate("fetch_status", _not_in_prune(f.not_statuses),
                              lambda a: pc.fill_null(pc.invert(pc.is_in(a, value_set=excluded)), True)))
    return out


# What each kind reads for its answer once the rows are known.
_OUTPUT: dict[str, tuple[str, ...]] = {
    "count": (),
    "urls": ("url",),
    "locations": ("url", "warc_filename", "warc_record_offset", "warc_record_length"),
    "langs": ("content_languages",),
    "mimes": ("content_mime_type",),
    "hostcdx": ("url_host_name", "url", "fetch_status"),
    "diff": ("url", "url_host_name", "content_digest"),
}


#: Ranges of one part closer than this are fetched as one: a request costs more than these bytes
#: (a round trip to S3 is worth about a megabyte; on loopback, the client's per-request work).
COALESCE_GAP = 32 << 10


class _PartFile:
    """One part opened for reading: pyarrow's view of the footer, our decoded footer, page indexes."""

    def __init__(self, source: RangeSource, part: Part, size: int, tail: bytes, footer: bytes,
                 walked: FooterIndex | None = None) -> None:
        from ccrawl.commoncrawl.columnar import pageindex

        self.source = source
        self.path = part.path
        self.blocks: dict[int, bytes] = {}
        # The tail stays with the part while it is read, whatever the source's memory bound drops.
        self.size, self.tail = size, tail
        self.tail_start = size - len(tail)
        # pyarrow would read a speculative 64 KiB from the end; hand it the footer we already have.
        try:
            self.meta = _open_buffer(b"PAR1" + footer).metadata
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid/ArrowIOError
            raise InputError(f"{part.path}: corrupt Parquet footer ({str(exc).splitlines()[0]})") from exc
        self._footer_bytes = footer
        self.names: list[str] = self.meta.schema.names
        self.index = {n: i for i, n in enumerate(self.names)}
        self._pf: ParquetFile | None = None
        self._footer: FooterIndex | None = walked
        self._pages: dict[tuple[int, int], Pages | None] = {}
        self._dicts: dict[tuple[int, int], bytes] = {}
        self._pi = pageindex

    def close(self) -> None:
        """Close pyarrow's reader of the part (when one was made) and drop the bytes it read from.

        The reader reads Python ``bytes`` (a :class:`RangeFile`): left to the collector it may be freed
        late, and a Python-owned buffer released by Arrow after the interpreter finalised aborts the
        process (docs/columnar.md, "Arrow readers over Python bytes").
        """
        pf, self._pf = self._pf, None
        if pf is not None:
            pf.close(force=True)  # force: pyarrow closes only a source it opened itself otherwise
        self.blocks.clear()

    @property
    def pf(self) -> ParquetFile:
        """pyarrow's reader of the whole part, made only when a row group is read whole (most parts never are)."""
        if self._pf is None:
            import pyarrow.parquet as pq

            fh = RangeFile(self.get, self.size, name=self.path, blocks=self.blocks, tail=self.tail)
            self._pf = pq.ParquetFile(fh, metadata=self.meta, pre_buffer=False,
                                      read_dictionary=[c for c in DICTIONARY_COLUMNS if c in self.index])
        return self._pf

    def get(self, start: int, length: int) -> bytes:
        if start + length > self.tail_start:
            if start >= self.tail_start:
                return self.tail[start - self.tail_start : start - self.tail_start + length]
            return self.get(start, self.tail_start - start) + self.tail[: start + length - self.tail_start]
        data = cached(self.blocks, start, length)
        return data if data is not None else self.source.read(self.path, start, length)

    def wants(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Of ``ranges``, the bytes neither fetched nor in the tail, merged where closer than COALESCE_GAP."""
        tail_start = self.tail_start
        missing = sorted((r[0], min(r[1], tail_start - r[0])) for r in ranges
                         if r[1] > 0 and r[0] < tail_start and cached(self.blocks, r[0], min(r[1], tail_start - r[0]))
                         is None)
        merged: list[tuple[int, int]] = []
        for start, length in missing:
            if merged and start <= merged[-1][0] + merged[-1][1] + COALESCE_GAP:
                s0, n0 = merged[-1]
                merged[-1] = (s0, max(s0 + n0, start + length) - s0)
            else:
                merged.append((start, length))
        return merged

    def fill(self, ranges: list[tuple[int, int]], data: list[bytes]) -> None:
        for (start, _), got in zip(ranges, data, strict=True):
            # A block that runs up to the tail carries it on, so a read across the boundary is one block.
            self.blocks[start] = got + self.tail if start + len(got) == self.tail_start else got

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        """Fetch ``ranges`` (merged where they touch) at once; later reads inside them cost nothing."""
        merged = self.wants(ranges)
        if merged:
            self.fill(merged, self.source.read_many(self.path, merged))

    def index_ranges(self, rg: int, columns: Sequence[str]) -> list[tuple[int, int]]:
        """Where the OffsetIndex of each of ``columns`` is (those not read yet)."""
        out = []
        for c in columns:
            col = self.index[c]
            if (rg, col) in self._pages:
                continue
            oi, _ = self.footer().locations(rg, col)
            if oi is not None:
                out.append(oi)
        return out

    def column_ranges(self, rg: int, column: str, spans: list[tuple[int, int]] | None) -> list[tuple[int, int]]:
        """The byte ranges reading ``column`` of ``rg`` takes: the chunk, or its dictionary and the spans' pages."""
        col = self.index[column]
        cm = self.meta.row_group(rg).column(col)
        pages = self.pages(rg, col) if spans is not None else None
        if spans is None or pages is None:
            start = cm.dictionary_page_offset if cm.has_dictionary_page and cm.dictionary_page_offset else \
                cm.data_page_offset
            return [(start, cm.total_compressed_size)]
        out = []
        if cm.has_dictionary_page and cm.dictionary_page_offset is not None:
            out.append((cm.dictionary_page_offset, pages.offsets[0] - cm.dictionary_page_offset))
        for lo, hi in spans:
            first, last = self._pi.page_range(pages, lo, hi)
            out.append((pages.offsets[first], pages.offsets[last] + pages.sizes[last] - pages.offsets[first]))
        return out

    def footer(self) -> FooterIndex:
        if self._footer is None:
            self._footer = self._pi.footer_index(self._footer_bytes)
        return self._footer

    def pages(self, rg: int, col: int) -> Pages | None:
        """The OffsetIndex of a chunk, or None when the file has no page index."""
        key = (rg, col)
        if key not in self._pages:
            oi, _ = self.footer().locations(rg, col)
            pages = None
            if oi is not None:
                off, length = oi
                pages = self._pi.offset_index(self.get(off, length))
            self._pages[key] = pages
        return self._pages[key]

    def surt_index_ranges(self, rg: int, also: Sequence[str] = ()) -> list[tuple[int, int]]:
        """What :meth:`surt_spans` reads: the url_surtkey ColumnIndex and OffsetIndex, and the ``also``
        columns' OffsetIndexes (read in the same round trip); nothing when the key has no page index."""
        oi, column_index = self.footer().locations(rg, self.index["url_surtkey"])
        if column_index is None or oi is None:
            return []
        return [column_index, *self.index_ranges(rg, ["url_surtkey", *also])]

    def surt_spans(
        self, rg: int, prefixes: Sequence[str], also: Sequence[str] = ()
    ) -> tuple[list[tuple[int, int]], int, int] | None:
        """Row spans of the url_surtkey pages that may hold a prefix, the pages kept and the pages there are.

        The page indexes of the ``also`` columns are fetched in the same round trip.
        """
        col = self.index["url_surtkey"]
        oi, column_index = self.footer().locations(rg, col)
        if column_index is None or oi is None:
            return None
        self.prefetch(self.surt_index_ranges(rg, also))
        pages = self.pages(rg, col)
        if pages is None:
            return None
        off, length = column_index
        bounds = self._pi.column_index_bounds(self.get(off, length))
        rows = self.meta.row_group(rg).num_rows
        spans = self._pi.matching_spans(bounds, pages.first_rows, rows,
                                        lambda lo, hi: range_may_match(prefixes, lo, hi))
        kept = sum(1 for i in range(len(pages.first_rows)) if any(
            lo <= pages.first_rows[i] < hi for lo, hi in spans))
        return spans, kept, len(pages.first_rows)

    def read(self, rg: int, column: str, spans: list[tuple[int, int]] | None) -> Column:
        """Column ``column`` of row group ``rg``: whole, or only the rows of ``spans`` (pages fetched alone)."""
        import pyarrow as pa

        col = self.index[column]
        pages = self.pages(rg, col) if spans is not None else None
        if spans is None:
            cm = self.meta.row_group(rg).column(col)
            if cm.has_dictionary_page and cm.dictionary_page_offset:
                start, size = self.column_ranges(rg, column, None)[0]
                got = self._dictionary(rg, col, column, self.get(start, size), 0)
                if got is not None:
                    return pa.chunked_array([got])
        if spans is None or pages is None:
            # use_threads=False: no Arrow worker thread ever holds a buffer of this Python-backed file
            whole = self.pf.read_row_group(rg, columns=[column], use_threads=False).column(0)
            if spans is None:
                return whole
            return pa.concat_arrays([whole.slice(lo, hi - lo).combine_chunks() for lo, hi in spans]) \
                if len(spans) > 1 else whole.slice(spans[0][0], spans[0][1] - spans[0][0])
        cm = self.meta.row_group(rg).column(col)
        rows = self.meta.row_group(rg).num_rows
        self.prefetch(self.column_ranges(rg, column, spans))
        if (rg, col) not in self._dicts:
            self._dicts[(rg, col)] = (
                self.get(cm.dictionary_page_offset, pages.offsets[0] - cm.dictionary_page_offset)
                if cm.has_dictionary_page and cm.dictionary_page_offset is not None else b""
            )
        dict_bytes = self._dicts[(rg, col)]
        footer = self.footer()
        template = footer.template(rg, col)
        chunks = []
        for lo, hi in spans:
            first, last = self._pi.page_range(pages, lo, hi)
            start = pages.offsets[first]
            data = self.get(start, pages.offsets[last] + pages.sizes[last] - start)
            got = self._dictionary(rg, col, column, dict_bytes + data, pages.first_rows[first]) if dict_bytes else None
            if got is not None:
                row0 = pages.first_rows[first]
                chunks.append(got.slice(lo - row0, hi - lo))
                continue
            if template is not None:
                mini, row0 = self._pi.mini_file_of(template, pages, first, last, rows, dict_bytes, data)
            else:
                mini, row0 = self._pi.mini_file(footer, footer.chunk(rg, col), pages, first, last, rows, dict_bytes,
                                                data)
            reader = _open_buffer(mini, dictionary=column in DICTIONARY_COLUMNS)
            arr = reader.read_row_group(0, column_indices=[0], use_threads=False).column(0)
            chunks.extend(arr.slice(lo - row0, hi - lo).chunks)
        return pa.chunked_array(chunks, chunks[0].type) if chunks else pa.chunked_array([], pa.null())

    def _dictionary(self, rg: int, col: int, column: str, data: bytes, row0: int) -> DictionaryArray | None:
        """The rows of a run of a dictionary column's pages (``data``: its dictionary page, then the data pages)
        decoded by the compiled page decoder, as a dictionary array; None when it does not cover them (not
        built, another codec, a data page the writer fell back to PLAIN for...), and pyarrow does it."""
        import pyarrow as pa

        decode = self._pi.dict_pages
        if decode is None or column not in DICTIONARY_COLUMNS:
            return None
        cm = self.meta.row_group(rg).column(col)
        decompress = _decompressor(cm.compression)
        leaf = self.meta.schema.column(col)
        if decompress is None or cm.physical_type != "BYTE_ARRAY" or leaf.max_repetition_level:
            return None
        try:
            got = decode(data, decompress, leaf.max_definition_level)
        except (IndexError, ValueError, OSError) as exc:
            raise InputError(f"{self.path}: corrupt pages of {column} in row group {rg} from row {row0} ({exc})") \
                from None
        if got is None:
            return None
        offsets, values, size, indexes, valid, nulls, rows = got
        dictionary = pa.StringArray.from_buffers(size, pa.py_buffer(offsets), pa.py_buffer(values))
        codes = pa.Array.from_buffers(pa.int32(), rows, [pa.py_buffer(valid) if valid else None,
                                                         pa.py_buffer(indexes)], nulls)
        return pa.DictionaryArray.from_arrays(codes, dictionary, safe=False)  # the decoder checked the indexes


_CODECS = {"UNCOMPRESSED": "", "SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli", "ZSTD": "zstd",
           "LZ4_RAW": "lz4_raw"}
_decompressors = threading.local()  # per thread: an Arrow codec object keeps stream state, not thread-safe


def _decompressor(codec: str) -> Callable[[bytes, int], bytes] | None:
    """``(body, uncompressed size) -> bytes`` for a Parquet codec name, pyarrow's own; None for one it lacks.

    One per thread: Arrow's GZip codec inflates through a z_stream held in the codec object, so two
    threads sharing one corrupt each other's pages ("invalid code lengths set", seen in the tests).
    """
    made: dict[str, Callable[[bytes, int], bytes] | None] | None = getattr(_decompressors, "made", None)
    if made is None:
        made = _decompressors.made = {}
    if codec not in made:
        import pyarrow as pa

        name = _CODECS.get(codec)
        fn: Any = None
        if name == "":
            def fn(body: bytes, size: int) -> bytes:
                return bytes(body)
        elif name is not None and pa.Codec.is_available(name):
            unpack = pa.Codec(name).decompress

            def fn(body: bytes, size: int) -> bytes:
                return unpack(body, decompressed_size=size).to_pybytes()  # type: ignore[no-any-return]

        made[codec] = fn
    return made[codec]


def _open_buffer(data: bytes, *, dictionary: bool = False) -> ParquetReader:
    """pyarrow's reader of a Parquet file held in memory (a footer alone, or a one-column file), without
    the Python ``ParquetFile`` around it (a quarter of the cost of opening a small file); ``dictionary``
    reads its one column as a dictionary array."""
    import pyarrow as pa

    try:
        from pyarrow._parquet import ParquetReader
    except ImportError:  # pragma: no cover - pyarrow moved it; the public reader does the same
        import pyarrow.parquet as pq

        return pq.ParquetFile(pa.BufferReader(data), read_dictionary=[0] if dictionary else None,
                              pre_buffer=False).reader
    reader = ParquetReader()
    reader.open(pa.BufferReader(data), read_dictionary=[0] if dictionary else None, pre_buffer=False)
    return reader


#: Past this many separate spans in a row group, one covering span is read instead.
MAX_SPANS = 8


@dataclass(slots=True, frozen=True)
class Plan:
    """What a scan tests, worked out once for all its parts: the row predicates and the key prefixes."""

    predicates: list[_Predicate]
    prefixes: list[str] | None


def plan(f: Filters) -> Plan:
    return Plan(predicates(f), f.surt_prefixes())


Steps = Generator[list[tuple[int, int]], list[bytes], "PartAnswer"]
"""A part's scan as a generator: each value it yields is byte ranges it needs (merged, before the part's
tail, none of them held yet), and it is sent their bytes; its return value is the part's answer."""


def part_steps(
    source: RangeSource, part: Part, tail: tuple[int, bytes], f: Filters, kind: str, *, limit: int | None = None,
    planned: Plan | None = None,
) -> Steps:
    """Answer ``kind`` over one part from its ``(size, tail)`` on, reading only what the footer and the page
    index cannot rule out, as steps: the reads it needs are yielded (and their bytes sent back), so a
    driver can have many parts' reads on the wire at once (:class:`_Scan`)."""
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels as pc

    size, data = tail
    length = footer_length(part.path, size, data)
    footer = data[len(data) - length - 8 :]
    if length + 8 > len(data):  # a footer longer than the tail: the rest of it, one read
        footer = (yield [(size - length - 8, length + 8 - len(data))])[0] + data
    answer = PartAnswer()
    st = answer.stats
    st.parts = 1
    st.index_bytes = size
    planned = planned or plan(f)
    walked = None
    if planned.prefixes is not None:
        # The key's range in each row group, from the footer walk: a part the filter rules out costs its
        # tail and this, not pyarrow's decoding of its whole footer.
        from ccrawl.commoncrawl.columnar import pageindex

        walked = pageindex.footer_index(footer)
        key = walked.leaf("url_surtkey")
        ranges = [walked.string_range(rg, key) for rg in range(len(walked.places))] if key is not None else [None]
        if all(r is not None and not range_may_match(planned.prefixes, r[0], r[1]) for r in ranges):
            st.row_groups = st.row_groups_skipped = len(walked.places)
            st.parts_skipped = 1
            return answer
    pfile = _PartFile(source, part, size, data, footer, walked)
    try:
        meta = pfile.meta
        names = pfile.names
        index = pfile.index
        preds = planned.predicates
        prefixes = planned.prefixes
        columns = list(names) if kind == "rows" else list(_OUTPUT[kind])
        needed = [*(["url_surtkey"] if prefixes is not None else []), *(p.column for p in preds), *columns]
        missing = sorted({c for c in needed if c not in index})
        if missing:
            where = source.path(part.path) if isinstance(source, LocalSource) else part.path
            raise InputError(f"{where}: no {', '.join(missing)} column{'s' * (len(missing) > 1)}: "
                             "not a cc-index table part")
        st.row_groups = meta.num_row_groups
        for rg in range(meta.num_row_groups):
            rgm = meta.row_group(rg)
            spans: list[tuple[int, int]] | None = None
            if prefixes is not None:
                r = _stats_range(rgm.column(index["url_surtkey"]).statistics)
                if r is not None and not range_may_match(prefixes, r[0], r[1]):
                    st.row_groups_skipped += 1
                    continue
            if not all(p.prune(rgm.column(index[p.column]).statistics) for p in preds):
                st.row_groups_skipped += 1
                continue
            wanted = [*{p.column: 0 for p in preds}, *columns]
            small = False
            if prefixes is not None:
                need = pfile.wants(pfile.surt_index_ranges(rg, also=wanted))
                # The page index is not in memory and every chunk this row group needs is smaller than what
                # a round trip is worth: reading those chunks whole costs less than asking the page index
                # which of their pages to read (on Common Crawl's parts, chunks of megabytes, it never is).
                small = bool(need) and all(rgm.column(index[c]).total_compressed_size <= COALESCE_GAP for c in wanted)
            if prefixes is not None and not small:
                if need:
                    pfile.fill(need, (yield need))
                found = pfile.surt_spans(rg, prefixes, also=wanted)
                if found is not None:
                    spans, kept, total = found
                    st.pages += total
                    st.pages_skipped += total - kept
                    if not spans:
                        st.row_groups_skipped += 1
                        continue
                    if len(spans) > MAX_SPANS:
                        spans = [(spans[0][0], spans[-1][1])]
                    if spans == [(0, rgm.num_rows)]:
                        spans = None
            st.row_groups_read += 1
            if spans is not None:
                # Page-level: the pages of every column this row group needs are few, so they come in
                # one round trip rather than one per column.
                need = pfile.wants([r for c in dict.fromkeys(wanted) for r in pfile.column_ranges(rg, c, spans)])
            elif small:
                # Small whole chunks: the output columns' come with the predicates', in the same round trip.
                need = pfile.wants([r for c in dict.fromkeys(wanted) for r in pfile.column_ranges(rg, c, None)])
            else:
                # Whole chunks: the predicate columns in one round trip (they are read cheapest first from
                # memory); the output columns wait until some row matches.
                need = pfile.wants([r for c in dict.fromkeys(p.column for p in preds)
                                    for r in pfile.column_ranges(rg, c, None)])
            if need:
                pfile.fill(need, (yield need))
            order = sorted(preds, key=lambda p: rgm.column(index[p.column]).total_compressed_size)
            mask: ChunkedArray | None = None
            read: dict[str, Column] = {}
            for p in order:
                if p.column not in read:
                    read[p.column] = pfile.read(rg, p.column, spans)
                m = p.mask(read[p.column])
                mask = m if mask is None else pc.and_(mask, m)
                if not pc.any_true(mask):
                    break
            if mask is not None and not pc.any_true(mask):
                continue
            selected = sum(hi - lo for lo, hi in spans) if spans is not None else rgm.num_rows
            n = selected if mask is None else pc.count_true(mask)
            st.rows_matched += n
            if kind == "count":
                answer.count += n
                continue
            missing = [c for c in columns if c not in read]
            # The output columns' bytes in one round trip, then decoded one by one from memory.
            need = pfile.wants([r for c in missing for r in pfile.column_ranges(rg, c, spans)])
            if need:
                pfile.fill(need, (yield need))
            for c in missing:
                read[c] = pfile.read(rg, c, spans)
            table = pa.table([read[c] for c in columns], names=columns)
            if mask is not None:
                table = pc.filter_(table, mask)
            if kind in ("langs", "mimes"):
                answer.groups.update(_decode(table.column(0)))
                continue
            table = _undictionary(table)
            if kind == "rows":
                table = table.append_column("crawl", pa.array([part.crawl] * table.num_rows, pa.string()))
                table = table.append_column("subset", pa.array([part.subset] * table.num_rows, pa.string()))
            answer.tables.append(table)
            if limit is not None and sum(t.num_rows for t in answer.tables) >= limit:
                break
        if st.row_groups_read == 0:
            st.parts_skipped = 1
        return answer
    finally:  # pyarrow's reader over this part's Python bytes is closed here, not left to the collector
        pfile.close()


def _decode(arr: Column) -> Counter[Any]:
    """Value counts of a (dictionary) column, missing values under None, counted in Arrow.

    A dictionary chunk is counted by index and only its few distinct values become Python objects
    (``to_pylist`` over every row cost ~5 ms per 10,000 rows).
    """
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels as pc

    out: Counter[Any] = Counter()
    for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
        if pa.types.is_dictionary(chunk.type):
            names = chunk.dictionary.to_pylist()
            counted = pc.value_counts(chunk.indices)
            for i, n in zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True):
                out[None if i is None else names[i]] += n
        else:
            counted = pc.value_counts(chunk)
            for v, n in zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True):
                out[v] += n
    return out


def _undictionary(table: Table) -> Table:
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar import kernels

    cols = []
    for c in table.columns:
        cols.append(kernels.cast(c, c.type.value_type) if pa.types.is_dictionary(c.type) else c)
    return pa.table(cols, names=table.column_names)


_END = object()


class _Scan:
    """The parts of one scan as a :class:`~ccrawl.commoncrawl.columnar.source.Driver`.

    Each part is a chain of reads (its tail, a row group's page index, its pages) with some decoding
    between them (:func:`part_steps`). Every part in flight has its next reads on the wire at once, and
    a part takes its next step as soon as its own reads are back, while the others' still come (over
    HTTP the light steps run on the I/O thread as the bytes land, with no thread hand-off a read), so a
    query over a few parts costs about three round trips (tails, page indexes, pages), however many
    parts. At most ``window`` parts are in flight or waiting to be taken; answers go to ``out`` in part
    order, then ``_END`` once nothing is in flight (an error goes there as it happens).

    :meth:`done` may run on several threads at once (a source steps heavy parts on a pool): the
    bookkeeping is under ``lock``, a part's step is not, and a part has one job or step at a time.
    """

    def __init__(self, source: RangeSource, wanted: list[Part], f: Filters, kind: str, *, limit: int | None,
                 window: int) -> None:
        import queue

        self.source = source
        self.wanted = wanted
        self.f = f
        self.kind = kind
        self.limit = limit
        self.window = window
        self.planned = plan(f)
        self.lock = threading.Lock()
        self.out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.steps: dict[int, Steps] = {}
        self.answers: dict[int, PartAnswer | BaseException] = {}
        self.admitted = self.emitted = self.taken = self.rows = 0
        self.in_flight = 0  # jobs started and steps running
        self.stopped = False  # an error, enough rows, or the caller went away: no new part, no new step
        self.failed_at: int | None = None  # the earliest part whose scan failed: later ones are dropped
        self.ended = False

    def start(self) -> list[Job]:
        with self.lock:
            jobs = self._admit()
            self._maybe_end()
            return jobs

    def took(self) -> list[Job]:
        """The caller took an answer: room for another part."""
        with self.lock:
            self.taken += 1
            return self._admit()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self._maybe_end()

    def done(self, token: int, result: Any, error: BaseException | None) -> list[Job]:
        try:
            return self._done(token, result, error)
        except Exception as exc:  # a bug here must reach the caller, who would otherwise wait for ever
            with self.lock:
                self.stopped = True
                if not self.ended:
                    self.ended = True
                    self.out.put(exc)
                    self.out.put(_END)
            return []

    def _done(self, token: int, result: Any, error: BaseException | None) -> list[Job]:
        with self.lock:
            if self._dropped(token) or error is not None:
                if error is not None and not self._dropped(token):
                    self._fail(token, error)
                self.in_flight -= 1
                self._maybe_end()
                return []
            held = self.steps.pop(token, None)
        part = self.wanted[token]
        outcome: PartAnswer | Exception | None
        steps: Steps = held if held is not None else part_steps(
            self.source, part, result, self.f, self.kind, limit=self.limit, planned=self.planned)
        try:
            need = next(steps) if held is None else steps.send(result)
        except StopIteration as finished:
            outcome = finished.value
        except Exception as exc:
            outcome = exc
        else:
            outcome = None
        with self.lock:
            self.in_flight -= 1
            jobs: list[Job] = []
            if isinstance(outcome, PartAnswer):
                self.answers[token] = outcome
                self._emit()
                jobs = self._admit()
            elif outcome is not None:
                if not self._dropped(token):
                    self._fail(token, outcome)
            elif self._dropped(token):
                steps.close()
            else:
                self.steps[token] = steps
                self.in_flight += 1
                jobs = [(token, part.path, need)]
            self._maybe_end()
            return jobs

    def _emit(self) -> None:
        while self.emitted in self.answers and not self.stopped:
            answer = self.answers.pop(self.emitted)
            self.emitted += 1
            self.out.put(answer)
            if isinstance(answer, BaseException):
                self.stopped = True  # the caller raises it; the parts in flight land unused
                return
            self.rows += sum(t.num_rows for t in answer.tables)
            if self.limit is not None and self.rows >= self.limit:
                self.stopped = True  # enough rows: the parts in flight land unused

    def _admit(self) -> list[Job]:
        jobs: list[Job] = []
        while (not self.stopped and self.failed_at is None and self.admitted < len(self.wanted)
               and self.admitted - self.taken < self.window):
            jobs.append((self.admitted, self.wanted[self.admitted].path, None))
            self.admitted += 1
        self.in_flight += len(jobs)
        return jobs

    def _dropped(self, token: int) -> bool:
        """Whether part ``token``'s work is no longer wanted: the scan stopped, or an earlier part failed."""
        return self.stopped or (self.failed_at is not None and token > self.failed_at)

    def _fail(self, token: int, error: BaseException) -> None:
        # The error takes the part's place in the answers: the parts before it still come out first, as
        # they would have, and it is the first failure in part order that the caller sees.
        self.failed_at = token
        self.answers[token] = error
        self._emit()

    def _maybe_end(self) -> None:
        if not self.ended and not self.in_flight and (self.stopped or self.emitted == len(self.wanted)):
            self.ended = True
            for steps in self.steps.values():
                steps.close()
            self.steps.clear()
            self.out.put(_END)


def scan(
    source: RangeSource,
    parts: Sequence[Part],
    f: Filters,
    kind: str,
    *,
    jobs: int = 4,
    limit: int | None = None,
    stats: ScanStats | None = None,
) -> Iterator[PartAnswer]:
    """Scan ``parts``, ``2 x jobs`` at a time, yielding each part's answer in part order (see :class:`_Scan`);
    ``jobs`` threads decode the heavy steps.

    With ``limit`` the scan takes no new part once that many rows came back.
    """
    stats = stats if stats is not None else ScanStats()
    wanted = [p for p in parts if f.keeps_crawl(p.crawl) and f.keeps_subset(p.subset)]
    driver = _Scan(source, wanted, f, kind, limit=limit, window=2 * max(1, jobs))
    ended = False
    source.drive(driver, workers=max(1, jobs))
    try:
        while True:
            item = driver.out.get()
            if item is _END:
                ended = True
                return
            if isinstance(item, BaseException):
                raise item
            stats.merge(item.stats)
            yield item
            source.launch(driver, driver.took())
    finally:
        driver.stop()
        while not ended and driver.out.get() is not _END:  # what is still on the wire lands before we go
            pass


def diff_filters(f: Filters, crawl: str) -> Filters | None:
    """The filters of one side of ``sched diff``: ``f`` in ``crawl``, status 200 only (None: nothing)."""
    if f.statuses and 200 not in f.statuses:
        return None
    if 200 in f.not_statuses:
        return None
    return replace(f, crawls=(crawl,), statuses=(200,))
