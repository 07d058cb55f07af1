"""The commit loop every publisher shares: seal shards locally, commit them in batches with their ledger.

``urls publish``, ``news publish`` and ``domains publish`` differ in what a shard is and what their
ledger counts, and in nothing else. :class:`StagedPublisher` holds the part they share:

* **resume** (:meth:`~StagedPublisher.open_hub`) -- create the repo when needed; with ``no_push`` a hub
  that cannot be read is rehearsed without (never created);
* **work** (:meth:`~StagedPublisher.drain`) -- jobs run ``workers`` at a time (threads or processes, the
  caller's ``submit`` decides), new work pauses while the staging disk is under ``min_free_gb``, and a
  run where nothing finishes for ``max_stall`` seconds exits 75;
* **commit** (:meth:`~StagedPublisher.commit`) -- every ``commit_every`` sealed shards go to the hub in one
  commit together with the ledger and card the subclass builds (:meth:`~StagedPublisher.build_commit`),
  whose parent is the head the ledger was read at; right before committing the batch is checked against
  the hub again, so a shard another run committed meanwhile is neither uploaded again nor counted twice;
  a conflict re-reads the ledger and tries again; with ``no_push`` the would-be commit is written under
  ``<staging>/commits/`` instead;
* **upkeep** -- a committed shard's local file is deleted unless ``keep``; one publisher per staging
  directory (a ``flock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence, Sized
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from ccrawl.errors import CredentialMissing, NothingMatched, TemporaryFailure, UsageError
from ccrawl.hub.repo import Add, CommitConflict, DatasetRepo, HubError
from ccrawl.hub.stall import StallClock
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    from ccrawl.progress import UnitProgress

R = TypeVar("R")  # a sealed shard waiting for its commit
J = TypeVar("J")  # a unit of work
X = TypeVar("X")  # what a worker hands back for a job
L = TypeVar("L")  # the ledger


@dataclass(slots=True, kw_only=True)
class UpkeepOptions:
    """The knobs every mirror publisher has (``--commit-every``, ``--workers``, ``--keep``, ...).

    A publisher's options subclass it, overriding the defaults that differ (``repo_id``, ``staging``,
    ``commit_every``) and adding their own; their ``__post_init__`` calls :func:`check_upkeep`.
    """

    repo_id: str = ""
    commit_every: int = 8
    workers: int = 0
    private: bool = False
    keep: bool = False
    min_free_gb: float = 0.0
    max_stall: float = 600.0
    no_push: bool = False
    staging: Path = Path("staging")
    backoff: float = 1.0
    backoff_max: float = 60.0


class CommitCounts(Protocol):
    """The counters :class:`StagedPublisher` keeps in a publisher's stats."""

    committed: int
    staged: int
    existing: int
    commits: int
    conflicts: int


def spawn(fn: Callable[[], X], *, name: str) -> Future[X]:
    """Run ``fn`` on a daemon thread: a stalled run exits 75 at once, not after its stuck reads."""
    fut: Future[X] = Future()

    def target() -> None:
        try:
            fut.set_result(fn())
        except BaseException as exc:  # handed to the waiting run, which raises it
            fut.set_exception(exc)

    threading.Thread(target=target, name=name, daemon=True).start()
    return fut


