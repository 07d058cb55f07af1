"""A web-graph domain rank table cut into shards of whole lines, each parsed by pyarrow with its key un-reversed.

The source (``<release>-domain-ranks.txt.gz``) is gzip text, a header line then one tab-separated row
per domain in harmonic-centrality order. :class:`RankTableReader` turns decompressed blocks into runs of
whole lines and :func:`cut_shards` cuts them into shards of a fixed number of lines, both by counting
newlines (no parsing, no Python per row); :func:`parse_rows` parses one shard's lines with pyarrow's CSV
reader and :func:`unreverse` turns the reversed host key around with Arrow kernels.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ccrawl.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

#: (name, Arrow type) of a shard, in the source table's column order; ``domain`` is the un-reversed key.
DOMAIN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("harmonic_pos", "int64"), ("harmonic_val", "double"), ("pagerank_pos", "int64"), ("pagerank_val", "double"),
    ("domain", "string"), ("n_hosts", "int64"),
)
#: The header line of a Common Crawl domain rank table (the columns above, source names, reversed key).
SOURCE_HEADER = ("#harmonicc_pos", "#harmonicc_val", "#pr_pos", "#pr_val", "#host_rev", "#n_hosts")


def domain_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(n, pa.type_for_alias(t)) for n, t in DOMAIN_COLUMNS])


def unreverse(names: pa.StringArray | pa.ChunkedArray) -> pa.StringArray:
    """``com.example.www`` -> ``www.example.com`` for a whole Arrow string array, with Arrow kernels.

    Reversing a name's characters reverses the order of its labels and spells each label backwards;
    splitting on dots and reversing each label's characters again leaves the labels in reversed order,
    spelled right, and joining them with dots is the answer. No Python per row; the same output as
    :func:`ccrawl.commoncrawl.webgraph.reverse_host`. ASCII names (the web graph's are: IDNs are
    punycode) take Arrow's byte reverse; anything else the UTF-8 one.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(names, pa.ChunkedArray):
        names = names.combine_chunks()

    def backwards(values: pa.StringArray) -> pa.StringArray:
        try:
            return pc.ascii_reverse(values)
        except pa.ArrowInvalid:  # a non-ASCII name
            return pc.utf8_reverse(values)

    labels = pc.split_pattern(backwards(names), ".")
    flat = labels.values.slice(labels.offsets[0].as_py(), labels.offsets[-1].as_py() - labels.offsets[0].as_py())
    offsets = pc.subtract(labels.offsets, labels.offsets[0])
    rebuilt = pa.ListArray.from_arrays(offsets, backwards(flat), mask=labels.is_null())
    return pc.binary_join(rebuilt, ".")


class RankTableReader:
    """Cut decompressed blocks of a domain rank table into runs of whole lines, without parsing them.

    :meth:`feed` takes a block and returns the text of the whole lines it completed (the header line is
    checked and dropped, blank lines squeezed out, so one line is one row); :meth:`finish` returns the last
    line when the file did not end in a newline. ``skip`` rows at the top are counted and dropped. The
    rows are parsed later, a shard at a time, by :func:`parse_rows` (in a writer thread: pyarrow parses
    without the GIL, so the stream keeps moving while shards are parsed and encoded).
    """

    def __init__(self, where: str, *, skip: int = 0) -> None:
        self.where = where
        self.skip = skip
        self.rows_seen = 0
        self._tail = b""
        self._header = False

    def feed(self, block: bytes) -> list[bytes]:
        data = self._tail + block
        cut = data.rfind(b"\n")
        if cut < 0:
            self._tail = data
            return []
        self._tail = data[cut + 1 :]
        return self._lines(data[: cut + 1])

    def finish(self) -> list[bytes]:
        data, self._tail = self._tail, b""
        if not self._header and not data.strip():
            raise InputError(f"{self.where}: the domain rank table is empty (no header line)")
        return self._lines(data + b"\n") if data.strip() else []

    def _lines(self, data: bytes) -> list[bytes]:
        if not self._header:
            first, _, data = data.partition(b"\n")
            got = tuple(first.decode("utf-8", "replace").rstrip("\r").split("\t"))
            if got != SOURCE_HEADER:
                raise InputError(f"{self.where}: not a domain rank table (header {first[:120]!r}, expected "
                                 f"{chr(9).join(SOURCE_HEADER)!r})")
            self._header = True
        while b"\n\n" in data:
            data = data.replace(b"\n\n", b"\n")
        data = data.removeprefix(b"\n")  # a blank line across the cut of two blocks
        n = data.count(b"\n")
        if self.skip > 0 and data:
            if n <= self.skip:
                self.skip -= n
                self.rows_seen += n
                return []
            data = data[nth_newline(data, self.skip) + 1 :]
            self.rows_seen += self.skip
            n -= self.skip
            self.skip = 0
        self.rows_seen += n
        return [data] if data else []


def nth_newline(data: bytes, n: int) -> int:
    """The offset of the ``n``-th newline (1-based) in ``data``, found without a Python loop per line."""
    import numpy as np

    return int(np.flatnonzero(np.frombuffer(data, np.uint8) == 10)[n - 1])


def parse_rows(data: bytes, where: str) -> pa.Table:
    """Whole lines of a domain rank table as an Arrow table of :data:`DOMAIN_COLUMNS`, the key un-reversed."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [n for n, _ in DOMAIN_COLUMNS]
    types = {n: pa.type_for_alias(t) for n, t in DOMAIN_COLUMNS}
    try:
        from ccrawl.arrowpool import arrow_owned

        table = pacsv.read_csv(
            arrow_owned(data),  # parsed on Arrow's threads: an Arrow-owned copy, not a buffer over Python bytes
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                             double_quote=False),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{where}: a rank table row does not parse: {exc}") from exc
    table = table.combine_chunks()
    return table.set_column(names.index("domain"), "domain", unreverse(table.column("domain")))


def cut_shards(runs: Iterator[bytes], shard_rows: int, *, first_index: int = 0) -> Iterator[tuple[int, bytes, int]]:
    """(shard index, its lines, how many) in order from runs of whole lines; the last holds what is left."""
    index = first_index
    held: list[bytes] = []
    count = 0
    for run in runs:
        while run:
            n = run.count(b"\n")
            need = shard_rows - count
            if n < need:
                held.append(run)
                count += n
                break
            cut = nth_newline(run, need) + 1
            held.append(run[:cut])
            yield index, b"".join(held), shard_rows
            index += 1
            held, count = [], 0
            run = run[cut:]
    if count:
        yield index, b"".join(held), count
