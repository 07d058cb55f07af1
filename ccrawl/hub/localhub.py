"""A hub in a local directory: atomic commits by building a snapshot beside the live one and swapping a link.

Layout under the hub root (``<kind>`` is ``datasets`` or ``models``)::

    <root>/<kind>/<owner>/<name>                 symlink -> the head snapshot: a plain directory of files,
                                                 readable by anything (DuckDB, ``datasets.load_dataset``)
    <root>/.hub/<kind>/<owner>/<name>/snapshots/<commit>/...   one directory per kept commit
    <root>/.hub/<kind>/<owner>/<name>/commits/<commit>.json    parent, message, time, {path: size, sha256}
    <root>/.hub/<kind>/<owner>/<name>/lock                     flock'd by a committer

A commit hard-links the unchanged files of the head snapshot into a temporary directory, writes the
added files, renames the directory into ``snapshots/`` and then replaces the symlink with
``os.replace`` -- a single atomic rename, so a reader sees the old tree or the new one, never a mix,
and a committer killed at any point leaves the head where it was. Commits are serialised by ``flock``
on the lock file, so processes on one machine (or the fake Hub's server) can share a root. The last
:data:`KEEP_SNAPSHOTS` snapshots are kept for readers still walking an older tree.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from ccrawl.durable import in_progress
from ccrawl.errors import InputError, NothingMatched, UsageError
from ccrawl.hub.repo import Add, CommitConflict, DatasetRepo, HubFile, normalize_paths

KEEP_SNAPSHOTS = 4


class CommitRecord(TypedDict):
    """One commit as ``commits/<id>.json`` holds it; ``files`` maps each path to ``[size, sha256]``."""

    id: str
    parent: str | None
    message: str
    time_ms: int
    files: dict[str, list[int | str]]


@dataclass(frozen=True, slots=True)
class FileMeta:
    """What a commit records of one file."""

    size: int
    sha256: str


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class LocalRepo(DatasetRepo):
    """A repo under a local hub root (see the module docstring for the layout)."""

    def __init__(
        self, root: Path, repo_id: str, *, repo_type: str = "dataset", keep_snapshots: int = KEEP_SNAPSHOTS
    ) -> None:
        if repo_id.count("/") != 1 or not all(repo_id.split("/")):
            raise UsageError(f"repo id {repo_id!r} must be owner/name")
        self.root = Path(root)
        self.repo_id = repo_id
        self.repo_type = repo_type
        kind = f"{repo_type}s"
        self.link = self.root / kind / repo_id
        self.meta = self.root / ".hub" / kind / repo_id
        self.keep_snapshots = max(1, keep_snapshots)

    # -- repo ------------------------------------------------------------------------------------

    def exists_repo(self) -> bool:
        return self.link.is_symlink() and self.link.exists()

    def create(self, *, private: bool = False) -> None:
        (self.meta / "snapshots").mkdir(parents=True, exist_ok=True)
        (self.meta / "commits").mkdir(parents=True, exist_ok=True)
        self.link.parent.mkdir(parents=True, exist_ok=True)
        with self._locked():
            if self.exists_repo():
                return
            if private:
                (self.meta / "private").write_text("1\n")
            self._write_commit({}, {}, message="initial commit", parent=None)

    def delete_repo(self) -> None:
        self.link.unlink()
        shutil.rmtree(self.meta, ignore_errors=True)

    def is_private(self) -> bool:
        return (self.meta / "private").exists()

    def head(self) -> str | None:
        return self._read_head()

    def _read_head(self) -> str | None:
        if not self.link.is_symlink():
            return None
        return Path(os.readlink(self.link)).name

    def snapshot_dir(self, revision: str | None = None) -> Path:
        """The directory holding the tree of ``revision`` (a commit id, or None/'main' for the head)."""
        commit = self.resolve(revision)
        path = self.meta / "snapshots" / commit
        if not path.is_dir():
            raise NothingMatched(f"{self.repo_id}: revision {revision} is no longer kept on this hub")
        return path

    def resolve(self, revision: str | None = None) -> str:
        """A revision ('main', None, a commit id or a unique prefix of one) as a full commit id."""
        head = self._read_head()
        if head is None:
            raise NothingMatched(f"repo {self.repo_id} does not exist on the local hub {self.root}")
        if revision in (None, "main", "HEAD"):
            return head
        assert revision is not None
        matches = [p.stem for p in (self.meta / "commits").glob(f"{revision}*.json")]
        if len(matches) != 1:
            raise NothingMatched(f"{self.repo_id}: no single commit matches revision {revision!r}")
        return matches[0]

    def commit_record(self, revision: str | None = None) -> CommitRecord:
        """The JSON record of a commit: id, parent, message, time_ms, files {path: [size, sha256]}."""
        commit = self.resolve(revision)
        record: CommitRecord = json.loads((self.meta / "commits" / f"{commit}.json").read_text())
        return record

    def history(self, revision: str | None = None) -> list[CommitRecord]:
        """The commit records from the first commit to ``revision`` (default the head), oldest first.

        Only commits the branch really went through: a committer killed after writing its record but
        before the link swap leaves a record no head ever pointed at, and it is not part of the history.
        """
        commits = self.meta / "commits"
        chain = [self.commit_record(revision)]
        while chain[-1].get("parent"):
            chain.append(json.loads((commits / f"{chain[-1]['parent']}.json").read_text()))
        chain.reverse()
        return chain

    def manifest(self, revision: str | None = None) -> dict[str, FileMeta]:
        """Every file of a revision with its size and sha256."""
        files = self.commit_record(revision)["files"]
        return {path: FileMeta(int(v[0]), str(v[1])) for path, v in files.items()}

    # -- reads -----------------------------------------------------------------------------------

    def list_files(self, prefix: str = "", revision: str | None = None) -> list[HubFile]:
        prefix = prefix.strip("/")
        out = [
            HubFile(path, meta.size, meta.sha256)
            for path, meta in self.manifest(revision).items()
            if not prefix or path == prefix or path.startswith(prefix + "/")
        ]
        return sorted(out, key=lambda f: f.path)

    def local_path(self, path: str, revision: str | None = None) -> Path:
        """Where the file ``path`` of ``revision`` is on disk (for servers that stream it)."""
        (clean,) = normalize_paths([path])
        full = self.snapshot_dir(revision) / clean
        if not full.is_file():
            raise NothingMatched(f"{self.repo_id}: no file {clean}")
        return full

    def read_range(self, path: str, start: int, length: int) -> bytes:
        if start < 0 or length < 0:
            raise UsageError(f"bad range {start}+{length} for {path}")
        with self.local_path(path).open("rb") as f:
            f.seek(start)
            return f.read(length)

    def exists(self, paths: Sequence[str]) -> dict[str, bool]:
        files = self.manifest()
        return {p: p.strip("/") in files for p in paths}

    def download(self, path: str, dest: Path) -> Path:
        src = self.local_path(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = in_progress(dest)
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
        return dest

    # -- writes ----------------------------------------------------------------------------------

    def commit(
        self,
        adds: Sequence[Add],
        deletes: Sequence[str] = (),
        *,
        message: str,
        parent: str | None = None,
    ) -> str:
        if not message:
            raise UsageError("a commit needs a message")
        add_paths = normalize_paths(a.path_in_repo for a in adds)
        del_paths = normalize_paths(deletes)
        if not self.exists_repo():
            raise NothingMatched(f"repo {self.repo_id} does not exist on the local hub {self.root}: create it first")
        with self._locked():
            head = self._read_head()
            assert head is not None
            if parent is not None and not head.startswith(parent):
                raise CommitConflict(f"{self.repo_id}: the branch moved to {head[:12]} since {parent[:12]}")
            files = dict(self.commit_record(head)["files"])
            missing = [p for p in del_paths if p not in files and not any(f.startswith(p + "/") for f in files)]
            if missing:
                raise InputError(f"{self.repo_id}: cannot delete {', '.join(missing)}: not in the repo")
            for p in del_paths:
                for f in [f for f in files if f == p or f.startswith(p + "/")]:
                    del files[f]
            sources = dict(zip(add_paths, adds, strict=True))
            return self._write_commit(files, sources, message=message, parent=head)

    def _write_commit(
        self, files: dict[str, list[int | str]], sources: dict[str, Add], *, message: str, parent: str | None
    ) -> str:
        """Build the new snapshot beside the old one and swap the link (caller holds the lock)."""
        snapshots = self.meta / "snapshots"
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=snapshots))
        try:
            old = snapshots / parent if parent else None
            for path in files:
                if path in sources:
                    continue
                target = tmp / path
                target.parent.mkdir(parents=True, exist_ok=True)
                assert old is not None
                os.link(old / path, target)
            for path, add in sources.items():
                target = tmp / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(add.source, bytes):
                    target.write_bytes(add.source)
                else:
                    shutil.copyfile(add.source, target)
                files[path] = [target.stat().st_size, sha256_file(target)]
            now_ms = time.time_ns() // 1_000_000
            blob = json.dumps([parent, message, now_ms, sorted(files.items())], separators=(",", ":"))
            commit = hashlib.sha1(blob.encode() + os.urandom(8)).hexdigest()
            record = CommitRecord(id=commit, parent=parent, message=message, time_ms=now_ms, files=files)
            os.replace(tmp, snapshots / commit)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        commits = self.meta / "commits"
        tmp_record = commits / f".{commit}.json.tmp"
        tmp_record.write_text(json.dumps(record, sort_keys=True))
        os.replace(tmp_record, commits / f"{commit}.json")
        # The link swap is the commit point: before it the old tree is live, after it the new one.
        tmp_link = self.link.with_name(f".{self.link.name}.{commit[:12]}.lnk")
        with contextlib.suppress(FileNotFoundError):
            tmp_link.unlink()
        os.symlink(os.path.relpath(snapshots / commit, self.link.parent), tmp_link)
        os.replace(tmp_link, self.link)
        self._collect_garbage(keep_newest=self.keep_snapshots)
        return commit

    def _collect_garbage(self, keep_newest: int) -> None:
        snapshots = self.meta / "snapshots"
        kept = sorted(
            (p for p in snapshots.iterdir() if p.is_dir() and not p.name.startswith(".")),
            key=lambda p: p.stat().st_mtime_ns,
        )
        head = self._read_head()
        for old in kept[:-keep_newest]:
            if old.name != head:
                shutil.rmtree(old, ignore_errors=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.meta.mkdir(parents=True, exist_ok=True)
        with (self.meta / "lock").open("a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
