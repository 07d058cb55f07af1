"""A work list read from a hub: releases and parts listed from the repo, one column read over ranged reads.

This is the hub side of ``recrawl run --from domains|urls|<repo>``. :class:`HubWorkList` has the shape of
:class:`ccrawl.recrawl.worklist.WorkList` (``column``, ``parts()``, ``identity()``, ``iter_rows()``), so the
recrawl feeder walks a Hub release exactly as it walks a local directory:

* releases are the directories of the repo that hold ``.parquet`` files, listed once, never guessed;
  the newest is the last in name order (``CC-MAIN-2026-25`` and dates sort by time), web-graph release
  ids by their date;
* parts are listed, sorted by the number in their name (``part-000`` and ``part-00000`` both work);
* a part is opened through :class:`RangeFile`, a seekable file whose reads are ranged requests through
  an ``fsspec`` read-ahead cache, so pyarrow fetches the footer and the one column's chunks and nothing
  else, one request per chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl.errors import InputError, UsageError
from ccrawl.hub.repo import DatasetRepo
from ccrawl.jsontypes import JSONObject
from ccrawl.net.rangefile import RangeFile as _RangeFile

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

#: ``--column`` shorthands.
COLUMN_SHORTHANDS: dict[str, str] = {"domains": "domain", "urls": "url"}

_NUMBER = re.compile(r"(\d+)")


@dataclass(frozen=True, slots=True)
class Part:
    """One listed part: its name (relative to the release), size in bytes and row count."""

    name: str
    size: int
    rows: int


def part_sort_key(name: str) -> tuple[int, int, str]:
    """Numeric order by the last number in the file name; names without one sort first."""
    numbers = _NUMBER.findall(Path(name).name)
    if not numbers:
        return (0, -1, name)
    return (1, int(numbers[-1]), name)


def check_column_type(arrow_type: pa.DataType, column: str, where: str) -> None:
    """The work column holds text: a string, or binary that :func:`cell_text` decodes as UTF-8."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    text = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    binary = pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)
    if not (text or binary) and str(arrow_type) != "string_view" and str(arrow_type) != "binary_view":
        raise UsageError(
            f"--column {column!r} in {where} holds {arrow_type}, not text: name the column of URLs or domains"
        )


def cell_text(value: object, part: str, row: int) -> str | None:
    """A work-list cell as text: a binary cell (a column not annotated UTF-8) is decoded, strictly."""
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"work-list part {part} row {row}: the binary cell is not UTF-8 ({exc.reason} at byte {exc.start}: "
                f"{value[:60]!r}); re-encode the column as UTF-8 text"
            ) from None
    return str(value)


#: Read-ahead past each read: one ranged request serves pyarrow's footer probe and the footer, and a
#: column chunk (which pyarrow asks for in one read) costs one request of its own size plus this.
BLOCK_SIZE = 64 * 1024


class RangeFile(_RangeFile):
    """A read-only, seekable view of one file on a hub, read by ranged requests with a little read-ahead."""

    def __init__(self, repo: DatasetRepo, path: str, size: int, *, block_size: int = BLOCK_SIZE) -> None:
        super().__init__(
            lambda start, length: repo.read_range(path, start, length), size,
            name=f"{repo.repo_id}/{path}", block_size=block_size,
        )
        self.repo = repo
        self.path = path


def list_releases(repo: DatasetRepo, under: str = "") -> list[str]:
    """Directories of ``repo`` (below ``under``) that hold ``.parquet`` files, oldest first.

    Name order, except that web-graph release ids sort by their date (``cc-main-2025-26-dec-jan-feb``
    is newer than ``cc-main-2025-sep-oct-nov``, which name order gets wrong).
    """
    from ccrawl.commoncrawl.webgraph import release_sort_key

    dirs = {f.path.rsplit("/", 1)[0] for f in repo.list_files(under) if f.path.endswith(".parquet") and "/" in f.path}
    return sorted(dirs, key=release_sort_key)


