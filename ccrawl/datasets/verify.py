"""``publish verify``: read every shard's footer over ranged requests and say what publishing never asks.

For each shard the verdict is one of :data:`VERDICTS`:

* ``ok`` -- the footer parses, the schema is the dataset's, the row groups add up to the footer's row
  count, every column chunk lies inside the bytes the hub holds (and ``sample`` rows decode);
* ``missing`` -- the source manifest names a part whose shard is not on the hub;
* ``unreadable`` -- neither end of the file says ``PAR1``: not Parquet at all;
* ``truncated`` -- the file starts as Parquet but its end is not a footer, or a column chunk runs past
  the bytes the hub holds (an upload cut short);
* ``schema`` -- the columns or their types are not the dataset's;
* ``empty`` -- a well-formed shard with zero rows (a source part is never empty);
* ``corrupt`` -- the footer does not parse, its row groups disagree with its row count, or a sampled
  page does not decode;
* ``no-access`` -- the hub would not serve it (401/403): not a verdict on the data.

The footer is read with two ranged reads (the last 8 bytes, then exactly the footer) plus 4 bytes of
the head, so a check costs about as much as a listing. Totals are then reconciled with ``stats.csv``:
a disagreement is reported (and fails the run) even when every shard passes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, SupportsInt

from ccrawl.errors import CredentialMissing, InputError, NothingMatched
from ccrawl.hub.repo import DatasetRepo, HubFile
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from _typeshed import WriteableBuffer

VERDICTS = ("ok", "missing", "unreadable", "truncated", "schema", "empty", "corrupt", "no-access")
MAGIC = b"PAR1"


@dataclass(slots=True)
class ShardCheck:
    """The verdict on one shard (a typed message from a checking thread)."""

    path: str
    verdict: str
    size: int = 0
    rows: int = 0
    row_groups: int = 0
    bytes_read: int = 0
    detail: str = ""

    def record(self) -> Record:
        return {"shard": self.path, "verdict": self.verdict, "rows": self.rows, "row_groups": self.row_groups,
                "size": self.size, "bytes_read": self.bytes_read, "detail": self.detail}


class FooterFile(io.RawIOBase):
    """A file of ``size`` bytes of which only the tail (the footer) is known; the rest reads as zeros.

    pyarrow reads the last 64 KiB to find the footer but parses only the last ``footer_len + 8`` bytes,
    which are real; the zeros before them are never interpreted.
    """

    def __init__(self, size: int, tail: bytes) -> None:
        super().__init__()
        self.size = size
        self.tail = tail
        self.tail_start = size - len(tail)
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        end = min(self.size, self.pos + len(view))
        n = end - self.pos
        if n <= 0:
            return 0
        out = bytearray(n)
        lo = max(self.pos, self.tail_start)
        if lo < end:
            out[lo - self.pos :] = self.tail[lo - self.tail_start : end - self.tail_start]
        view[:n] = out
        self.pos = end
        return n


def read_footer(repo: DatasetRepo, path: str, size: int) -> tuple[pq.FileMetaData, int]:
    """(pyarrow FileMetaData, bytes read) of ``path`` from two ranged reads; InputError with a verdict."""
    import pyarrow.parquet as pq

    if size < 12:
        raise _Bad("unreadable" if size < 4 else "truncated", f"{size} bytes is too short for Parquet")
    end = repo.read_range(path, size - 8, 8)
    read = len(end)
    if end[4:] != MAGIC:
        head = repo.read_range(path, 0, 4)
        read += len(head)
        if head == MAGIC:
            raise _Bad("truncated", "starts as Parquet but does not end with a footer (an upload cut short?)", read)
        raise _Bad("unreadable", "not a Parquet file (no PAR1 at either end)", read)
    n = int.from_bytes(end[:4], "little")
    if n + 12 > size:
        raise _Bad("corrupt", f"the footer length {n} is past the start of the file", read)
    footer = repo.read_range(path, size - 8 - n, n)
    read += len(footer)
    try:
        meta = pq.read_metadata(FooterFile(size, footer + end))
    except Exception as exc:
        raise _Bad("corrupt", f"the footer does not parse: {exc}", read) from exc
    return meta, read


class _Bad(Exception):
    def __init__(self, verdict: str, detail: str, bytes_read: int = 0) -> None:
        super().__init__(detail)
        self.verdict = verdict
        self.detail = detail
        self.bytes_read = bytes_read


def footer_rows(repo: DatasetRepo, path: str, size: int) -> int:
    """The row count a shard's footer claims (recount's reader)."""
    try:
        return int(read_footer(repo, path, size)[0].num_rows)
    except _Bad as exc:
        raise InputError(f"{repo.repo_id}/{path}: {exc.detail}") from exc


def check_shard(repo: DatasetRepo, f: HubFile, schema: pa.Schema | Sequence[pa.Schema], *,
                sample: int = 0) -> ShardCheck:
    """The verdict on one listed shard; see the module docstring.

    ``schema`` is the dataset's Arrow schema, or a list of the schemas it accepts (older shapes).
    """
    out = ShardCheck(f.path, "ok", size=f.size)
    try:
        meta, out.bytes_read = read_footer(repo, f.path, f.size)
    except _Bad as exc:
        out.verdict, out.detail, out.bytes_read = exc.verdict, exc.detail, exc.bytes_read
        return out
    except CredentialMissing as exc:
        out.verdict, out.detail = "no-access", str(exc)
        return out
    except NothingMatched as exc:
        out.verdict, out.detail = "missing", f"listed, then gone: {exc}"
        return out
    out.rows, out.row_groups = int(meta.num_rows), int(meta.num_row_groups)
    got = meta.schema.to_arrow_schema()
    accepted = schema if isinstance(schema, (list, tuple)) else [schema]  # a dataset may allow older shapes
    if schema is not None and all([(x.name, str(x.type)) for x in got] != [(x.name, str(x.type)) for x in s]
                                  for s in accepted):
        want = " or ".join(", ".join(f"{x.name}:{x.type}" for x in s) for s in accepted)
        out.verdict = "schema"
        out.detail = f"columns {', '.join(f'{x.name}:{x.type}' for x in got)}; the dataset's are {want}"
        return out
    in_groups = sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    if in_groups != meta.num_rows:
        out.verdict, out.detail = "corrupt", f"row groups hold {in_groups} rows, the footer claims {meta.num_rows}"
        return out
    data_end = f.size - 8 - (out.bytes_read - 8)  # where the footer starts
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        for j in range(rg.num_columns):
            col = rg.column(j)
            if col.total_compressed_size == 0:
                continue  # no pages at all (a column of an empty row group): nothing to lie outside the file
            start = col.dictionary_page_offset if col.has_dictionary_page and col.dictionary_page_offset else \
                col.data_page_offset
            stop = start + col.total_compressed_size
            if start < 4 or stop > data_end:
                out.verdict = "truncated"
                out.detail = (f"row group {i} column {col.path_in_schema} spans bytes {start}-{stop}, the hub "
                              f"holds data up to {data_end}")
                return out
    if meta.num_rows == 0:
        out.verdict, out.detail = "empty", "a well-formed shard with no rows"
        return out
    if sample > 0:
        out.bytes_read += _sample(repo, f, sample, out)
    return out


def _sample(repo: DatasetRepo, f: HubFile, n: int, out: ShardCheck) -> int:
    """Decode ``n`` rows of the last row group (every column); a failure makes the shard corrupt."""
    import pyarrow.parquet as pq

    from ccrawl.hub.worklist import RangeFile

    fh = RangeFile(repo, f.path, f.size)
    try:  # over Python bytes: read on this thread, closed here (docs/datasets.md)
        with fh, pq.ParquetFile(fh) as pf:
            table = pf.read_row_group(pf.num_row_groups - 1, use_threads=False)
        table.slice(max(0, table.num_rows - n)).to_pylist()
    except Exception as exc:
        out.verdict, out.detail = "corrupt", f"the last row group does not decode: {exc}"
    return fh.bytes_fetched


@dataclass(slots=True)
class VerifyReport:
    checks: list[ShardCheck] = field(default_factory=list)
    ledger_problems: list[str] = field(default_factory=list)
    bytes_read: int = 0
    dataset_bytes: int = 0
    repaired: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[ShardCheck]:
        return [c for c in self.checks if c.verdict != "ok"]

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for c in self.checks:
            out[c.verdict] += 1
        return out

    def as_dict(self) -> Record:
        return {"shards": [c.record() for c in self.checks], "verdicts": self.counts(),
                "ledger": self.ledger_problems, "bytes_read": self.bytes_read, "dataset_bytes": self.dataset_bytes,
                "repaired": self.repaired, "ok": not self.failed and not self.ledger_problems}


def verify(repo: DatasetRepo, prefix: str, *, schema: pa.Schema | Sequence[pa.Schema],
           expected: Sequence[str] | None = None, sample: int = 0, workers: int = 4,
           ledger_row: Mapping[str, object] | None = None) -> VerifyReport:
    """Check every shard under ``prefix`` (and every ``expected`` path), then reconcile with the ledger row."""
    rep = VerifyReport()
    try:
        files = [f for f in repo.list_files(prefix) if f.path.endswith(".parquet")]
    except (CredentialMissing, NothingMatched) as exc:
        # The Hub answers 401 (RepoNotFound) for a private repo read without a token, and for one that
        # does not exist: either way it will not serve the shards, which is not a verdict on the data.
        rep.checks.append(ShardCheck(prefix, "no-access", detail=str(exc)))
        return rep
    rep.dataset_bytes = sum(f.size for f in files)
    listed = {f.path for f in files}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ccrawl-verify") as pool:
        rep.checks = list(pool.map(lambda f: check_shard(repo, f, schema, sample=sample), files))
    for path in expected or ():
        if path not in listed:
            rep.checks.append(ShardCheck(path, "missing", detail="named by the source manifest, not on the hub"))
    rep.checks.sort(key=lambda c: c.path)
    rep.bytes_read = sum(c.bytes_read for c in rep.checks)
    if ledger_row is not None:
        rep.ledger_problems = reconcile(ledger_row, files, rep.checks)
    return rep


def _count(value: object) -> int:
    """A ledger cell as a number (a CSV cell is text; an empty one is 0)."""
    if not value:
        return 0
    if isinstance(value, (str, bytes, SupportsInt)):
        return int(value)
    raise TypeError(f"not a count: {value!r}")


def reconcile(row: Mapping[str, object], files: Sequence[HubFile], checks: Sequence[ShardCheck]) -> list[str]:
    """What the ledger row claims against what the hub holds (shards, rows, bytes)."""
    crawl = row.get("crawl", "")
    held = {"shards": len(files), "bytes": sum(f.size for f in files),
            "rows": sum(c.rows for c in checks if c.verdict != "missing")}
    problems = []
    for key in ("shards", "rows", "bytes"):
        claimed = _count(row.get(key))
        if claimed != held[key]:
            problems.append(f"{crawl}: stats.csv says {key}={claimed:,}, the hub holds {held[key]:,}")
    return problems


Notice = Callable[[str], None]
