"""``news publish``: build the CC-NEWS index Common Crawl does not publish and mirror it to a dataset repo.

For each month the run reads the month's ``warc.paths.gz``, asks the hub in **one** call which of the
shard paths that manifest allows (``data/YYYY/MM/<source name>.parquet``) are already there, and indexes
the rest: worker processes stream each archive (never written to disk), write one Parquet shard per
archive, and hand back a :class:`~ccrawl.commoncrawl.news.shard.ShardResult`. Every ``commit_every``
finished shards go to the hub in one commit together with both ledgers and the card:

* ``stats.csv`` -- one row per month: files indexed and in the manifest, records, articles, bytes read,
  files that ended mid-record, whether the month is complete;
* ``languages.csv`` -- one row per month and detected language (articles);
* ``README.md`` -- the card, rebuilt from the two ledgers, declaring only the Parquet files as data.

Nothing is counted twice: a shard and the ledger rows that count it land in the same atomic commit,
whose parent is the head the ledgers were read at (a conflict re-reads them); right before committing,
the batch is checked against the hub again, so a shard another run committed meanwhile is dropped from
the batch, not counted again. A killed run resumes from the hub; shards it had sealed locally but not
committed are reused from the staging directory rather than indexed again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import multiprocessing
import os
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccrawl.commoncrawl.news.months import Month
from ccrawl.commoncrawl.news.shard import ShardResult, index_file, shard_metadata
from ccrawl.datasets.hub import Add, CommitConflict, DatasetRepo, HubError
from ccrawl.datasets.news_card import render_news_card
from ccrawl.datasets.news_ledger import LANGUAGES, STATS, Ledgers
from ccrawl.datasets.stall import StallClock
from ccrawl.errors import (
    EXIT_TEMPORARY,
    EXIT_UNREACHABLE,
    CredentialMissing,
    NothingMatched,
    TemporaryFailure,
    UsageError,
)

COLUMNS = ("month", "file", "source", "rows", "articles", "bytes_read", "action", "commit")


@dataclass(slots=True)
class NewsPublishOptions:
    """Every knob of ``news publish``; the CLI passes its flags straight through."""

    months: list[Month]
    repo_id: str = "open-index/ccrawl-news"
    files: int = 0
    commit_every: int = 8
    workers: int = 0
    private: bool = False
    keep: bool = False
    min_free_gb: float = 0.0
    max_stall: float = 600.0
    no_push: bool = False
    staging: Path = Path("news-staging")
    client_options: dict[str, Any] = field(default_factory=dict)
    languages: bool = True
    backoff: float = 1.0
    backoff_max: float = 60.0
    executor: str = "local"
    """``local`` (a process pool here) or ``ray`` (a Ray task per WARC file, see ccrawl.scale.rayexec)."""
    ray_address: str = ""

    def __post_init__(self) -> None:
        if not self.months:
            raise UsageError("--months is empty: give one or more months as YYYY/MM")
        if self.files < 0:
            raise UsageError("--files must be 0 (the whole month) or more")
        if self.commit_every < 1:
            raise UsageError("--commit-every must be at least 1")
        if self.workers < 0:
            raise UsageError("--workers must be 0 (a default from the CPU count) or more")
        if self.workers == 0:
            self.workers = max(1, os.cpu_count() or 1)
        if self.max_stall <= 0 or self.min_free_gb < 0:
            raise UsageError("--max-stall must be > 0 and --min-free-gb >= 0")
        self.staging = Path(self.staging)
        from ccrawl.scale.rayexec import check_executor

        self.executor = check_executor(self.executor)


@dataclass(slots=True)
class NewsPublishStats:
    """What a run did, for the summary line and the tests."""

    indexed: int = 0
    reused: int = 0
    committed: int = 0
    staged: int = 0
    existing: int = 0
    failed: int = 0
    rows: int = 0
    bytes_read: int = 0
    commits: int = 0
    conflicts: int = 0
    retries: int = 0
    resumes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}


# -- the publisher ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Job:
    month: Month
    warc_path: str
    shard_path: str
    local: Path


class NewsPublisher:
    """Indexes months and publishes the shards; see the module docstring."""

    def __init__(
        self,
        opts: NewsPublishOptions,
        repo: DatasetRepo | None,
        *,
        month_paths: Callable[[Month], list[str]],
        log: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if repo is None and not opts.no_push:
            raise UsageError("publishing needs a hub; pass --no-push to rehearse without one")
        self.opts = opts
        self.repo = repo
        self.month_paths = month_paths
        self.log = log or (lambda _msg: None)
        self.sleep = sleep
        self.stats = NewsPublishStats()
        self.ledgers = Ledgers()
        self.clock = StallClock(opts.max_stall, backoff=opts.backoff, backoff_max=opts.backoff_max, sleep=sleep,
                                log=self.log, what="news publish")
        self._totals: dict[str, int] = {}
        self._staged = 0
        self._lock_fd = -1

    # -- hub ---------------------------------------------------------------------------------------

    def resume(self) -> None:
        """Create the repo when needed and read both ledgers from the hub (the source of truth)."""
        repo = self.repo
        if repo is None:
            return
        if self.opts.no_push:
            try:
                exists = self.clock.bounded("repo info", repo.exists_repo)
            except (HubError, CredentialMissing) as exc:
                self.log(f"news publish: --no-push: cannot read {repo.repo_id} ({exc}); rehearsing without it")
                self.repo = None
                return
            if not exists:
                self.repo = None
                return
        elif not self.clock.retrying("repo info", repo.exists_repo):
            self.clock.retrying("create repo", lambda: repo.create(private=self.opts.private))
            self.log(f"news publish: created {repo.repo_id}{' (private)' if self.opts.private else ''}")
        self.ledgers = self._read_ledgers()
        if self.ledgers.stats:
            done = sum(int(r["files"]) for r in self.ledgers.stats.values())
            self.log(f"news publish: resuming {repo.repo_id}: {done} shard(s) already counted in {STATS}")

    def _read_ledgers(self) -> Ledgers:
        repo = self.repo
        if repo is None:
            return Ledgers()

        def read(path: str) -> str | None:
            try:
                return self.clock.retrying(f"read {path}", lambda: repo.read_text(path))
            except NothingMatched:
                return None

        return Ledgers.parse(read(STATS), read(LANGUAGES), repo=repo.repo_id)

    def _exists(self, paths: list[str]) -> dict[str, bool]:
        repo = self.repo
        if repo is None or not paths:
            return {}
        try:
            return self.clock.retrying("existence check", lambda: repo.exists(paths))
        except NothingMatched:
            return {}

    # -- planning ----------------------------------------------------------------------------------

    def plan(self) -> tuple[list[_Job], list[dict[str, Any]]]:
        """The archives left to index, and a record for each one the hub already has."""
        jobs: list[_Job] = []
        records: list[dict[str, Any]] = []
        for month in self.opts.months:
            paths = self.month_paths(month)
            self.clock.progressed()  # a manifest read is progress
            self._totals[str(month)] = len(paths)
            self.ledgers.set_total(str(month), len(paths))
            if self.opts.files:
                paths = paths[: self.opts.files]
            wanted = {p: month.shard_path(p) for p in paths}
            there = self._exists(list(wanted.values()))  # one request for the whole month
            for p, shard in wanted.items():
                if there.get(shard):
                    self.stats.existing += 1
                    records.append(self._record(month, shard, p, None, "exists", ""))
                else:
                    jobs.append(_Job(month, p, shard, self.opts.staging / shard))
            self.log(f"news publish: {month}: {len(paths)} of {self._totals[str(month)]} file(s), "
                     f"{sum(1 for j in jobs if j.month == month)} to index, "
                     f"{sum(1 for v in there.values() if v)} already on the hub")
        return jobs, records

    def _record(self, month: Month, shard: str, source: str, result: ShardResult | None, action: str,
                commit: str) -> dict[str, Any]:
        return {
            "month": str(month), "file": shard, "source": source,
            "rows": result.rows if result else None, "articles": result.articles if result else None,
            "bytes_read": result.bytes_read if result else None, "action": action, "commit": commit or None,
        }

    # -- running -----------------------------------------------------------------------------------

    def _disk_low(self) -> bool:
        if self.opts.min_free_gb <= 0:
            return False
        self.opts.staging.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.opts.staging).free < self.opts.min_free_gb * 1e9

    def _reuse(self, job: _Job) -> ShardResult | None:
        """A shard a killed run sealed but did not commit: its counts are in its footer."""
        if not job.local.is_file():
            return None
        try:
            meta = shard_metadata(job.local)
        except Exception:
            job.local.unlink(missing_ok=True)
            return None
        if meta.get("warc_path") != job.warc_path:
            return None
        fields = set(ShardResult.__slots__)
        result = ShardResult(**{k: v for k, v in meta.items() if k in fields and k not in ("local", "seconds")},
                             local=str(job.local))
        result.size = job.local.stat().st_size
        return result

    def run(self) -> Iterator[dict[str, Any]]:
        """Resume from the hub, index what is left, commit as shards finish."""
        self.opts.staging.mkdir(parents=True, exist_ok=True)
        with self._staging_lock():
            try:
                self.clock.progressed()
                self.resume()
                jobs, records = self.plan()
                yield from records
                yield from self._work(jobs)
            finally:
                self.stats.retries = self.clock.retries

    def _work(self, jobs: list[_Job]) -> Iterator[dict[str, Any]]:
        ready: list[tuple[_Job, ShardResult, str]] = []
        queue: deque[_Job] = deque()
        for job in jobs:
            reused = self._reuse(job)
            if reused is not None:
                self.stats.reused += 1
                ready.append((job, reused, "reused"))
            else:
                queue.append(job)
        if ready:
            self.log(f"news publish: reusing {len(ready)} shard(s) sealed by an earlier run in {self.opts.staging}")
        while len(ready) >= self.opts.commit_every:
            yield from self._commit(ready[: self.opts.commit_every])
            ready = ready[self.opts.commit_every :]
        if queue:
            stack = contextlib.ExitStack()
            pool, slots = self._pool(stack, len(queue))
            inflight: dict[Future[ShardResult], _Job] = {}
            try:
                while queue or inflight:
                    while queue and len(inflight) < slots and not self._disk_low():
                        job = queue.popleft()
                        fut = pool.submit(index_file, job.warc_path, str(job.local), self.opts.client_options,
                                          self.opts.languages)
                        inflight[fut] = job
                    if not inflight:
                        if ready:
                            yield from self._commit(ready)
                            ready = []
                            continue
                        if self.clock.left() <= 0:
                            raise self.clock.stalled(f"free disk under {self.opts.min_free_gb:g} GB")
                        self.log(f"news publish: free disk under {self.opts.min_free_gb:g} GB; waiting")
                        self.sleep(min(5.0, max(0.1, self.clock.left())))
                        continue
                    done, _ = wait(list(inflight), timeout=max(0.0, self.clock.left()), return_when=FIRST_COMPLETED)
                    if not done:
                        raise self.clock.stalled(f"no archive finished ({len(inflight)} in flight)")
                    for fut in done:
                        job = inflight.pop(fut)
                        result = fut.result()
                        if result.error:
                            if result.error_code in (EXIT_TEMPORARY, EXIT_UNREACHABLE):
                                raise TemporaryFailure(f"news publish: {job.warc_path}: {result.error}")
                            self.stats.failed += 1
                            self.log(f"news publish: {job.warc_path}: {result.error}; left for the next run")
                            yield self._record(job.month, job.shard_path, job.warc_path, None,
                                               f"failed: {result.error}", "")
                            continue
                        self.clock.progressed()
                        self.stats.indexed += 1
                        self.stats.resumes += result.resumes
                        if result.truncated_at is not None:
                            self.log(f"news publish: {job.warc_path} ends inside the record at offset "
                                     f"{result.truncated_at}; indexed the {result.rows} whole record(s) before it")
                        ready.append((job, result, "indexed"))
                    if len(ready) >= self.opts.commit_every:
                        yield from self._commit(ready)
                        ready = []
            finally:
                _stop_pool(pool)
                tally = getattr(pool, "tally", None)  # a RayPool: the driver's view of its tasks
                if tally is not None:
                    self.log(tally.line("archives"))
                stack.close()
        if ready:
            yield from self._commit(ready)

    def _pool(self, stack: contextlib.ExitStack, jobs: int) -> tuple[Executor, int]:
        """The executor that runs ``index_file`` per archive, and how many archives to keep in flight."""
        if self.opts.executor == "ray":
            from ccrawl.scale.rayexec import RayPool, cluster, cluster_cpus

            ray = stack.enter_context(cluster(self.opts.ray_address, log=self.log))
            # one archive queued past the cluster's CPUs, so a CPU that frees up never waits on the driver
            return RayPool(ray, num_cpus=1, what="archives", log=self.log), cluster_cpus(ray) + 1
        # fork: a worker needs nothing of the parent but its arguments, and spawn would re-import a
        # caller's __main__ (which breaks a script or stdin without a main guard)
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        pool = ProcessPoolExecutor(max_workers=min(self.opts.workers, jobs), mp_context=ctx,
                                   initializer=_worker_init, initargs=(self._lock_fd,))
        return pool, self.opts.workers

    def _commit(self, batch: list[tuple[_Job, ShardResult, str]]) -> Iterator[dict[str, Any]]:
        """Commit ``batch`` with both ledgers and the card in one commit (see the module docstring)."""
        repo = self.repo
        while True:
            head = self.clock.retrying("repo head", repo.head) if repo is not None and not self.opts.no_push else None
            base = self._read_ledgers() if repo is not None else self.ledgers
            there = self._exists([j.shard_path for j, _, _ in batch])
            new = [(j, r, how) for j, r, how in batch if not there.get(j.shard_path)]
            for j, _, _ in batch:
                if there.get(j.shard_path):
                    self.stats.existing += 1
                    self._drop_local(j)
                    yield self._record(j.month, j.shard_path, j.warc_path, None, "exists", "")
            if not new:
                return
            ledgers = base.copy()
            for m, total in self._totals.items():
                ledgers.set_total(m, total)
            for j, r, _ in new:
                ledgers.add(str(j.month), r, self._totals.get(str(j.month), 0))
            stats_csv, langs_csv = ledgers.render()
            card = render_news_card(self.opts.repo_id, ledgers.stats, ledgers.languages)
            adds = [Add(j.shard_path, j.local) for j, _, _ in new]
            adds += [Add(STATS, stats_csv), Add(LANGUAGES, langs_csv), Add("README.md", card.encode())]
            rows = sum(r.rows for _, r, _ in new)
            months = ", ".join(sorted({str(j.month) for j, _, _ in new}))
            message = f"news: {len(new)} shard(s), {rows:,} rows ({months})"
            if self.opts.no_push:
                commit_id = self._stage(adds, message)
            else:
                assert repo is not None

                def send(adds: list[Add] = adds, head: str | None = head, message: str = message) -> str:
                    assert repo is not None
                    return repo.commit(adds, message=message, parent=head)

                try:
                    commit_id = self.clock.retrying("commit", send)
                except CommitConflict as exc:
                    self.stats.conflicts += 1
                    self.log(f"news publish: {exc}; re-reading the ledgers")
                    if self.clock.left() <= 0:
                        raise self.clock.stalled("commit conflicts") from exc
                    continue
                self.stats.commits += 1
            self.ledgers = ledgers
            self.clock.progressed()
            action = "staged" if self.opts.no_push else "committed"
            for j, r, _ in new:
                self.stats.rows += r.rows
                self.stats.bytes_read += r.bytes_read
                if self.opts.no_push:
                    self.stats.staged += 1
                else:
                    self.stats.committed += 1
                    self._drop_local(j)
                yield self._record(j.month, j.shard_path, j.warc_path, r, action, commit_id)
            return

    def _drop_local(self, job: _Job) -> None:
        if not self.opts.keep and not self.opts.no_push:
            job.local.unlink(missing_ok=True)

    def _stage(self, adds: list[Add], message: str) -> str:
        """Write the would-be commit under ``<staging>/commits`` instead of uploading it."""
        self._staged += 1
        name = f"commit-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{self._staged:04d}"
        target = self.opts.staging / "commits" / name
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
        manifest = {"message": message, "repo": self.opts.repo_id, "adds": [a.path_in_repo for a in adds]}
        (target / "commit.json").write_text(json.dumps(manifest, indent=1) + "\n")
        return name

    @contextlib.contextmanager
    def _staging_lock(self) -> Iterator[None]:
        lock_path = self.opts.staging / ".news-publish.lock"
        with lock_path.open("a+") as lock:
            # Workers of a killed run die with it (PDEATHSIG) but may take a moment: wait briefly for them.
            deadline = time.monotonic() + 5.0
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError as exc:
                    if time.monotonic() > deadline:
                        raise TemporaryFailure(
                            f"another news publish holds {lock_path}: one publisher per staging directory"
                        ) from exc
                    time.sleep(0.1)
            self._lock_fd = lock.fileno()
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
                self._lock_fd = -1


def _worker_init(lock_fd: int) -> None:
    """In a worker: die with the parent (a SIGKILLed publisher leaves no orphan streaming on), drop its lock."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if lock_fd >= 0:
        with contextlib.suppress(OSError):
            os.close(lock_fd)  # the parent's flock must not outlive the parent in a forked child


def _stop_pool(pool: Executor) -> None:
    """Shut the pool down without waiting on a worker stuck in a request (a stall exits 75 promptly)."""
    if not isinstance(pool, ProcessPoolExecutor):
        pool.shutdown(wait=False, cancel_futures=True)  # a RayPool interrupts its tasks, then kills them
        return
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(5)


def summary_line(stats: NewsPublishStats, *, no_push: bool) -> str:
    verb = "staged" if no_push else "committed"
    return (
        f"news publish: indexed {stats.indexed} archive(s) (reused {stats.reused}), {verb} "
        f"{stats.staged if no_push else stats.committed} shard(s) with {stats.rows:,} rows in {stats.commits} "
        f"commit(s); {stats.existing} already on the hub, {stats.failed} failed, {stats.resumes} stream resume(s), "
        f"{stats.retries} hub retries"
    )

