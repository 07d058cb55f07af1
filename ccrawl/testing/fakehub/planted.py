"""Damage planted in a published dataset, for ``publish verify`` to find.

Each function commits one fault through the hub API (:class:`~ccrawl.hub.repo.DatasetRepo`), so it
works the same on a local hub and on the fake Hub:

* :func:`truncate` -- the first part of a shard only, as an upload cut short leaves it (``truncated``);
* :func:`wrong_schema` -- a readable shard of other columns (``schema``);
* :func:`empty` -- a well-formed shard of the right schema with no rows (``empty``);
* :func:`garbage` -- bytes that are not Parquet at all (``unreadable``);
* :func:`bad_page` -- a shard whose footer is intact but whose last data pages are overwritten, same
  size (``ok`` from the footer alone, ``corrupt`` with ``--sample``);
* :func:`ledger_drift` -- stats.csv counting rows the hub does not hold (a ``ledger`` disagreement);
* :func:`remove` -- a shard deleted (``missing``).

A repo that answers 401 is a private repo on the fake Hub read without a token
(``HfRepo(..., token=None)``): see :func:`ccrawl.testing.fakehub.base._check_read`.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from ccrawl.hub.repo import Add, DatasetRepo

if TYPE_CHECKING:
    import pyarrow as pa


def _bytes(repo: DatasetRepo, path: str) -> bytes:
    size = {f.path: f.size for f in repo.list_files(path.rsplit("/", 1)[0])}[path]
    return repo.read_range(path, 0, size)


def _parquet(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def truncate(repo: DatasetRepo, path: str, keep: float = 0.5) -> None:
    data = _bytes(repo, path)
    repo.commit([Add(path, data[: max(4, int(len(data) * keep))])], message=f"plant: truncate {path}")


def wrong_schema(repo: DatasetRepo, path: str) -> None:
    import pyarrow as pa

    table = pa.table({"url": pa.array([1, 2, 3], pa.int64()), "host": ["a", "b", "c"]})
    repo.commit([Add(path, _parquet(table))], message=f"plant: wrong schema at {path}")


def empty(repo: DatasetRepo, path: str, schema: pa.Schema) -> None:
    repo.commit([Add(path, _parquet(schema.empty_table()))], message=f"plant: zero-row shard at {path}")


def garbage(repo: DatasetRepo, path: str) -> None:
    repo.commit([Add(path, b"<html>502 Bad Gateway</html>\n" * 20)], message=f"plant: garbage at {path}")


def bad_page(repo: DatasetRepo, path: str) -> None:
    """Overwrite the data bytes of the last row group (not the footer) with a repeating pattern."""
    import pyarrow.parquet as pq

    data = bytearray(_bytes(repo, path))
    meta = pq.read_metadata(io.BytesIO(bytes(data)))
    rg = meta.row_group(meta.num_row_groups - 1)
    for j in range(rg.num_columns):
        col = rg.column(j)
        start = col.dictionary_page_offset if col.has_dictionary_page and col.dictionary_page_offset else \
            col.data_page_offset
        for k in range(start, start + col.total_compressed_size):
            data[k] = 0xA5
    repo.commit([Add(path, bytes(data))], message=f"plant: bad pages in {path}")


def ledger_drift(repo: DatasetRepo, crawl: str, *, rows: int = 1000, path: str = "stats.csv", key: str = "crawl",
                 field: str = "rows") -> None:
    """Add ``rows`` to the ``field`` of the ledger row whose ``key`` column is ``crawl`` (a month, a release)."""
    text = repo.read_text(path) or ""
    out_rows = list(csv.DictReader(io.StringIO(text)))
    for r in out_rows:
        if r[key] == crawl:
            r[field] = str(int(r[field]) + rows)
    out = io.StringIO()
    if out_rows:
        w = csv.DictWriter(out, fieldnames=list(out_rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out_rows)
    repo.commit([Add(path, out.getvalue().encode())], message=f"plant: {path} drifts by {rows} rows for {crawl}")


def remove(repo: DatasetRepo, path: str) -> None:
    repo.commit([], [path], message=f"plant: delete {path}")
