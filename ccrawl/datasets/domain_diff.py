"""``domains diff``: domains added, removed and shared between two published releases of the domain mirror.

Only the ``domain`` column of each shard is read, over ranged requests (:class:`~ccrawl.hub.worklist.
RangeFile`): the footer, then that column's chunks, never the rank fields. Shards are read ``workers`` at
a time; the comparison is Arrow's hash-based ``is_in`` over the two columns (no Python per domain), and
the added domains keep the newer release's rank order.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl import durable
from ccrawl.datasets.publish_domains import read_ledger, shard_index
from ccrawl.errors import InputError, UsageError
from ccrawl.hub.repo import DatasetRepo, HubFile
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(slots=True)
class DiffResult:
    older: str
    newer: str
    older_domains: int = 0
    newer_domains: int = 0
    added: int = 0
    removed: int = 0
    shared: int = 0
    bytes_read: int = 0
    dataset_bytes: int = 0

    def record(self) -> Record:
        return {"from": self.older, "to": self.newer, "from_domains": self.older_domains,
                "to_domains": self.newer_domains, "added": self.added, "removed": self.removed,
                "shared": self.shared, "bytes_read": self.bytes_read, "dataset_bytes": self.dataset_bytes}


def published_releases(repo: DatasetRepo) -> list[str]:
    """Release ids with shards under ``data/``, oldest first."""
    from ccrawl.commoncrawl.webgraph import release_sort_key

    found = {f.path.split("/")[1] for f in repo.list_files("data")
             if f.path.count("/") == 2 and shard_index(f.path) is not None}
    return sorted(found, key=release_sort_key)


def pick_releases(repo: DatasetRepo, older: str, newer: str) -> tuple[str, str]:
    """(older, newer): as given, else the two newest releases the ledger marks complete."""
    listed = published_releases(repo)
    for name, flag in ((older, "--from"), (newer, "--to")):
        if name and name not in listed:
            raise UsageError(f"{flag} {name!r} is not published in {repo.repo_id}; releases there: "
                             f"{', '.join(listed) or 'none'}")
    if older and newer:
        return older, newer
    ledger = read_ledger(repo)
    complete = [r for r in ledger.ordered() if ledger.rows[r]["complete"] and r in listed]  # newest first
    if not newer:
        if not complete:
            raise UsageError(f"{repo.repo_id} has no complete release to diff; name them with --from and --to")
        newer = complete[0]
    if not older:
        from ccrawl.commoncrawl.webgraph import release_sort_key

        before = [r for r in complete if release_sort_key(r) < release_sort_key(newer)]
        if not before:
            raise UsageError(f"{repo.repo_id}: no complete release older than {newer} to diff against; "
                             f"complete: {', '.join(complete) or 'none'}")
        older = before[0]
    return older, newer


def _domains(repo: DatasetRepo, f: HubFile) -> tuple[pa.ChunkedArray, int]:
    """The ``domain`` column of one shard and the bytes fetched to read it."""
    import pyarrow.parquet as pq

    from ccrawl.hub.worklist import RangeFile

    fh = RangeFile(repo, f.path, f.size)
    try:  # over Python bytes: read on this thread, closed here (docs/datasets.md)
        with fh, pq.ParquetFile(fh) as pf:
            column = pf.read(columns=["domain"], use_threads=False).column(0)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{repo.repo_id}/{f.path}: the domain column cannot be read ({exc}); "
                         "run publish verify --graph") from exc
    return column, fh.bytes_fetched


def release_domains(repo: DatasetRepo, release: str, *, workers: int) -> tuple[pa.StringArray, int, int]:
    """(every domain of ``release`` in rank order, bytes read, bytes the release holds)."""
    import pyarrow as pa

    files = [f for f in repo.list_files(f"data/{release}") if shard_index(f.path) is not None]
    if not files:
        raise InputError(f"{repo.repo_id}: release {release} has no shards")
    files.sort(key=lambda f: shard_index(f.path) or 0)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ccrawl-diff") as pool:
        got = list(pool.map(lambda f: _domains(repo, f), files))
    chunks = [c for column, _ in got for c in column.chunks]
    domains = pa.chunked_array(chunks, pa.string()).combine_chunks() if chunks else pa.array([], pa.string())
    return domains, sum(n for _, n in got), sum(f.size for f in files)


def diff_releases(repo: DatasetRepo, older: str, newer: str, *, workers: int = 0,
                  added_out: str | None = None) -> DiffResult:
    """Count what changed from ``older`` to ``newer``; write the added domains to ``added_out`` when given."""
    import pyarrow.compute as pc

    workers = workers or max(1, min(8, (os.cpu_count() or 1) * 2))
    if workers < 0:
        raise UsageError("--workers must be 0 (a default from the CPU count) or more")
    old, read_old, size_old = release_domains(repo, older, workers=workers)
    new, read_new, size_new = release_domains(repo, newer, workers=workers)
    in_old = pc.is_in(new, value_set=old)
    in_new = pc.is_in(old, value_set=new)
    out = DiffResult(older, newer, len(old), len(new), bytes_read=read_old + read_new,
                     dataset_bytes=size_old + size_new)
    out.shared = int(pc.sum(in_old).as_py() or 0)
    out.added = len(new) - out.shared
    out.removed = len(old) - int(pc.sum(in_new).as_py() or 0)
    if added_out:
        added = new.filter(pc.invert(in_old))
        path = Path(added_out)
        with durable.writing(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for start in range(0, len(added), 65536):
                chunk = added.slice(start, 65536).to_pylist()
                fh.write("".join(f"{d}\n" for d in chunk))
    return out
