"""The work list of a recrawl: a published set of Parquet parts, read one column at a time, or the
lists users have at hand (a text file of URLs, JSONL, CSV), read one row at a time.

One interface, :class:`WorkList`, whatever holds the parts. This module implements it over a
local file or directory (:class:`LocalWorkList`); a Hub dataset is :class:`ccrawl.hub.worklist.HubWorkList`
(ranged reads of the one column), and :func:`open_worklist` picks between them.

The rules come from the seed's ``recrawl run`` section:

* parts are *listed*, never guessed from a counter, and walked in the numeric order of the
  number in their name (``part-000`` and ``part-00000`` widths both sort right);
* only the work column is read, one row group at a time, so memory is flat at any row;
* a seek to a row skips whole row groups by their footer row counts rather than reading and
  discarding them;
* a value without ``://`` is a domain and becomes its home page ``https://<domain>/``;
* a listed part that cannot be read is an error, and so is a release with no parts, because
  both used to look exactly like a finished work list.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ccrawl.errors import InputError, UsageError
from ccrawl.hub.worklist import COLUMN_SHORTHANDS, HubWorkList, Part, cell_text, check_column_type, part_sort_key
from ccrawl.jsontypes import JSONObject

if TYPE_CHECKING:
    import pyarrow.parquet as pq

#: ``--from`` shorthands: (dataset repo, default column).
SHORTHANDS: dict[str, tuple[str, str]] = {
    "domains": ("open-index/ccrawl-domains", "domain"),
    "urls": ("open-index/ccrawl-urls", "url"),
}

def to_url(value: str) -> str:
    """A work-list value as a URL: a domain becomes its home page ``https://<domain>/``."""
    value = value.strip()
    if "://" in value:
        return value
    return f"https://{value.strip('/')}/"


class WorkList(Protocol):
    """What the feeder needs from a work list, wherever its parts live."""

    column: str

    def parts(self) -> list[Part]:
        """The listed parts in walking order."""
        ...

    def identity(self) -> JSONObject:
        """What a checkpoint must match: source, column, and every part's name and size."""
        ...

    def iter_rows(self, part_index: int, start_row: int = 0) -> Iterator[tuple[int, str | None]]:
        """(row offset, value) from ``start_row`` to the end of one part; None for a null cell."""
        ...


