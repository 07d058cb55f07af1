"""The work list of a recrawl: a published set of Parquet parts, read one column at a time.

One interface, :class:`WorkList`, whatever holds the parts. This module implements it over a
local directory (:class:`LocalWorkList`); a Hub dataset is :class:`ccrawl.datasets.worklist.HubWorkList`
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
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ccrawl.errors import InputError, UsageError

#: ``--from`` shorthands: (dataset repo, default column).
SHORTHANDS: dict[str, tuple[str, str]] = {
    "domains": ("open-index/ccrawl-domains", "domain"),
    "urls": ("open-index/ccrawl-urls", "url"),
}

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


def to_url(value: str) -> str:
    """A work-list value as a URL: a domain becomes its home page ``https://<domain>/``."""
    value = value.strip()
    if "://" in value:
        return value
    return f"https://{value.strip('/')}/"


def check_column_type(arrow_type: Any, column: str, where: str) -> None:
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


def cell_text(value: Any, part: str, row: int) -> str | None:
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


class WorkList(Protocol):
    """What the feeder needs from a work list, wherever its parts live."""

    column: str

    def parts(self) -> list[Part]:
        """The listed parts in walking order."""
        ...

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match: source, column, and every part's name and size."""
        ...

    def iter_rows(self, part_index: int, start_row: int = 0) -> Iterator[tuple[int, str | None]]:
        """(row offset, value) from ``start_row`` to the end of one part; None for a null cell."""
        ...


def identity_digest(identity: dict[str, Any]) -> str:
    """A short stable digest of a work-list identity, for messages and file names."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


class LocalWorkList:
    """A release held as Parquet parts in a local directory."""

    def __init__(self, directory: str | os.PathLike[str], column: str) -> None:
        self.directory = Path(directory)
        self.column = COLUMN_SHORTHANDS.get(column, column)
        if not self.directory.is_dir():
            raise UsageError(f"--from: {self.directory} is not a directory of Parquet parts")
        names = sorted(
            (p.name for p in self.directory.iterdir() if p.is_file() and p.name.endswith(".parquet")),
            key=part_sort_key,
        )
        if not names:
            raise InputError(
                f"{self.directory} holds no .parquet parts: an empty release is not a finished work list; "
                "check --from/--dir"
            )
        self._parts = [self._describe(name) for name in names]

    def _open(self, name: str) -> Any:
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(self.directory / name)
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(f"work-list part {self.directory / name} is listed but cannot be read: {exc}") from exc

    def _describe(self, name: str) -> Part:
        pf = self._open(name)
        try:
            if self.column not in pf.schema_arrow.names:
                raise UsageError(
                    f"--column {self.column!r} is not in {name}; its columns are: {', '.join(pf.schema_arrow.names)}"
                )
            check_column_type(pf.schema_arrow.field(self.column).type, self.column, name)
            rows = pf.metadata.num_rows
        finally:
            pf.close()
        return Part(name, (self.directory / name).stat().st_size, rows)

    def parts(self) -> list[Part]:
        return list(self._parts)

    def identity(self) -> dict[str, Any]:
        return {
            "source": str(self.directory.resolve()),
            "column": self.column,
            "parts": [[p.name, p.size] for p in self._parts],
        }

    def iter_rows(self, part_index: int, start_row: int = 0) -> Iterator[tuple[int, str | None]]:
        part = self._parts[part_index]
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
    if any(p.name.endswith(".parquet") for p in root.iterdir() if p.is_file()):
        return root
    releases = sorted(
        (p for p in root.rglob("*") if p.is_dir() and any(c.name.endswith(".parquet") for c in p.iterdir())),
        key=lambda p: str(p.relative_to(root)),
    )
    if not releases:
        raise InputError(f"{root} holds no .parquet parts in it or below it: an empty release is an error")
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

    ``source`` is a local directory, or ``domains``/``urls``/a repo id naming a Hub dataset, read
    through :class:`ccrawl.datasets.worklist.HubWorkList` (``hub`` and ``hub_endpoint`` pick the hub:
    see :func:`ccrawl.datasets.hub.open_repo`; the default is the HuggingFace Hub).
    """
    path = Path(source).expanduser()
    if path.is_dir():
        if not column:
            raise UsageError("--column is required with a local --from directory: name the column holding the work")
        return LocalWorkList(resolve_release(path, release), column)
    repo, default_column = SHORTHANDS.get(source, (source, ""))
    column = column or default_column
    if "/" not in repo:
        raise UsageError(f"--from {source!r} is neither a local directory nor domains, urls or a dataset repo id")
    if not column:
        raise UsageError(f"--from {repo}: --column must name the column holding the URLs or domains")
    from ccrawl.datasets.hub import open_repo
    from ccrawl.datasets.worklist import HubWorkList

    return HubWorkList(open_repo(repo, hub=hub, endpoint=hub_endpoint), column, release)