def write_staged_commit(where: Path, number: int, adds: Sequence[Add], message: str, repo_id: str) -> str:
    """A ``--no-push`` commit: its files under ``where/commit-<time>-<number>/`` (hard links where the
    filesystem allows) and a ``commit.json`` manifest (message, repo, paths); returns the directory's name."""
    name = f"commit-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{number:04d}"
    target = where / name
    for add in adds:
        dest = target / add.path_in_repo
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(add.source, bytes):
            dest.write_bytes(add.source)
        else:
            try:
                os.link(add.source, dest)
            except OSError:
                shutil.copyfile(add.source, dest)
    manifest = {"message": message, "repo": repo_id, "adds": [a.path_in_repo for a in adds]}
    (target / "commit.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return name


Built = tuple[list[Add], str] | None
"""What a commit's builder returns: the files to add and the message, or None when nothing is left to commit."""


def commit_loop(
    clock: StallClock,
    repo: DatasetRepo | None,
    build: Callable[[str | None], Built | Generator[Record, None, Built]],
    *,
    stage: Callable[[list[Add], str], str] | None = None,
    on_conflict: Callable[[CommitConflict], None] | None = None,
    parent: bool = True,
) -> Generator[Record, None, str | None]:
    """The commit step every publisher takes: read the head, build the commit against it, send it (or,
    with ``repo`` None, ``stage`` it), and on a conflict build it again against the new head.

    ``build(head)`` reads what it needs (ledgers, which shards the hub already has) and returns the
    adds and message, or None when nothing is left; it may be a generator whose records (shards found
    on the hub) are passed on as they come. ``on_conflict`` counts and logs a conflict and raises when
    the stall budget is spent (without one a conflict is raised). ``parent=False`` commits without a
    parent (nothing to conflict with).
    Returns the commit id (the staged directory's name without a hub), or None when nothing was committed.
    """
    while True:
        head = clock.retrying("repo head", repo.head) if repo is not None and parent else None
        made = build(head)
        built = (yield from made) if isinstance(made, Generator) else made
        if built is None:
            return None
        adds, message = built
        if repo is None:
            if stage is None:
                raise UsageError("publishing needs a hub; pass --no-push to rehearse without one")
            return stage(adds, message)

        def send(repo: DatasetRepo = repo, adds: list[Add] = adds, message: str = message,
                 head: str | None = head) -> str:
            return repo.commit(adds, message=message, parent=head)

        try:
            return clock.retrying("commit", send)
        except CommitConflict as exc:
            if on_conflict is None:
                raise
            on_conflict(exc)


def commit_once(
    clock: StallClock,
    repo: DatasetRepo | None,
    build: Callable[[str | None], Built],
    *,
    stage: Callable[[list[Add], str], str] | None = None,
    on_conflict: Callable[[CommitConflict], None] | None = None,
    parent: bool = True,
) -> str | None:
    """:func:`commit_loop` for a builder that yields no records: the commit id, or None."""
    loop = commit_loop(clock, repo, build, stage=stage, on_conflict=on_conflict, parent=parent)
    try:
        while True:
            next(loop)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def check_upkeep(opts: UpkeepOptions, *, default_workers: int) -> None:
    """Validate the shared knobs (a one-line UsageError each) and fill the default worker count."""
    if opts.commit_every < 1:
        raise UsageError("--commit-every must be at least 1")
    if opts.workers < 0:
        raise UsageError("--workers must be 0 (a default from the CPU count) or more")
    if opts.workers == 0:
        opts.workers = max(1, default_workers)
    if opts.max_stall <= 0 or opts.min_free_gb < 0:
        raise UsageError("--max-stall must be > 0 and --min-free-gb >= 0")
    opts.staging = Path(opts.staging)


class StagedPublisher(Generic[R, L]):
    """The shared half of a mirror publisher; see the module docstring.

    A subclass sets :attr:`what` (``"urls publish"``) and implements :meth:`read_ledger`,
    :meth:`shard_of`, :meth:`local_of`, :meth:`build_commit`, :meth:`record` and :meth:`counted`.
    """

    what = "publish"

    def __init__(self, opts: UpkeepOptions, repo: DatasetRepo | None, ledger: L, stats: CommitCounts, *,
                 log: Callable[[str], None] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        if repo is None and not opts.no_push:
            raise UsageError("publishing needs a hub; pass --no-push to rehearse without one")
        self.upkeep = opts
        self.repo = repo
        self.ledger = ledger
        self.counts = stats
        self.log = log or (lambda _msg: None)
        self.sleep = sleep
        self.clock = StallClock(opts.max_stall, backoff=opts.backoff, backoff_max=opts.backoff_max, sleep=sleep,
                                log=self.log, what=self.what)
        self._staged = 0
        self._lock_fd = -1

    # -- what a subclass says ------------------------------------------------------------------------

    def read_ledger(self) -> L:
        """The ledger as the hub holds it now (a copy of :attr:`ledger` without a hub)."""
        raise NotImplementedError

    def shard_of(self, item: R) -> str:
        """The path in the repo of a sealed shard."""
        raise NotImplementedError

    def local_of(self, item: R) -> Path:
        """The local file of a sealed shard."""
        raise NotImplementedError

    def build_commit(self, base: L, new: Sequence[R]) -> tuple[L, list[Add], str]:
        """(the ledger after ``new``, the ledger and card files to add, the commit message)."""
        raise NotImplementedError

    def record(self, item: R, action: str, commit: str) -> Record:
        """The output row for ``item``: committed, staged or exists."""
        raise NotImplementedError

    def counted(self, item: R) -> None:
        """Add a committed (or staged) shard's rows and bytes to the run's stats."""

    # -- the hub ----------------------------------------------------------------------------------------

    def open_hub(self) -> bool:
        """Create the repo when needed; False when there is no hub to read (a ``no_push`` rehearsal)."""
        repo = self.repo
        if repo is None:
            return False
        if self.upkeep.no_push:
            try:
                exists = self.clock.bounded("repo info", repo.exists_repo)
            except (HubError, CredentialMissing) as exc:
                self.log(f"{self.what}: --no-push: cannot read {repo.repo_id} ({exc}); rehearsing without it")
                self.repo = None
                return False
            if not exists:
                self.repo = None
                return False
        elif not self.clock.retrying("repo info", repo.exists_repo):
            self.clock.retrying("create repo", lambda: repo.create(private=self.upkeep.private))
            self.log(f"{self.what}: created {repo.repo_id}{' (private)' if self.upkeep.private else ''}")
        return True

    def read_text(self, path: str) -> str | None:
        """A small file of the repo (a ledger), retried on a busy hub; None when it is not there."""
        repo = self.repo
        if repo is None:
            return None
        try:
            return self.clock.retrying(f"read {path}", lambda: repo.read_text(path))
        except NothingMatched:
            return None

    def exists(self, paths: list[str]) -> dict[str, bool]:
        """Which of ``paths`` the hub holds, in one call (empty without a hub)."""
        repo = self.repo
        if repo is None or not paths:
            return {}
        try:
            return self.clock.retrying("existence check", lambda: repo.exists(paths))
        except NothingMatched:
            return {}

    # -- the work loop ----------------------------------------------------------------------------------

    def disk_low(self) -> bool:
        if self.upkeep.min_free_gb <= 0:
            return False
        self.upkeep.staging.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.upkeep.staging).free < self.upkeep.min_free_gb * 1e9

    def drain(self, jobs: Iterable[J], submit: Callable[[J], Future[X]],
              accept: Callable[[J, X], tuple[R | None, Record | None]], ready: list[R], *,
              unit: str, slots: int | None = None, total: int | None = None) -> Iterator[Record]:
        """Run ``jobs`` and commit what they seal; ``ready`` holds shards sealed before (a killed run's).

        ``submit`` starts one job; ``accept`` turns its result into a sealed shard or a failure record
        (or raises to end the run). ``jobs`` is pulled lazily, only when a worker is free and the disk
        is not low, so it may be a stream. ``slots`` jobs run at once (default ``--workers``; an
        executor on a cluster keeps one per CPU of the cluster in flight). A line says how far it got
        as jobs end (:class:`ccrawl.progress.UnitProgress`; ``total``, when known, gives the percentage
        and the ETA; ``len(jobs)`` is taken when it has one).
        """
        from ccrawl.progress import UnitProgress

        if total is None and isinstance(jobs, Sized):
            total = len(jobs)
        progress = UnitProgress(self.what, f"{unit}s", total, self.log) if total != 0 else None
        inflight: dict[Future[X], J] = {}
        try:
            yield from self._drain(jobs, submit, accept, ready, inflight, unit=unit, slots=slots, progress=progress)
        except Exception:
            self._linger(inflight)
            raise

    def _linger(self, inflight: dict[Future[X], J]) -> None:
        """Let the jobs still running end before a failed run lets go of its staging directory.

        They run on daemon threads (a run stalled on a stuck read must exit 75 at once), so without
        this a writer could outlive the ``flock`` and, in a resume started in the same process,
        replace a shard's ``.tmp`` from under the resume's own writer. Bounded by the stall budget:
        a job stuck that long is abandoned as before.
        """
        if inflight:
            wait(list(inflight), timeout=max(0.0, self.clock.left()))

    def _drain(self, jobs: Iterable[J], submit: Callable[[J], Future[X]],
               accept: Callable[[J, X], tuple[R | None, Record | None]], ready: list[R],
               inflight: dict[Future[X], J], *, unit: str, slots: int | None,
               progress: UnitProgress | None = None) -> Iterator[Record]:
        every = self.upkeep.commit_every
        source = iter(jobs)
        exhausted = False
        slots = self.upkeep.workers if slots is None else slots
        while True:
            if len(ready) >= every:
                yield from self.commit(ready[:every])
                del ready[:every]
                continue
            while not exhausted and len(inflight) < slots and not self.disk_low():
                try:
                    job = next(source)
                except StopIteration:
                    exhausted = True
                    break
                inflight[submit(job)] = job
            if not inflight:
                if exhausted:
                    break
                if ready:
                    yield from self.commit(ready)
                    ready.clear()
                    continue
                if self.clock.left() <= 0:
                    raise self.clock.stalled(f"free disk under {self.upkeep.min_free_gb:g} GB")
                self.log(f"{self.what}: free disk under {self.upkeep.min_free_gb:g} GB; waiting")
                self.sleep(min(5.0, max(0.1, self.clock.left())))
                continue
            done, _ = wait(list(inflight), timeout=max(0.0, self.clock.left()), return_when=FIRST_COMPLETED)
            if not done:
                raise self.clock.stalled(f"no {unit} finished ({len(inflight)} in flight)")
            for fut in [f for f in inflight if f in done]:  # in submission order
                job = inflight.pop(fut)
                item, failure = accept(job, fut.result())
                if progress is not None:
                    progress.advance(failed=failure is not None and item is None)
                if failure is not None:
                    yield failure
                if item is not None:
                    self.clock.progressed()
                    ready.append(item)
        if ready:
            yield from self.commit(ready)
            ready.clear()

    # -- committing ---------------------------------------------------------------------------------------

    def commit(self, batch: Sequence[R]) -> Iterator[Record]:
        """Commit ``batch`` with the ledger and card in one commit (see the module docstring)."""
        repo = self.repo
        pushing = repo is not None and not self.upkeep.no_push
        new = list(batch)
        built_ledger: list[L] = []

        def build(head: str | None) -> Generator[Record, None, Built]:
            base = self.read_ledger()
            there = self.exists([self.shard_of(r) for r in new])
            for r in new:
                if there.get(self.shard_of(r)):
                    self.counts.existing += 1
                    self.drop_local(self.local_of(r))
                    yield self.record(r, "exists", "")
            new[:] = [r for r in new if not there.get(self.shard_of(r))]
            if not new:
                return None
            ledger, files, message = self.build_commit(base, new)
            built_ledger[:] = [ledger]
            return [Add(self.shard_of(r), self.local_of(r)) for r in new] + files, message

        def on_conflict(exc: CommitConflict) -> None:
            self.counts.conflicts += 1
            self.log(f"{self.what}: {exc}; re-reading the ledger")
            if self.clock.left() <= 0:
                raise self.clock.stalled("commit conflicts") from exc

        commit_id = yield from commit_loop(self.clock, repo if pushing else None, build, stage=self.stage,
                                           on_conflict=on_conflict)
        if commit_id is None:
            return
        if pushing:
            self.counts.commits += 1
        self.ledger = built_ledger[0]
        self.clock.progressed()
        for r in new:
            self.counted(r)
            if pushing:
                self.counts.committed += 1
                self.drop_local(self.local_of(r))
            else:
                self.counts.staged += 1
        action = "committed" if pushing else "staged"
        for r in new:
            yield self.record(r, action, commit_id)

    def drop_local(self, path: Path) -> None:
        """Delete a committed shard's local file, unless ``keep`` (or a rehearsal, which keeps all)."""
        if not self.upkeep.keep and not self.upkeep.no_push:
            path.unlink(missing_ok=True)

    def stage(self, adds: list[Add], message: str) -> str:
        """Write the would-be commit under ``<staging>/commits`` instead of uploading it."""
        self._staged += 1
        return write_staged_commit(self.upkeep.staging / "commits", self._staged, adds, message, self.upkeep.repo_id)

    @contextlib.contextmanager
    def staging_lock(self) -> Iterator[None]:
        """Hold ``<staging>/.<what>.lock``: one publisher per staging directory."""
        self.upkeep.staging.mkdir(parents=True, exist_ok=True)
        lock_path = self.upkeep.staging / f".{self.what.replace(' ', '-')}.lock"
        with lock_path.open("a+") as lock:
            # A killed run's worker processes die with it but may take a moment: wait briefly for them.
            deadline = time.monotonic() + 5.0
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError as exc:
                    if time.monotonic() > deadline:
                        raise TemporaryFailure(
                            f"another {self.what} holds {lock_path}: one publisher per staging directory"
                        ) from exc
                    time.sleep(0.1)
            self._lock_fd = lock.fileno()
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
                self._lock_fd = -1
