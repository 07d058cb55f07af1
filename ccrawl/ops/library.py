"""Operations over the dataset library: list, du, verify, gc and scan (``ccrawl library ...``).

Every operation takes the library root as ``root`` and narrows with ``crawl`` (the ``-c`` forms,
read against the crawls the library holds: an ID, a comma list, a year, ``latest``, an integer N
for the newest N, ``all``), ``kind`` and ``format``. Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

from ccrawl.errors import UsageError
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, ReadPath, Value, WritePath
from ccrawl.ops.context import OpContext
from ccrawl.output import format_size
from ccrawl.store.library import Artifact, Library, layout_of, sha256_of, utc_now

Record = dict[str, Any]
Notice = Callable[[str], None]

LIST_COLUMNS = ("path", "crawl", "kind", "format", "size", "sha256", "written", "ccrawl")
VERIFY_COLUMNS = ("path", "problem", "size", "recorded_size", "sha256", "recorded_sha256")
GC_COLUMNS = ("action", "path", "crawl", "kind", "format", "size", "written")
SCAN_COLUMNS = ("path", "status", "crawl", "kind", "format", "size", "sha256")
#: Problems that fail ``library verify`` (exit 1); ``untracked`` is reported but is not one.
FAILURES = ("missing", "resized", "corrupt")


def _quiet(_: str) -> None:
    return None


def select_crawls(spec: str | None, present: Iterable[str]) -> set[str] | None:
    """The crawls ``spec`` names among ``present``; None means every crawl."""
    if not spec or spec.strip() == "all":
        return None
    have = sorted(set(present), reverse=True)  # CC-MAIN-YYYY-WW sorts by date
    chosen: set[str] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part == "latest":
            chosen.update(have[:1])
        elif part.isdigit() and len(part) == 4:
            chosen.update(c for c in have if c.split("-")[2] == part)
        elif part.isdigit():
            chosen.update(have[: int(part)])
        else:
            chosen.add(part)
    return chosen


def _selected(
    entries: Iterable[Artifact], crawl: str | None, kind: str | None, fmt: str | None,
    present: Iterable[str] = (),
) -> list[Artifact]:
    rows = list(entries)
    crawls = select_crawls(crawl, [*(a.crawl for a in rows), *present])
    return sorted(
        (a for a in rows
         if (crawls is None or a.crawl in crawls) and (not kind or a.kind == kind) and (not fmt or a.format == fmt)),
        key=lambda a: a.path,
    )


@operation("library.list", summary="Artifacts the library manifest records", columns=LIST_COLUMNS)
def library_list(
    root: ReadPath[str],
    crawl: Value[str | None] = None,
    kind: Value[str | None] = None,
    format: Value[str | None] = None,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
) -> Iterator[Record]:
    """One row per recorded artifact, by path; ``limit`` caps the rows (0 = all)."""
    chosen = _selected(Library(root).load().values(), crawl, kind, format)
    for artifact in chosen[:limit] if limit > 0 else chosen:
        yield artifact.record()


def human_size(size: int) -> str:
    """``1536`` -> ``1.5 KiB``."""
    return format_size(size)


@operation("library.du", summary="Library size per crawl, kind or format, with a total row",
           columns=("crawl", "files", "bytes", "size"))
def library_du(
    root: ReadPath[str],
    by: Value[str] = "crawl",
    crawl: Value[str | None] = None,
    kind: Value[str | None] = None,
    format: Value[str | None] = None,
) -> Iterator[Record]:
    """Recorded files and bytes per group; a ``total`` row follows when there is more than one group.

    The column holding the group is named after ``by`` (``crawl``, ``kind`` or ``format``). Sizes
    are the manifest's: a file the manifest does not know is not counted (``library scan`` adds it).
    """
    if by not in ("crawl", "kind", "format"):
        raise UsageError(f"--by {by!r}: group by crawl, kind or format")
    groups: dict[str, list[int]] = {}
    for artifact in _selected(Library(root).load().values(), crawl, kind, format):
        tally = groups.setdefault(getattr(artifact, by), [0, 0])
        tally[0] += 1
        tally[1] += artifact.size
    for name in sorted(groups):
        files, size = groups[name]
        yield {by: name, "files": files, "bytes": size, "size": human_size(size)}
    if len(groups) > 1:
        files, size = sum(g[0] for g in groups.values()), sum(g[1] for g in groups.values())
        yield {by: "total", "files": files, "bytes": size, "size": human_size(size)}


def _check(library: Library, artifact: Artifact, quick: bool) -> Record | None:
    local = library.locate(artifact.path)
    row: Record = {"path": artifact.path, "recorded_size": artifact.size, "recorded_sha256": artifact.sha256}
    try:
        size = local.stat().st_size
    except FileNotFoundError:
        return {**row, "problem": "missing"}
    if size != artifact.size:
        return {**row, "problem": "resized", "size": size}
    if quick:
        return None
    digest = sha256_of(local)
    return None if digest == artifact.sha256 else {**row, "problem": "corrupt", "size": size, "sha256": digest}


@operation("library.verify", summary="Compare the library's files against its manifest", columns=VERIFY_COLUMNS)
def library_verify(
    root: ReadPath[str],
    quick: Value[bool] = False,
    crawl: Value[str | None] = None,
    kind: Value[str | None] = None,
    format: Value[str | None] = None,
    workers: Limit[int] = 4,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One row per problem: ``missing``, ``resized``, ``corrupt`` (a failure) or ``untracked`` (not one).

    ``quick`` checks existence and size only. Files are hashed by ``workers`` threads (hashlib
    releases the GIL). Rows come in path order, problems with recorded artifacts first, then
    untracked files (those that fit the layout and are not in the manifest). A summary line goes
    to the context's notice (none without a context); the caller decides the exit code from the
    ``problem`` column (:data:`FAILURES`).
    """
    say = ctx.notice if ctx is not None else _quiet
    library = Library(root)
    entries = library.load()
    on_disk = [(rel, layout_of(rel) or ("", "", "")) for rel in library.walk() if rel not in entries]
    chosen = _selected(entries.values(), crawl, kind, format, present=(place[0] for _, place in on_disk))
    counts = dict.fromkeys((*FAILURES, "untracked"), 0)
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for found in pool.map(lambda a: _check(library, a, quick), chosen):
            if found is not None:
                counts[found["problem"]] += 1
                yield found
    crawls = select_crawls(crawl, [*(a.crawl for a in entries.values()), *(place[0] for _, place in on_disk)])
    for rel, (c, k, f) in on_disk:
        if (crawls is None or c in crawls) and (not kind or k == kind) and (not format or f == format):
            counts["untracked"] += 1
            yield {"path": rel, "problem": "untracked", "size": library.locate(rel).stat().st_size}
    how = "sizes" if quick else "sizes and sha256"
    say(f"library verify: {len(chosen)} artifacts checked ({how}): "
        + ", ".join(f"{n} {name}" for name, n in counts.items()))


