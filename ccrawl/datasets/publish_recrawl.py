"""``recrawl publish``: commit sealed capture shards to a dataset repo as they close, with ledger and card.

One publisher runs beside each ``recrawl run`` and shares only its output directory, with one rule: a
``*.parquet`` there is a whole shard (the crawl writes ``*.parquet.tmp`` and renames it after the footer
is on disk), anything else is not ours to touch. Each pass:

1. lists the sealed shards, hashes each (sha256) and names it
   ``data/<server>-shard<i>of<n>-<sha256[:12]>.parquet`` -- content-addressed, so a shard published
   before (a publisher killed between the commit landing and the local delete) has the same name;
2. asks the hub about a batch of up to ``commit_every`` names in **one** existence call: those already
   there are skipped before any byte moves;
3. commits the rest together with this machine's ledger ``ledger/<server>-shard<i>of<n>.csv`` and a
   README.md card regenerated from every ledger on the hub, in one commit whose parent is the head the
   ledgers were read at -- if another machine committed in between, the hub answers with a conflict and
   the card is rebuilt from the fresher ledgers and committed again;
4. deletes the committed local files unless ``keep``.

Resume asks the hub, not local state: the machine's own ledger is downloaded at start and extended, so
a wiped capture directory or a new disk does not reset its totals. 429/503/timeouts back off
(exponential, honouring Retry-After); a stall clock (``max_stall``) bounds how long the publisher may go
without a commit landing while it has shards waiting, and past it raises ``TemporaryFailure`` (exit 75)
so a supervisor restarts it -- the same goes for a request that hangs. With ``watch`` the publisher polls
until the crawl's checkpoint says ``done`` and no unpublished shard is left, then stops by itself.
``no_push`` runs everything (hashing, existence checks when the hub is readable, ledger, card) and
writes each would-be commit into a staging directory instead of uploading; local shards are kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import random
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ccrawl.datasets.card import render_card
from ccrawl.errors import CredentialMissing, InputError, NothingMatched, TemporaryFailure, UsageError
from ccrawl.hub.ledger import (
    LEDGER_DIR,
    LedgerRow,
    MachineKey,
    ShardStats,
    parse_ledger,
    parse_ledger_path,
    render_ledger,
    shard_stats,
)
from ccrawl.hub.localhub import sha256_file
from ccrawl.hub.repo import Add, CommitConflict, DatasetRepo, HubError
from ccrawl.hub.staged import commit_once, write_staged_commit
from ccrawl.hub.stall import StallClock
from ccrawl.jsontypes import Record
from ccrawl.recrawl.standing import Progress, read_state

#: Bytes asked for beyond a ledger's listed size when reading it (it may have grown since the listing).
LEDGER_SLACK = 1 << 20

#: ``--kind`` -> default ``--repo``.
KIND_REPOS = {"domains": "open-index/ccrawl-recrawl-domains", "urls": "open-index/ccrawl-recrawl-urls"}


@dataclass(slots=True)
class PublishOptions:
    """Every knob of ``recrawl publish``; the CLI passes its flags straight through."""

    directory: Path
    repo_id: str = ""
    kind: str = "domains"
    server: str = ""
    shard: int = 0
    shards: int = 1
    state: Path | None = None
    commit_every: int = 4
    watch: float = 0.0
    keep: bool = False
    private: bool = False
    no_push: bool = False
    staging: Path | None = None
    max_stall: float = 600.0
    backoff: float = 1.0
    backoff_max: float = 60.0

    def __post_init__(self) -> None:
        self.directory = Path(self.directory)
        if self.kind not in KIND_REPOS:
            raise UsageError(f"--kind {self.kind!r}: use domains or urls")
        self.repo_id = self.repo_id or KIND_REPOS[self.kind]
        self.server = self.server or socket.gethostname().split(".")[0]
        if not self.server or "/" in self.server or self.server.startswith("."):
            raise UsageError(f"--server {self.server!r} must be a plain machine name")
        if self.shards < 1 or not 0 <= self.shard < self.shards:
            raise UsageError(f"--shard {self.shard} --shards {self.shards}: need 0 <= shard < shards")
        if self.commit_every < 1:
            raise UsageError("--commit-every must be at least 1")
        if self.watch < 0 or self.max_stall <= 0:
            raise UsageError("--watch must be >= 0 and --max-stall > 0")
        if self.directory.exists() and not self.directory.is_dir():
            raise UsageError(f"--dir {self.directory} is not a directory")
        if not self.directory.is_dir() and self.watch <= 0:
            # with --watch the publisher waits for it: started beside recrawl run, it may look first
            raise UsageError(f"--dir {self.directory} does not exist (with --watch, publish waits for it)")
        if self.staging is None:
            self.staging = self.directory / ".publish-staging"

    @property
    def machine(self) -> MachineKey:
        return MachineKey(self.server, self.shard, self.shards)


@dataclass(slots=True)
class PublishStats:
    """What a publisher did, for its summary line and the fleet test."""

    committed: int = 0
    rows: int = 0
    bytes: int = 0
    existing: int = 0
    unreadable: int = 0
    staged: int = 0
    commits: int = 0
    retries: int = 0
    conflicts: int = 0
    passes: int = 0
    deleted: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class _Shard:
    path: Path
    key: tuple[int, int]
    sha256: str
    repo_path: str
    size: int
    stats: ShardStats


class Publisher:
    """Publishes one machine's capture directory to one repo (see the module docstring)."""

    def __init__(
        self,
        opts: PublishOptions,
        repo: DatasetRepo | None,
        *,
        log: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if repo is None and not opts.no_push:
            raise UsageError("publishing needs a hub; pass --no-push to rehearse without one")
        self.opts = opts
        self.repo = repo
        self.log = log or (lambda _msg: None)
        self.sleep = sleep
        self.stats = PublishStats()
        self.ledger: list[LedgerRow] = []
        self._known: dict[Path, _Shard] = {}
        self._unreadable: set[tuple[Path, tuple[int, int]]] = set()
        self._other_ledgers: dict[str, tuple[tuple[int, str], list[LedgerRow]]] = {}
        self.clock = StallClock(opts.max_stall, backoff=opts.backoff, backoff_max=opts.backoff_max, sleep=sleep,
                                log=self.log)
        self._staged_commits = 0
        self._handled: set[tuple[Path, tuple[int, int]]] = set()
        self._final = False

    # -- hub reads -------------------------------------------------------------------------------

    def resume(self) -> None:
        """Load this machine's ledger from the hub (the source of truth), creating the repo if needed."""
        repo = self.repo
        if repo is None:
            return
        if self.opts.no_push:
            # A rehearsal reads the hub when it can and carries on without it when it cannot (offline).
            try:
                exists = self.clock.bounded("repo info", repo.exists_repo)
            except (HubError, CredentialMissing) as exc:
                self.log(f"recrawl publish: --no-push: cannot read {repo.repo_id} ({exc}); rehearsing without it")
                self.repo = None
                return
            if not exists:
                self.repo = None
                return
        else:
            exists = self.clock.retrying("repo info", repo.exists_repo)
            if not exists:
                self.clock.retrying("create repo", lambda: repo.create(private=self.opts.private))
                self.log(f"recrawl publish: created {repo.repo_id}")
        try:
            text = self.clock.retrying("read ledger", lambda: repo.read_text(self.opts.machine.ledger_path))
        except NothingMatched:
            text = None  # --no-push against a repo that does not exist yet
        if text:
            self.ledger = parse_ledger(text, source=f"{repo.repo_id}/{self.opts.machine.ledger_path}")
            self.log(
                f"recrawl publish: resuming {self.opts.machine.stem} from the hub: {len(self.ledger)} shards, "
                f"{sum(r.rows for r in self.ledger):,} rows already published"
            )

    def _all_ledgers(self) -> dict[MachineKey, list[LedgerRow]]:
        """Every other machine's ledger as on the hub now (re-read only when its size or tag changed)."""
        repo = self.repo
        out: dict[MachineKey, list[LedgerRow]] = {}
        if repo is None:
            return out
        try:
            files = self.clock.retrying("list ledgers", lambda: repo.list_files(LEDGER_DIR))
        except NothingMatched:
            return out
        for f in files:
            key = parse_ledger_path(f.path)
            if key is None or key == self.opts.machine:
                continue
            cached = self._other_ledgers.get(f.path)
            if cached is None or cached[0] != (f.size, f.etag) or not f.etag:
                # Ask past the listed size: the file may have been rewritten since the listing, and one GET
                # returns one whole version of it, never the first bytes of a newer one cut mid-row.
                def read(path: str = f.path, want: int = f.size + LEDGER_SLACK) -> bytes:
                    return repo.read_range(path, 0, want)

                text = self.clock.retrying("read ledger", read).decode("utf-8", errors="replace")
                try:
                    cached = ((f.size, f.etag), parse_ledger(text, source=f"{repo.repo_id}/{f.path}"))
                except InputError as exc:
                    # Another machine's broken ledger must not stop this one: the card undercounts it.
                    self.log(f"recrawl publish: leaving {f.path} out of the card: {exc}")
                    continue
                self._other_ledgers[f.path] = cached
            out[key] = cached[1]
        return out

    # -- the capture directory -------------------------------------------------------------------

    def _sealed_files(self) -> list[Path]:
        files = [
            p for p in self.opts.directory.iterdir()
            if p.name.endswith(".parquet") and not p.name.startswith(".") and p.is_file()
        ]
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))

    def _prepare(self, path: Path) -> _Shard | None:
        st = path.stat()
        key = (st.st_size, st.st_mtime_ns)
        known = self._known.get(path)
        if known is not None and known.key == key:
            return known
        if (path, key) in self._unreadable:
            return None
        try:
            stats = shard_stats(path)
        except InputError as exc:
            self._unreadable.add((path, key))
            self.stats.unreadable += 1
            self.log(f"recrawl publish: skipping {path.name}: {exc}")
            return None
        digest = sha256_file(path)
        shard = _Shard(path, key, digest, f"data/{self.opts.machine.stem}-{digest[:12]}.parquet", st.st_size, stats)
        self._known[path] = shard
        return shard

    def _published_paths(self) -> set[str]:
        return {r.file for r in self.ledger}

    def pending(self) -> list[_Shard]:
        """Sealed shards in the directory that this publisher has not committed or found on the hub."""
        out = []
        for path in self._sealed_files():
            with contextlib.suppress(FileNotFoundError):
                shard = self._prepare(path)
                if shard is not None and (path, shard.key) not in self._handled:
                    out.append(shard)
        return out

    # -- one pass --------------------------------------------------------------------------------

    def run_pass(self) -> Iterator[Record]:
        """Publish every sealed shard in the directory, ``commit_every`` to a commit."""
        self.stats.passes += 1
        waiting: list[_Shard] = []
        seen: set[str] = set()
        for path in self._sealed_files():
            try:
                shard = self._prepare(path)
            except FileNotFoundError:
                continue
            if shard is None or (path, shard.key) in self._handled:
                continue
            if shard.repo_path in seen:
                # The same bytes twice in the directory: one name on the hub, so one upload.
                self.stats.existing += 1
                yield self._done(shard, "exists", "")
                continue
            seen.add(shard.repo_path)
            waiting.append(shard)
        if not waiting:
            self.clock.progressed()  # idle is not a stall
            return
        for i in range(0, len(waiting), self.opts.commit_every):
            yield from self._publish_batch(waiting[i : i + self.opts.commit_every])

    def _done(self, shard: _Shard, action: str, commit_id: str) -> Record:
        """Mark a local shard handled (and delete it unless kept); its record."""
        record = self._record(shard, action, commit_id)
        self._handled.add((shard.path, shard.key))
        self._drop_local(shard)
        return record

    def _publish_batch(self, batch: list[_Shard]) -> Iterator[Record]:
        repo = self.repo
        there: dict[str, bool] = {}
        if repo is not None:
            try:
                there = self.clock.retrying("existence check", lambda: repo.exists([s.repo_path for s in batch]))
            except NothingMatched:
                there = {}
        new = []
        for shard in batch:
            if there.get(shard.repo_path):
                # Published before (a publisher killed between the commit and the delete): no byte moves.
                self.stats.existing += 1
                yield self._done(shard, "exists", "")
            else:
                new.append(shard)
        if not new:
            return
        commit_id = self._commit(new)
        action = "staged" if self.opts.no_push else "committed"
        for shard in new:
            self.stats.rows += shard.stats.rows
            self.stats.bytes += shard.size
            if self.opts.no_push:
                self.stats.staged += 1
            else:
                self.stats.committed += 1
            yield self._done(shard, action, commit_id)

    def _record(self, shard: _Shard, action: str, commit_id: str) -> Record:
        return {
            "file": shard.repo_path,
            "local": shard.path.name,
            "rows": shard.stats.rows,
            "bytes": shard.size,
            "action": action,
            "commit": commit_id or None,
        }

    def _drop_local(self, shard: _Shard) -> None:
        if self.opts.keep or self.opts.no_push:
            return
        with contextlib.suppress(FileNotFoundError):
            shard.path.unlink()
            self.stats.deleted += 1
        self._known.pop(shard.path, None)

    def _ledger_rows(self, new: list[_Shard], progress: Progress | None) -> list[LedgerRow]:
        now = time.time_ns() // 1_000_000
        have = self._published_paths()
        rows = list(self.ledger)
        for s in new:
            if s.repo_path in have:
                continue
            st = s.stats
            rows.append(
                LedgerRow(
                    file=s.repo_path, sha256=s.sha256, rows=st.rows, bytes=s.size, ok=st.ok, failed=st.failed,
                    unchanged=st.unchanged, first_fetched_at=st.first_fetched_at,
                    last_fetched_at=st.last_fetched_at, committed_at=now,
                    part=progress.part if progress else 0, row=progress.row if progress else 0,
                    done=progress.done if progress else False, fetched=progress.fetched if progress else 0,
                )
            )
        return rows

    def _commit(self, new: list[_Shard]) -> str:
        """Commit ``new`` with the ledger and card; retried on conflict (rebuilt) and on busy (backoff)."""
        repo = self.repo
        me = self.opts.machine
        if new:
            message = f"{me.stem}: {len(new)} shard(s), {sum(s.stats.rows for s in new):,} rows"
        else:
            message = f"{me.stem}: checkpoint {'done' if self._final else 'progress'}"
        built: list[list[LedgerRow]] = []

        def build(head: str | None) -> tuple[list[Add], str]:
            progress = read_state(self.opts.state, self.opts.shard, self.opts.shards)
            others = self._all_ledgers()
            mine = self._ledger_rows(new, progress)
            if not new and mine and progress is not None:
                # No shard to add: the last row carries the newest checkpoint this machine published.
                mine[-1] = dataclasses.replace(mine[-1], part=progress.part, row=progress.row, done=progress.done,
                                               fetched=progress.fetched)
            card = render_card(
                self.opts.repo_id, self.opts.kind, {**others, me: mine}, live={me: progress} if progress else {}
            )
            adds = [Add(s.repo_path, s.path) for s in new]
            adds.append(Add(me.ledger_path, render_ledger(mine).encode()))
            adds.append(Add("README.md", card.encode()))
            built[:] = [mine]
            return adds, message

        def on_conflict(exc: CommitConflict) -> None:
            # Someone else committed since the ledgers were read: rebuild the card and retry.
            self.stats.conflicts += 1
            self.log(f"recrawl publish: {exc}; rebuilding the card from the fresh ledgers")
            if self.clock.left() <= 0:
                raise self.clock.stalled("commit conflicts") from exc
            self.sleep(random.uniform(0, min(1.0, self.opts.backoff)))

        commit_id = commit_once(self.clock, None if self.opts.no_push else repo, build, stage=self._stage,
                                on_conflict=on_conflict)
        assert commit_id is not None  # build always has a commit to make
        if not self.opts.no_push:
            self.stats.commits += 1
        self.ledger = built[0]
        self.clock.progressed()
        return commit_id

    def _stage(self, adds: list[Add], message: str) -> str:
        """Write the would-be commit under the staging directory instead of uploading it."""
        assert self.opts.staging is not None
        self._staged_commits += 1
        return write_staged_commit(self.opts.staging, self._staged_commits, adds, message, self.opts.repo_id)

    # -- the whole run ---------------------------------------------------------------------------

    def drained(self) -> bool:
        """No sealed shard left that this machine has not published."""
        return not self.pending()

    def run(self) -> Iterator[Record]:
        """Resume from the hub, then publish until one pass is done (or, with watch, the crawl is)."""
        self._wait_for_directory()
        with self._directory_lock():
            try:
                self.clock.progressed()
                self.resume()
                while True:
                    yield from self.run_pass()
                    if self.opts.watch <= 0:
                        return
                    progress = read_state(self.opts.state, self.opts.shard, self.opts.shards)
                    if progress is not None and progress.done and self.drained():
                        self._publish_final_checkpoint(progress)
                        self.log("recrawl publish: the crawl is done and the directory is drained; stopping")
                        return
                    self.sleep(self.opts.watch)
            finally:
                self.stats.retries = self.clock.retries

    def _wait_for_directory(self) -> None:
        """With ``watch``, a capture directory that does not exist yet is waited for (said once).

        ``recrawl run`` creates it when it starts, and a recipe may start the publisher first.
        """
        directory = self.opts.directory
        said = False
        while not directory.is_dir():
            if directory.exists():
                raise UsageError(f"--dir {directory} is not a directory")
            if not said:
                self.log(f"recrawl publish: waiting for {directory} to appear (recrawl run creates it)")
                said = True
            self.sleep(min(self.opts.watch, 1.0))
        if said:
            self.log(f"recrawl publish: {directory} is there; publishing")

    def _publish_final_checkpoint(self, progress: Progress) -> None:
        """Record a ``done`` checkpoint the last shard's commit missed (the crawl checkpoints after sealing).

        Without it the card would show this machine unfinished for good: its last ledger row was
        written a moment before the crawl said it was done, and nothing else would ever update it.
        """
        if not self.ledger:
            return
        last = self.ledger[-1]
        if (last.part, last.row, last.done, last.fetched) == (progress.part, progress.row, progress.done,
                                                               progress.fetched):
            return
        self._final = True
        self._commit([])

    @contextlib.contextmanager
    def _directory_lock(self) -> Iterator[None]:
        lock_path = self.opts.directory / ".publish.lock"
        with lock_path.open("a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise TemporaryFailure(
                    f"another recrawl publish holds {lock_path}: one publisher per capture directory"
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def publish(opts: PublishOptions, repo: DatasetRepo | None, *, log: Callable[[str], None] | None = None,
            sleep: Callable[[float], None] = time.sleep) -> tuple[list[Record], PublishStats]:
    """Run a publisher to completion; returns its records and stats (library convenience)."""
    publisher = Publisher(opts, repo, log=log, sleep=sleep)
    records = list(publisher.run())
    return records, publisher.stats


__all__ = ["KIND_REPOS", "PublishOptions", "PublishStats", "Publisher", "publish", "read_state"]