def newest_release(repo: DatasetRepo, under: str = "") -> str:
    """The last release in name order; an empty repo is an error, not an empty work list."""
    releases = list_releases(repo, under)
    if not releases:
        raise InputError(f"{repo.repo_id} holds no directory of .parquet parts: an empty release is an error")
    return releases[-1]


def open_parquet(repo: DatasetRepo, path: str, size: int) -> pq.ParquetFile:
    """A ``pyarrow.parquet.ParquetFile`` over ranged reads of one file.

    Its reads are Python ``bytes``: read it with ``use_threads=False`` and close it with
    ``close(force=True)`` when done (docs/datasets.md, "Arrow readers over Python bytes").
    """
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(RangeFile(repo, path, size))
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{repo.repo_id}/{path} is listed but is not readable Parquet: {exc}") from exc


def read_column(repo: DatasetRepo, path: str, size: int, column: str) -> Iterator[list[object]]:
    """One column of a part, a row group at a time (values as Python objects)."""
    pf = open_parquet(repo, path, size)
    try:
        if column not in pf.schema_arrow.names:
            raise UsageError(
                f"--column {column!r} is not in {path}; its columns are: {', '.join(pf.schema_arrow.names)}")
        for group in range(pf.metadata.num_row_groups):
            yield pf.read_row_group(group, columns=[column], use_threads=False).column(0).to_pylist()
    finally:
        pf.close(force=True)


class HubWorkList:
    """A release of Parquet parts in a hub repo, read one column at a time."""

    def __init__(self, repo: DatasetRepo, column: str, release: str | None = None, *, threads: int = 8) -> None:
        self.repo = repo
        self.column = COLUMN_SHORTHANDS.get(column, column)
        self.release = release.strip("/") if release else newest_release(repo)
        files = [f for f in repo.list_files(self.release) if f.path.endswith(".parquet")]
        if not files:
            listed = ", ".join(list_releases(repo)) or "none"
            raise InputError(f"{repo.repo_id}: no .parquet parts in {self.release!r}; releases there: {listed}")
        files.sort(key=lambda f: part_sort_key(f.path))
        self._sizes = {self._name(f.path): f.size for f in files}
        with ThreadPoolExecutor(max_workers=threads) as pool:
            self._parts = list(pool.map(lambda f: self._describe(f.path, f.size), files))

    def _name(self, path: str) -> str:
        return path[len(self.release) + 1 :]

    def _describe(self, path: str, size: int) -> Part:
        pf = open_parquet(self.repo, path, size)
        try:
            if self.column not in pf.schema_arrow.names:
                raise UsageError(
                    f"--column {self.column!r} is not in {path}; its columns are: {', '.join(pf.schema_arrow.names)}"
                )
            check_column_type(pf.schema_arrow.field(self.column).type, self.column, path)
            return Part(self._name(path), size, pf.metadata.num_rows)
        finally:
            pf.close(force=True)

    def parts(self) -> list[Part]:
        return list(self._parts)

    def identity(self) -> JSONObject:
        return {
            "source": f"hub:{self.repo.repo_id}/{self.release}",
            "column": self.column,
            "parts": [[p.name, p.size] for p in self._parts],
        }

    def iter_rows(self, part_index: int, start_row: int = 0) -> Iterator[tuple[int, str | None]]:
        part = self._parts[part_index]
        pf = open_parquet(self.repo, f"{self.release}/{part.name}", part.size)
        try:
            first = 0
            for group in range(pf.metadata.num_row_groups):
                n = pf.metadata.row_group(group).num_rows
                if first + n <= start_row:
                    first += n  # skipped by its footer count: its pages are never fetched
                    continue
                try:
                    values = pf.read_row_group(group, columns=[self.column], use_threads=False).column(0).to_pylist()
                except InputError:
                    raise
                except Exception as exc:
                    raise InputError(f"work-list part {part.name} row group {group} cannot be read: {exc}") from exc
                for i in range(max(0, start_row - first), n):
                    yield first + i, cell_text(values[i], part.name, first + i)
                first += n
        finally:
            pf.close(force=True)
