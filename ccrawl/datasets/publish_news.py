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
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ccrawl.commoncrawl.news.months import Month
from ccrawl.commoncrawl.news.shard import ShardResult, index_file, shard_metadata
from ccrawl.datasets.news_card import render_news_card
from ccrawl.datasets.news_ledger import LANGUAGES, STATS, Ledgers
from ccrawl.errors import EXIT_TEMPORARY, EXIT_UNREACHABLE, TemporaryFailure, UsageError
from ccrawl.hub.repo import Add, DatasetRepo
from ccrawl.hub.staged import StagedPublisher, UpkeepOptions, check_upkeep
from ccrawl.jsontypes import Record

COLUMNS = ("month", "file", "source", "rows", "articles", "bytes_read", "action", "commit")


@dataclass(slots=True, kw_only=True)
class NewsPublishOptions(UpkeepOptions):
    """Every knob of ``news publish``; the CLI passes its flags straight through."""

    months: list[Month] = field(kw_only=False)
    repo_id: str = "open-index/ccrawl-news"
    files: int = 0
    commit_every: int = 8
    staging: Path = Path("news-staging")
    client_options: dict[str, object] = field(default_factory=dict)  # ClientOptions.as_dict(): pickled to the workers
    languages: bool = True
    executor: str = "local"
    """``local`` (a process pool here) or ``ray`` (a Ray task per WARC file, see ccrawl.scale.rayexec)."""
    ray_address: str = ""

    def __post_init__(self) -> None:
        if not self.months:
            raise UsageError("--months is empty: give one or more months as YYYY/MM")
        if self.files < 0:
            raise UsageError("--files must be 0 (the whole month) or more")
        check_upkeep(self, default_workers=os.cpu_count() or 1)
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


#: A sealed shard waiting for its commit: the job, what indexing it produced, and how (indexed or reused).
Sealed = tuple[_Job, ShardResult, str]


