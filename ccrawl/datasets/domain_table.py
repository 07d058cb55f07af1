"""A web-graph domain rank table read as Arrow tables: blocks of whole lines parsed by pyarrow, keys un-reversed.

The source (``<release>-domain-ranks.txt.gz``) is gzip text, a header line then one tab-separated row
per domain in harmonic-centrality order. :class:`RankTableReader` parses each decompressed block's
whole lines with pyarrow's CSV reader (no Python per row), :func:`unreverse` turns the reversed host
key around with Arrow kernels, and :func:`cut_shards` cuts the stream into fixed-size shards in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ccrawl.errors import InputError

#: (name, Arrow type) of a shard, in the source table's column order; ``domain`` is the un-reversed key.
DOMAIN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("harmonic_pos", "int64"), ("harmonic_val", "double"), ("pagerank_pos", "int64"), ("pagerank_val", "double"),
    ("domain", "string"), ("n_hosts", "int64"),
)
#: The header line of a Common Crawl domain rank table (the columns above, source names, reversed key).
SOURCE_HEADER = ("#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev", "#n_hosts")


def domain_schema() -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(n, pa.type_for_alias(t)) for n, t in DOMAIN_COLUMNS])


def unreverse(names: Any) -> Any:
    """``com.example.www`` -> ``www.example.com`` for a whole Arrow string array, with Arrow kernels.

    Split on dots, reverse each list by a computed permutation of the flat values, join with dots:
    no Python per row. The same output as :func:`ccrawl.commoncrawl.webgraph.reverse_host`.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(names, pa.ChunkedArray):
        names = names.combine_chunks()
    lists = pc.split_pattern(names, ".")
    offsets = lists.offsets.to_numpy().astype(np.int64)
    lengths = np.diff(offsets)
    starts = np.repeat(offsets[:-1], lengths)
    ends = np.repeat(offsets[1:], lengths)
    flat = np.arange(offsets[0], offsets[-1], dtype=np.int64)
    taken = lists.values.take(pa.array(starts + ends - 1 - flat))
    rebuilt = pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), taken)
    return pc.binary_join(rebuilt, ".")


# -- reading the rank table ----------------------------------------------------------------------------


class RankTableReader:
    """Turn decompressed blocks of a domain rank table into Arrow tables of :data:`DOMAIN_COLUMNS`.

    :meth:`feed` takes a block and returns the tables of the whole lines it completed (the header line
    is checked and dropped); :meth:`finish` returns the last line when the file did not end in a newline.
    ``skip`` data rows at the top are counted and dropped without being parsed.
    """

    def __init__(self, where: str, *, skip: int = 0) -> None:
        self.where = where
        self.skip = skip
        self.rows_seen = 0
        self._tail = b""
        self._header = False

    def feed(self, block: bytes) -> list[Any]:
        data = self._tail + block
        cut = data.rfind(b"\n")
        if cut < 0:
            self._tail = data
            return []
        self._tail = data[cut + 1 :]
        return self._lines(data[: cut + 1])

    def finish(self) -> list[Any]:
        data, self._tail = self._tail, b""
        if not self._header and not data.strip():
            raise InputError(f"{self.where}: the domain rank table is empty (no header line)")
        return self._lines(data + b"\n") if data.strip() else []

    def _lines(self, data: bytes) -> list[Any]:
        if not self._header:
            first, _, data = data.partition(b"\n")
            got = tuple(first.decode("utf-8", "replace").rstrip("\r").split("\t"))
            if got != SOURCE_HEADER:
                raise InputError(f"{self.where}: not a domain rank table (header {first[:120]!r}, expected "
                                 f"{chr(9).join(SOURCE_HEADER)!r})")
            self._header = True
        if self.skip > 0 and data:
            n = data.count(b"\n")
            if n <= self.skip:
                self.skip -= n
                self.rows_seen += n
                return []
            pos = -1
            for _ in range(self.skip):
                pos = data.index(b"\n", pos + 1)
            self.rows_seen += self.skip
            data = data[pos + 1 :]
            self.skip = 0
        if not data:
            return []
        table = self._parse(data)
        self.rows_seen += table.num_rows
        return [table]

    def _parse(self, data: bytes) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        names = [n for n, _ in DOMAIN_COLUMNS]
        types = {n: pa.type_for_alias(t) for n, t in DOMAIN_COLUMNS}
        try:
            table = pacsv.read_csv(
                pa.py_buffer(data),
                read_options=pacsv.ReadOptions(column_names=names, block_size=max(1 << 20, len(data) + 1),
                                               use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                                 double_quote=False),
                convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                     quoted_strings_can_be_null=False),
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"{self.where}: a rank table row does not parse: {exc}") from exc
        return table.set_column(names.index("domain"), "domain", unreverse(table.column("domain")))


def cut_shards(tables: Iterator[Any], shard_rows: int, *, first_index: int = 0) -> Iterator[tuple[int, Any]]:
    """(shard index, table of ``shard_rows`` rows) in order; the last shard holds what is left."""
    import pyarrow as pa

    index = first_index
    held: list[Any] = []
    count = 0
    for table in tables:
        while table.num_rows:
            take = min(table.num_rows, shard_rows - count)
            held.append(table.slice(0, take))
            count += take
            table = table.slice(take)
            if count == shard_rows:
                yield index, pa.concat_tables(held).combine_chunks()
                index += 1
                held, count = [], 0
    if count:
        yield index, pa.concat_tables(held).combine_chunks()