def identity_digest(identity: JSONObject) -> str:
    """A short stable digest of a work-list identity, for messages and file names."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


#: File kinds a local work list may hold, by name ending (``.gz`` allowed on all but Parquet).
KINDS: dict[str, str] = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
                         ".csv": "csv", ".tsv": "tsv", ".txt": "text", ".urls": "text", ".lst": "text"}
#: Files that are captures, not lists: refused when named as ``--from``.
NOT_LISTS = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wat", ".wat.gz", ".wet", ".wet.gz")


def file_kind(name: str, *, named: bool = False) -> str | None:
    """The kind of a work-list file from its name; None for a file a directory listing skips.

    A file named on its own (``named``) with an unknown ending is read as text, one URL a line."""
    lower = name.lower()
    if lower.startswith(".") and not named:
        return None  # .ccrawl-state.json, .ccrawl.lock and the like are never parts
    if lower.endswith(NOT_LISTS):
        if named:
            raise UsageError(f"--from {name!r} is a web archive, not a list of URLs: give a text, JSONL, CSV or "
                             "Parquet file (or a directory of them)")
        return None
    base = lower[:-3] if lower.endswith(".gz") else lower
    kind = KINDS.get(os.path.splitext(base)[1])
    if kind == "parquet" and base != lower:
        kind = None
    if kind is None and named:
        return "text"
    return kind


class LocalWorkList:
    """A work list held locally: Parquet parts, or text/JSONL/CSV files, in a directory or one file.

    Rows are the work list's entries in file order: a Parquet row, a JSONL object, a CSV data row,
    a text line that is neither blank nor a ``#`` comment. A directory's parts are its Parquet files
    when it holds any (a stray ``notes.txt`` beside them is not work), else its text/JSONL/CSV files.
    """

    def __init__(self, path: str | os.PathLike[str], column: str | None = None) -> None:
        given = Path(path)
        self.column = COLUMN_SHORTHANDS.get(column, column) if column else "url"
        self._column_given = bool(column)
        self._kinds: dict[str, str] = {}
        if given.is_file():
            self.directory = given.parent
            self._source = given
            self._kinds[given.name] = file_kind(given.name, named=True) or "text"
            names = [given.name]
        elif given.is_dir():
            self.directory = self._source = given
            names = sorted(list_parts(given), key=part_sort_key)
            self._kinds = {n: file_kind(n) or "text" for n in names}
        else:
            raise UsageError(f"--from: {given} is not a file or a directory of work-list files")
        if not names:
            raise InputError(
                f"{self.directory} holds no work-list files (.parquet, .jsonl, .csv, .txt): an empty release is not "
                "a finished work list; check --from/--dir"
            )
        self._parts = [self._describe(name) for name in names]

    def _open(self, name: str) -> pq.ParquetFile:
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(self.directory / name)
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(f"work-list part {self.directory / name} is listed but cannot be read: {exc}") from exc

    def _missing_column(self, name: str, have: list[str], what: str) -> UsageError:
        if self._column_given:
            return UsageError(f"--column {self.column!r} is not in {name}; its {what} are: {', '.join(have) or 'none'}")
        return UsageError(f"{name} has no 'url' {what[:-1]}; its {what} are: {', '.join(have) or 'none'}: "
                          "name the one holding the URLs or domains with --column")

    def _describe(self, name: str) -> Part:
        kind = self._kinds[name]
        size = (self.directory / name).stat().st_size
        if kind != "parquet":
            return Part(name, size, sum(1 for _ in self._records(name, check=True)))
        pf = self._open(name)
        try:
            if self.column not in pf.schema_arrow.names:
                raise self._missing_column(name, pf.schema_arrow.names, "columns")
            check_column_type(pf.schema_arrow.field(self.column).type, self.column, name)
            rows = pf.metadata.num_rows
        finally:
            pf.close()
        return Part(name, size, rows)

    def _lines(self, name: str) -> Iterator[tuple[int, str]]:
        """(line number, line) of a text file, gzip or not, decoded strictly as UTF-8."""
        import gzip

        path = self.directory / name
        gz = name.lower().endswith(".gz")
        try:
            with (gzip.open(path, "rt", encoding="utf-8", newline="") if gz
                  else open(path, encoding="utf-8", newline="")) as fh:
                yield from enumerate(fh, 1)
        except UnicodeDecodeError as exc:
            raise InputError(f"work-list file {path} is not UTF-8 text ({exc.reason}): give a text, JSONL, CSV "
                             "or Parquet file") from None
        except (OSError, EOFError) as exc:
            raise InputError(f"work-list file {path} cannot be read: {exc}") from None

    def _records(self, name: str, *, check: bool = False) -> Iterator[str | None]:
        """The values of one text/JSONL/CSV part in order, one per row."""
        kind = self._kinds[name]
        if kind == "text":
            for _, line in self._lines(name):
                line = line.strip()
                if line and not line.startswith("#"):
                    yield line
        elif kind == "jsonl":
            yield from self._jsonl(name, check=check)
        else:
            yield from self._csv(name, delimiter="\t" if kind == "tsv" else ",")

    def _jsonl(self, name: str, *, check: bool) -> Iterator[str | None]:
        first = True
        for number, line in self._lines(name):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise InputError(f"work-list file {name} line {number} is not JSON ({exc}); "
                                 "JSON Lines holds one object a line") from None
            if not isinstance(obj, dict):
                raise InputError(f"work-list file {name} line {number} holds a JSON {type(obj).__name__}, "
                                 f"not an object with a {self.column!r} field")
            if first and check and self.column not in obj:
                raise self._missing_column(f"{name} (line {number})", list(obj), "fields")
            first = False
            value = obj.get(self.column)
            if value is not None and not isinstance(value, str):
                raise InputError(f"work-list file {name} line {number}: {self.column!r} holds "
                                 f"{type(value).__name__} {value!r}, not text")
            yield value

    def _csv(self, name: str, *, delimiter: str) -> Iterator[str | None]:
        import csv

        lines = (line for _, line in self._lines(name))
        reader = csv.reader(lines, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return
        header = [h.strip() for h in header]
        if self.column not in header:
            raise self._missing_column(name, header, "columns")
        at = header.index(self.column)
        try:
            for row in reader:
                if not row:
                    continue
                value = row[at].strip() if at < len(row) else ""
                yield value or None
        except csv.Error as exc:
            raise InputError(f"work-list file {name} line {reader.line_num} is not CSV: {exc}") from None

    def parts(self) -> list[Part]:
        return list(self._parts)

    def identity(self) -> JSONObject:
        return {
            "source": str(self._source.resolve()),
            "column": self.column,
            "parts": [[p.name, p.size] for p in self._parts],
        }

    def iter_rows(self, part_index: int, start_row: int = 0) -> Iterator[tuple[int, str | None]]:
        part = self._parts[part_index]
        if self._kinds[part.name] != "parquet":
            for row, value in enumerate(self._records(part.name)):
                if row >= start_row:
                    yield row, value
            return
        pf = self._open(part.name)
        try:
            first = 0
            for group in range(pf.metadata.num_row_groups):
                n = pf.metadata.row_group(group).num_rows
                if first + n <= start_row:
                    first += n  # skipped by its footer count: its pages are never read
                    continue
                try:
                    values = pf.read_row_group(group, columns=[self.column]).column(0).to_pylist()
                except Exception as exc:
                    raise InputError(f"work-list part {part.name} row group {group} cannot be read: {exc}") from exc
                skip = max(0, start_row - first)
                for i in range(skip, n):
                    yield first + i, cell_text(values[i], part.name, first + i)
                first += n
        finally:
            pf.close()


def list_parts(directory: Path) -> list[str]:
    """The part files of a directory: its Parquet files when it holds any, else its text/JSONL/CSV files."""
    files = [p.name for p in directory.iterdir() if p.is_file() and file_kind(p.name) is not None]
    parquet = [n for n in files if file_kind(n) == "parquet"]
    return parquet or files


def resolve_release(root: Path, release: str | None) -> Path:
    """The directory of parts: ``root/release`` when given, else root itself when it holds parts,
    else its newest release, the last subdirectory holding parts in name order (release names such
    as ``CC-MAIN-2026-25`` and dates sort by time)."""
    if release:
        path = root / release
        if not path.is_dir():
            listed = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
            raise UsageError(f"--dir {release!r} is not in {root}; releases there: {', '.join(listed) or 'none'}")
        return path
    if list_parts(root):
        return root
    releases = sorted(
        (p for p in root.rglob("*") if p.is_dir() and not p.name.startswith(".") and list_parts(p)),
        key=lambda p: str(p.relative_to(root)),
    )
    if not releases:
        raise InputError(f"{root} holds no work-list files (.parquet, .jsonl, .csv, .txt) in it or below it: "
                         "an empty release is an error")
    return releases[-1]


def open_worklist(
    source: str,
    *,
    release: str | None = None,
    column: str | None = None,
    hub: str | None = None,
    hub_endpoint: str | None = None,
) -> WorkList:
    """Open ``--from``/``--dir``/``--column`` as a work list.

    ``source`` is a local file or directory (text, JSONL, CSV or Parquet: :class:`LocalWorkList`; the
    column defaults to ``url``), or ``domains``/``urls``/a repo id naming a Hub dataset, read
    through :class:`ccrawl.hub.worklist.HubWorkList` (``hub`` and ``hub_endpoint`` pick the hub:
    see :func:`ccrawl.hub.factory.open_repo`; the default is the HuggingFace Hub).
    """
    path = Path(source).expanduser()
    if path.is_dir():
        return LocalWorkList(resolve_release(path, release), column)
    if path.is_file() and source not in SHORTHANDS:
        if release:
            raise UsageError(f"--dir {release!r} picks a release inside a directory; --from {source!r} is one file")
        return LocalWorkList(path, column)
    repo, default_column = SHORTHANDS.get(source, (source, ""))
    column = column or default_column
    if "/" not in repo:
        raise UsageError(f"--from {source!r} is neither a local directory nor domains, urls or a dataset repo id")
    if not column:
        raise UsageError(f"--from {repo}: --column must name the column holding the URLs or domains")
    from ccrawl.hub.factory import open_repo

    return HubWorkList(open_repo(repo, hub=hub, endpoint=hub_endpoint), column, release)
