"""The dataset library: a tree of kept files and ``library.json``, the manifest that records each one.

Layout under the library root::

    <crawl>/<kind>/<file>             a raw archive as Common Crawl publishes it (format "raw")
    <crawl>/<format>/<kind>/<file>    processed output (format "parquet", "jsonl", ...)
    library.json                      the manifest: one entry per artifact
    library.lock                      taken (fcntl, exclusive) for every read-change-write

Each manifest entry holds the artifact's path (relative, ``/``-separated), crawl, kind, format,
size, sha256, when it was written (UTC, ISO 8601) and the ccrawl version that wrote it.

Writers change the manifest only inside :meth:`Library.transaction`, which locks ``library.lock``,
re-reads ``library.json``, lets the caller change the entries, and writes the result to a temp
file that is fsynced and renamed over ``library.json``. Two processes filling one library
therefore queue on the lock and each sees the other's records; a reader that does not lock
always sees one complete manifest, never a half-written one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ccrawl import __version__, durable
from ccrawl.errors import CcrawlError, InputError
from ccrawl.jsontypes import Record

MANIFEST = "library.json"
LOCK = "library.lock"
MANIFEST_VERSION = 1

#: A crawl directory name: ``CC-MAIN-2025-26``, ``CC-NEWS-2024-01``.
CRAWL_RE = re.compile(r"^CC-[A-Z]+-\d{4}-\d{2}$")
#: A kind or format directory name: lowercase words, digits and dashes.
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: Formats of processed output (the ``<format>`` level of a four-level path).
PROCESSED_FORMATS = ("parquet", "jsonl")
RAW = "raw"
#: Suffixes of files still being written (a download's ``.part``, a writer's ``.tmp``).
IN_PROGRESS = (".part", ".tmp", ".lock")


@dataclass(frozen=True, slots=True)
class Artifact:
    """One manifest entry. ``ccrawl`` is None when the writer is unknown (found by ``library scan``)."""

    path: str
    crawl: str
    kind: str
    format: str
    size: int
    sha256: str
    written: str
    ccrawl: str | None = __version__

    def record(self) -> Record:
        return asdict(self)

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Artifact:
        return cls(
            path=str(row["path"]), crawl=str(row["crawl"]), kind=str(row["kind"]), format=str(row["format"]),
            size=int(row["size"]), sha256=str(row["sha256"]), written=str(row["written"]),
            ccrawl=None if row.get("ccrawl") is None else str(row["ccrawl"]),
        )

    @property
    def written_at(self) -> dt.datetime:
        return parse_time(self.written)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def format_time(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_time(text: str) -> dt.datetime:
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


# -- layout ---------------------------------------------------------------------------------------


def layout_of(rel: str) -> tuple[str, str, str] | None:
    """``(crawl, kind, format)`` of a library-relative path, or None when it does not fit the layout."""
    parts = rel.split("/")
    name = parts[-1]
    if name.startswith(".") or name.endswith(IN_PROGRESS) or not CRAWL_RE.match(parts[0]):
        return None
    if len(parts) == 3 and NAME_RE.match(parts[1]):
        return parts[0], parts[1], RAW
    if len(parts) == 4 and parts[1] in PROCESSED_FORMATS and NAME_RE.match(parts[2]):
        return parts[0], parts[2], parts[1]
    return None


def relpath(crawl: str, kind: str, name: str, fmt: str = RAW) -> str:
    """The library-relative path of an artifact; refuses names that would not fit the layout."""
    rel = f"{crawl}/{kind}/{name}" if fmt == RAW else f"{crawl}/{fmt}/{kind}/{name}"
    if "/" in name or layout_of(rel) != (crawl, kind, fmt):
        raise InputError(f"{rel!r} does not fit the library layout <crawl>/<kind>/<file> or "
                         f"<crawl>/<format>/<kind>/<file> (crawl like CC-MAIN-2025-26, format one of "
                         f"{', '.join(PROCESSED_FORMATS)})")
    return rel


#: Directory names in a Common Crawl bucket path -> the download kind they hold.
_SEGMENT_DIRS = {"warc": "warc", "wat": "wat", "wet": "wet", "robotstxt": "robotstxt",
                 "crawldiagnostics": "non200responses"}
_CRAWL_IN_PATH = re.compile(r"(?:^|/)(?:crawl=)?(CC-[A-Z]+-\d{4}-\d{2})(?:/|$)")


def download_relpath(path: str, kind: str | None = None) -> str:
    """Where a Common Crawl bucket path lands in the library: ``<crawl>/<kind>/<file>``.

    The crawl is read from the path; the kind is the one asked for, or read from the path for
    ``download -`` (``segments/*/warc/`` is warc, ``crawldiagnostics`` is non200responses,
    ``cc-index/collections`` is cc-index, ``cc-index/table`` is cc-index-table). A columnar part
    keeps its subset in its name (``subset=warc/part-0.parquet`` -> ``warc.part-0.parquet``)
    because Common Crawl reuses part names across subsets.
    """
    rel = path.split("://", 1)[1].split("/", 1)[1] if "://" in path else path
    parts = [p for p in rel.split("/") if p]
    found = _CRAWL_IN_PATH.search("/".join(parts))
    if not parts or not found:
        raise InputError(f"{path!r}: no crawl ID (CC-MAIN-YYYY-WW) in the path, so it has no place in the library")
    crawl, name = found.group(1), parts[-1]
    if kind is None:
        if parts[:2] == ["cc-index", "table"]:
            kind = "cc-index-table"
        elif parts[:2] == ["cc-index", "collections"]:
            kind = "cc-index"
        elif len(parts) >= 2 and parts[-2] in _SEGMENT_DIRS:
            kind = _SEGMENT_DIRS[parts[-2]]
        else:
            raise InputError(f"{path!r}: cannot tell its kind from the path; download it by kind instead of with -")
    if kind == "cc-index-table":
        subset = next((p.split("=", 1)[1] for p in parts if p.startswith("subset=")), None)
        if subset:
            name = f"{subset}.{name}"
    return relpath(crawl, kind, name)


# -- the manifest -------------------------------------------------------------------------------


class Library:
    """A library root: read the manifest, change it under the lock, place and find artifacts."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK

    def locate(self, rel: str) -> Path:
        return self.root / rel

    def load(self) -> dict[str, Artifact]:
        """The manifest as it is now (no lock needed: it is only ever replaced whole)."""
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text)
            rows = data["artifacts"] if isinstance(data, dict) else None
            if not isinstance(rows, list):
                raise ValueError("no artifacts list")
            return {a.path: a for a in (Artifact.from_record(r) for r in rows)}
        except (ValueError, KeyError, TypeError) as exc:
            raise CcrawlError(
                f"{self.manifest_path}: not a library manifest ({exc}); move it aside and run `ccrawl library scan`"
            ) from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Artifact]]:
        """Lock, load, let the caller change the entries, write them back if they changed."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                entries = self.load()
                before = dict(entries)
                yield entries
                if entries != before:
                    self._write(entries)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _write(self, entries: Mapping[str, Artifact]) -> None:
        body = {
            "version": MANIFEST_VERSION,
            "artifacts": [entries[k].record() for k in sorted(entries)],
        }
        fd, tmp = tempfile.mkstemp(prefix=".library.", suffix=".tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(body, fh, indent=1)
                fh.write("\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.manifest_path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        durable.fsync_dir(self.root)

    def record(self, artifacts: Iterable[Artifact]) -> None:
        """Add or replace entries in one locked read-change-write."""
        batch = list(artifacts)
        if not batch:
            return
        with self.transaction() as entries:
            for artifact in batch:
                entries[artifact.path] = artifact

    def artifact(self, rel: str, *, size: int, sha256: str, written: dt.datetime | None = None,
                 version: str | None = __version__) -> Artifact:
        """An entry for ``rel`` (which must fit the layout)."""
        placed = layout_of(rel)
        if placed is None:
            raise InputError(f"{rel!r} does not fit the library layout")
        crawl, kind, fmt = placed
        return Artifact(rel, crawl, kind, fmt, size, sha256, format_time(written or utc_now()), version)

    def walk(self) -> list[str]:
        """Library-relative paths of the files on disk that fit the layout, sorted."""
        found: list[str] = []
        for here, dirs, files in os.walk(self.root):
            rel_dir = Path(here).relative_to(self.root).as_posix()
            depth = 0 if rel_dir == "." else rel_dir.count("/") + 1
            if depth >= 3:  # the deepest layout is crawl/format/kind/file: nothing below counts
                dirs[:] = []
            for name in files:
                rel = name if depth == 0 else f"{rel_dir}/{name}"
                if layout_of(rel) is not None:
                    found.append(rel)
        return sorted(found)


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file on disk (scan and verify; downloads hash as the bytes stream)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _file_time(path: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)


def record_downloads(
    library: Library, rows: Iterable[dict[str, Any]], *, batch: int = 64, interval: float = 2.0
) -> Generator[dict[str, Any], None, None]:
    """Pass ``download`` rows through, recording each finished file in the manifest.

    The checksum recorded is the one ``download`` computed as the bytes streamed (a resumed
    ``.part`` has its existing bytes hashed first, so it covers the whole file). Records are
    written in batches (``batch`` files or ``interval`` seconds, and whatever is left when the
    stream ends or is closed early) so a crawl of thousands of files does not rewrite the
    manifest thousands of times. A file that ``exists`` and is recorded at its size gets the
    recorded sha256 in its row; one that exists but was never recorded (a run killed between
    the rename and the record) is the one case hashed from disk, once, with its mtime as
    ``written`` and the writer left unknown.
    """
    known = library.load()
    pending: list[Artifact] = []
    last = time.monotonic()
    try:
        for row in rows:
            status = str(row.get("status", ""))
            if status in ("downloaded", "resumed", "exists"):
                local = Path(str(row["file"]))
                rel = local.relative_to(library.root).as_posix()
                size = int(row["bytes"])
                entry = known.get(rel)
                if status != "exists":
                    pending.append(library.artifact(rel, size=size, sha256=str(row["sha256"])))
                elif entry is not None and entry.size == size:
                    row = {**row, "sha256": entry.sha256}
                else:
                    digest = sha256_of(local)
                    pending.append(library.artifact(rel, size=size, sha256=digest, written=_file_time(local),
                                                    version=None))
                    row = {**row, "sha256": digest}
            if pending and (len(pending) >= batch or time.monotonic() - last >= interval):
                library.record(pending)
                pending, last = [], time.monotonic()
            yield row
    finally:
        library.record(pending)