def _emptied_dirs(root: Path, doomed: set[Path]) -> list[Path]:
    """Directories under ``root`` that would hold nothing once ``doomed`` files are gone, deepest first."""
    candidates = {d for p in doomed for d in p.parents if d != root and root in d.parents}
    emptied: set[Path] = set()
    for directory in sorted(candidates, key=lambda d: len(d.parts), reverse=True):
        try:
            contents = [directory / name for name in os.listdir(directory)]
        except FileNotFoundError:
            continue
        if all(c in doomed or c in emptied for c in contents):
            emptied.add(directory)
    return sorted(emptied, key=lambda d: (-len(d.parts), str(d)))


def _gc_plan(
    entries: dict[str, Artifact], older_than: float | None, crawl: str | None, kind: str | None, now: dt.datetime
) -> list[Artifact]:
    chosen = _selected(entries.values(), crawl, kind, None)
    if older_than is not None:
        cutoff = now - dt.timedelta(seconds=older_than)
        chosen = [a for a in chosen if a.written_at < cutoff]
    return chosen


@operation("library.gc", summary="Delete library artifacts older than a cutoff (dry run unless yes)",
           columns=GC_COLUMNS, writes=True)
def library_gc(
    root: WritePath[str],
    older_than: Annotated[float | None, Cap.VALUE, Bounds(0, 10**6)] = None,
    crawl: Value[str | None] = None,
    kind: Value[str | None] = None,
    yes: Value[bool] = False,
    now: Injected[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Artifacts written more than ``older_than`` seconds before ``now`` (and/or of ``crawl``/``kind``).

    Without ``yes`` nothing is touched: the rows (``would delete``) are exactly what the real run
    deletes, directories it would leave empty included. With ``yes``, under the manifest lock, each
    file is deleted and dropped from the manifest, then the emptied directories are removed. A
    recorded file already gone from disk is dropped from the manifest (``would drop``/``dropped``).
    """
    if older_than is None and not crawl and not kind:
        raise UsageError("library gc needs something to select on: --older-than, -c or --kind")
    say = ctx.notice if ctx is not None else _quiet
    library = Library(root)
    when = utc_now() if now is None else dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
    rows: list[Record] = []
    freed = 0

    def plan(entries: dict[str, Artifact]) -> tuple[list[Artifact], list[Path]]:
        chosen = _gc_plan(entries, older_than, crawl, kind, when)
        doomed = {library.locate(a.path) for a in chosen}
        return chosen, _emptied_dirs(library.root, {p for p in doomed if p.exists()})

    def row(artifact: Artifact, present: bool) -> Record:
        verb = ("deleted" if present else "dropped") if yes else ("would delete" if present else "would drop")
        return {"action": verb, **{k: v for k, v in artifact.record().items() if k in GC_COLUMNS}}

    if not yes or not library.manifest_path.exists():  # nothing recorded: do not create a library to gc it
        chosen, dirs = plan(library.load()) if not yes else ([], [])
        for artifact in chosen:
            present = library.locate(artifact.path).exists()
            freed += artifact.size if present else 0
            rows.append(row(artifact, present))
    else:
        with library.transaction() as entries:
            chosen, dirs = plan(entries)
            for artifact in chosen:
                local = library.locate(artifact.path)
                try:
                    local.unlink()
                    present = True
                    freed += artifact.size
                except FileNotFoundError:
                    present = False
                del entries[artifact.path]
                rows.append(row(artifact, present))
            for directory in dirs:
                try:
                    directory.rmdir()
                except OSError:
                    continue  # something new was written there since the plan: keep it
    yield from rows
    for directory in dirs:
        rel = directory.relative_to(library.root).as_posix() + "/"
        yield {"action": "removed" if yes else "would remove", "path": rel}
    if not chosen:
        say("library gc: nothing matches; nothing to collect")
    elif yes:
        say(f"library gc: deleted {len(chosen)} artifacts ({human_size(freed)}) and {len(dirs)} emptied directories")
    else:
        say(f"library gc: dry run: would delete {len(chosen)} artifacts ({human_size(freed)}) and {len(dirs)} "
            "emptied directories; pass --yes to delete them")


@operation("library.scan", summary="Record the library's files on disk into its manifest", columns=SCAN_COLUMNS,
           writes=True)
def library_scan(
    root: WritePath[str],
    rehash: Value[bool] = False,
    workers: Limit[int] = 4,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Hash files that fit the layout and record them; one row per file added or changed.

    A file already recorded at its size is left alone (not even read) unless ``rehash``. Hashing
    happens outside the lock; the results are merged in one locked read-change-write, so a
    download recording at the same time is not lost. A file found by a scan gets its mtime as
    ``written`` and no ``ccrawl`` version (which version wrote it is not known).
    """
    say = ctx.notice if ctx is not None else _quiet
    library = Library(root)
    known = library.load()
    todo: list[tuple[str, int]] = []
    on_disk = library.walk()
    for rel in on_disk:
        size = library.locate(rel).stat().st_size
        entry = known.get(rel)
        if rehash or entry is None or entry.size != size:
            todo.append((rel, size))

    def hashed(item: tuple[str, int]) -> Artifact:
        rel, size = item
        local = library.locate(rel)
        written = dt.datetime.fromtimestamp(local.stat().st_mtime, dt.UTC)
        return library.artifact(rel, size=size, sha256=sha256_of(local), written=written, version=None)

    with ThreadPoolExecutor(max(1, workers)) as pool:
        found = list(pool.map(hashed, todo))
    rows: list[Record] = []
    with library.transaction() if found else contextlib.nullcontext(dict(known)) as entries:
        for artifact in found:
            before = entries.get(artifact.path)
            if before is None:
                status = "added"
            elif before.size == artifact.size and before.sha256 == artifact.sha256:
                continue  # unchanged: keep the original record (its writer and time)
            else:
                status = "updated"
            entries[artifact.path] = artifact
            rows.append({"status": status, **artifact.record()})
    missing = sum(1 for rel in known if not library.locate(rel).exists())
    say(f"library scan: {len(on_disk)} files fit the layout, {len(todo)} hashed, {len(rows)} recorded"
        + (f"; {missing} recorded artifacts are missing from disk (library verify lists them)" if missing else ""))
    yield from rows