class NewsPublisher(StagedPublisher[Sealed, Ledgers]):
    """Indexes months and publishes the shards; see the module docstring."""

    what = "news publish"

    def __init__(
        self,
        opts: NewsPublishOptions,
        repo: DatasetRepo | None,
        *,
        month_paths: Callable[[Month], list[str]],
        log: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        stats: NewsPublishStats | None = None,
    ) -> None:
        self.stats = stats if stats is not None else NewsPublishStats()
        super().__init__(opts, repo, Ledgers(), self.stats, log=log, sleep=sleep)
        self.opts = opts
        self.month_paths = month_paths
        self._totals: dict[str, int] = {}

    @property
    def ledgers(self) -> Ledgers:
        return self.ledger

    # -- the hooks of StagedPublisher ------------------------------------------------------------------

    def read_ledger(self) -> Ledgers:
        repo = self.repo
        if repo is None:
            return self.ledger.copy()
        return Ledgers.parse(self.read_text(STATS), self.read_text(LANGUAGES), repo=repo.repo_id)

    def shard_of(self, item: Sealed) -> str:
        return item[0].shard_path

    def local_of(self, item: Sealed) -> Path:
        return item[0].local

    def build_commit(self, base: Ledgers, new: Sequence[Sealed]) -> tuple[Ledgers, list[Add], str]:
        ledgers = base.copy()
        for m, total in self._totals.items():
            ledgers.set_total(m, total)
        for j, r, _ in new:
            ledgers.add(str(j.month), r, self._totals.get(str(j.month), 0))
        stats_csv, langs_csv = ledgers.render()
        card = render_news_card(self.opts.repo_id, ledgers.stats, ledgers.languages)
        files = [Add(STATS, stats_csv), Add(LANGUAGES, langs_csv), Add("README.md", card.encode())]
        rows = sum(r.rows for _, r, _ in new)
        months = ", ".join(sorted({str(j.month) for j, _, _ in new}))
        return ledgers, files, f"news: {len(new)} shard(s), {rows:,} rows ({months})"

    def record(self, item: Sealed, action: str, commit: str) -> Record:
        j, r, _ = item
        return self._record(j.month, j.shard_path, j.warc_path, None if action == "exists" else r, action, commit)

    def counted(self, item: Sealed) -> None:
        self.stats.rows += item[1].rows
        self.stats.bytes_read += item[1].bytes_read

    # -- hub ---------------------------------------------------------------------------------------

    def resume(self) -> None:
        """Create the repo when needed and read both ledgers from the hub (the source of truth)."""
        if not self.open_hub():
            return
        self.ledger = self.read_ledger()
        if self.ledger.stats:
            done = sum(int(r["files"]) for r in self.ledger.stats.values())
            self.log(f"news publish: resuming {self.opts.repo_id}: {done} shard(s) already counted in {STATS}")

    # -- planning ----------------------------------------------------------------------------------

    def plan(self) -> tuple[list[_Job], list[Record]]:
        """The archives left to index, and a record for each one the hub already has."""
        jobs: list[_Job] = []
        records: list[Record] = []
        for month in self.opts.months:
            paths = self.month_paths(month)
            self.clock.progressed()  # a manifest read is progress
            self._totals[str(month)] = len(paths)
            self.ledger.set_total(str(month), len(paths))
            if self.opts.files:
                paths = paths[: self.opts.files]
            wanted = {p: month.shard_path(p) for p in paths}
            there = self.exists(list(wanted.values()))  # one request for the whole month
            for p, shard in wanted.items():
                if there.get(shard):
                    self.stats.existing += 1
                    self.drop_local(self.opts.staging / shard)  # committed by a run killed before its delete
                    records.append(self._record(month, shard, p, None, "exists", ""))
                else:
                    jobs.append(_Job(month, p, shard, self.opts.staging / shard))
            self.log(f"news publish: {month}: {len(paths)} of {self._totals[str(month)]} file(s), "
                     f"{sum(1 for j in jobs if j.month == month)} to index, "
                     f"{sum(1 for v in there.values() if v)} already on the hub")
        return jobs, records

    def _record(self, month: Month, shard: str, source: str, result: ShardResult | None, action: str,
                commit: str) -> Record:
        return {
            "month": str(month), "file": shard, "source": source,
            "rows": result.rows if result else None, "articles": result.articles if result else None,
            "bytes_read": result.bytes_read if result else None, "action": action, "commit": commit or None,
        }

    # -- running -----------------------------------------------------------------------------------

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

    def run(self) -> Iterator[Record]:
        """Resume from the hub, index what is left, commit as shards finish."""
        with self.staging_lock():
            try:
                self.clock.progressed()
                self.resume()
                jobs, records = self.plan()
                yield from records
                yield from self._work(jobs)
            finally:
                self.stats.retries = self.clock.retries

    def _accept(self, job: _Job, result: ShardResult) -> tuple[Sealed | None, Record | None]:
        if result.error:
            if result.error_code in (EXIT_TEMPORARY, EXIT_UNREACHABLE):
                raise TemporaryFailure(f"news publish: {job.warc_path}: {result.error}")
            self.stats.failed += 1
            self.log(f"news publish: {job.warc_path}: {result.error}; left for the next run")
            return None, self._record(job.month, job.shard_path, job.warc_path, None, f"failed: {result.error}", "")
        self.stats.indexed += 1
        self.stats.resumes += result.resumes
        if result.truncated_at is not None:
            self.log(f"news publish: {job.warc_path} ends inside the record at offset "
                     f"{result.truncated_at}; indexed the {result.rows} whole record(s) before it")
        return (job, result, "indexed"), None

    def _work(self, jobs: list[_Job]) -> Iterator[Record]:
        ready: list[Sealed] = []
        queue: list[_Job] = []
        for job in jobs:
            reused = self._reuse(job)
            if reused is not None:
                self.stats.reused += 1
                ready.append((job, reused, "reused"))
            else:
                queue.append(job)
        if ready:
            self.log(f"news publish: reusing {len(ready)} shard(s) sealed by an earlier run in {self.opts.staging}")
        if not queue:
            yield from self.drain((), _never, self._accept, ready, unit="archive")
            return
        stack = contextlib.ExitStack()
        pool, slots = self._pool(stack, len(queue))

        def submit(job: _Job) -> Future[ShardResult]:
            return pool.submit(index_file, job.warc_path, str(job.local), self.opts.client_options,
                               self.opts.languages)

        try:
            yield from self.drain(queue, submit, self._accept, ready, unit="archive", slots=slots)
        finally:
            _stop_pool(pool)
            tally = getattr(pool, "tally", None)  # a RayPool: the driver's view of its tasks
            if tally is not None:
                self.log(tally.line("archives"))
            stack.close()

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


def _never(job: _Job) -> Future[ShardResult]:
    raise AssertionError(f"no job to submit: {job}")


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

