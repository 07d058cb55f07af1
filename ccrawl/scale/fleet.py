"""``recrawl fleet``: the N shard runs of a recrawl and their publishers, started as tasks of one executor.

A fleet task is what a pod of the Kubernetes recipe is: shard ``i`` of ``N`` gets a directory of its own
(``<work>/shard-<i>of<N>/``) holding the crawl's ``captures/`` and checkpoint ``recrawl.json``, and runs
two processes beside each other, the same command lines a machine of a hand-started fleet runs:

- ``ccrawl recrawl run --shard i --shards N --out captures --state recrawl.json ...``;
- ``ccrawl recrawl publish --shard i --shards N --dir captures --state recrawl.json --watch W ...``, which
  stops by itself once the checkpoint says ``done`` and every sealed shard is committed.

The work is the same code as a local run (each process keeps its process-per-core layout): the task only
supervises. Exit 75 restarts that process in place (``restarts`` times, then the task fails); any other
failure stops the shard and names the process and its last line. A task the engine kills takes its
processes with it (``PR_SET_PDEATHSIG``); the engine's retry (Ray's ``max_retries``) starts the same two
command lines on the same directory, so the crawl resumes from its checkpoint and the publisher from its
ledger on the hub: shard names are content-addressed and the ledger is keyed by (server, shard, N), so
nothing is counted twice. A cancelled task (Ctrl-C on the driver) sends SIGTERM to both processes: the
crawl seals and checkpoints, and the next ``recrawl fleet`` resumes every shard.

Shards share nothing but the dataset repo, as on N machines. On a Ray cluster of several nodes a
retried task may land on another node and find an empty directory there: it crawls its shard again
and the publisher skips what the hub has (duplicates at most, never a gap) -- put ``--work`` on a shared
file system to keep the checkpoints.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ccrawl.errors import EXIT_TEMPORARY, CcrawlError, UsageError
from ccrawl.jsontypes import Record

#: Seconds a stopping process gets after SIGTERM before SIGKILL (the crawl seals its open shards).
STOP_GRACE = 20.0
#: CPUs a shard task reserves on Ray: the crawl is network- and render-bound (bench/README.md "Recrawl
#: engine": about 180-280 pages/s on 2 cores with the extract pool busy), the publisher mostly waits.
DEFAULT_CPUS = 1.0


@dataclass(frozen=True, slots=True)
class ShardSpec:
    """Everything one shard task needs: it crosses the process (and machine) boundary to the task."""

    index: int
    count: int
    source: str
    repo: str
    directory: str
    server: str
    kind: str = "domains"
    watch: float = 30.0
    commit_every: int = 4
    restarts: int = 10
    run_args: tuple[str, ...] = ()
    publish_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"shard-{self.index}of{self.count}"


@dataclass(slots=True)
class ShardOutcome:
    """What one shard task did: its exits, restarts, and the attempt that finished (1 = no retry)."""

    index: int
    count: int
    attempt: int
    run_restarts: int
    publish_restarts: int
    seconds: float
    directory: str

    def record(self) -> Record:
        return {"shard": self.index, "shards": self.count, "attempt": self.attempt,
                "run_restarts": self.run_restarts, "publish_restarts": self.publish_restarts,
                "seconds": round(self.seconds, 3), "dir": self.directory}


def shard_directory(work: Path, index: int, count: int) -> Path:
    return work / f"shard-{index}of{count}"


def run_argv(spec: ShardSpec) -> list[str]:
    d = Path(spec.directory)
    return [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", spec.source, "--out", str(d / "captures"),
            "--state", str(d / "recrawl.json"), "--shard", str(spec.index), "--shards", str(spec.count),
            "--progress", "none", "--journal", str(d / "journal.jsonl"), *spec.run_args]


def publish_argv(spec: ShardSpec) -> list[str]:
    d = Path(spec.directory)
    return [sys.executable, "-m", "ccrawl", "recrawl", "publish", "--dir", str(d / "captures"),
            "--state", str(d / "recrawl.json"), "--repo", spec.repo, "--kind", spec.kind, "--server", spec.server,
            "--shard", str(spec.index), "--shards", str(spec.count), "--commit-every", str(spec.commit_every),
            "--watch", f"{spec.watch:g}", "--progress", "none", *spec.publish_args]


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the task's process dies (an engine's kill takes the shard with it)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


#: Set when a fleet driven from this process stops: its thread tasks then restart nothing.
_STOPPING = threading.Event()
#: Children started by tasks running in this process (local thread tasks), so a failing fleet can stop the rest.
_LOCAL_CHILDREN: set[_Child] = set()


class _Child:
    """One of the shard's two processes, restarted in place on exit 75 like a container under OnFailure."""

    def __init__(self, what: str, argv: list[str], log: Path, env: dict[str, str]) -> None:
        self.what, self.argv, self.log_path, self.env = what, argv, log, env
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.finished = False
        self._log: IO[bytes] | None = None

    def start(self) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed when the process is reaped)
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     env=self.env, preexec_fn=_die_with_parent)
        _LOCAL_CHILDREN.add(self)

    def poll(self) -> int | None:
        assert self.proc is not None
        code = self.proc.poll()
        if code is not None:
            _LOCAL_CHILDREN.discard(self)
            if self._log is not None:
                self._log.close()
                self._log = None
        return code

    def last_line(self) -> str:
        try:
            lines = [ln for ln in self.log_path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def stop(self, grace: float = STOP_GRACE) -> None:
        """SIGTERM, then SIGKILL past ``grace`` (the crawl seals what it has on SIGTERM)."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self.poll()


def _crawl_done(spec: ShardSpec) -> bool:
    """The shard's checkpoint says the whole work list is done."""
    from ccrawl.recrawl.standing import read_state

    progress = read_state(Path(spec.directory) / "recrawl.json", spec.index, spec.count)
    return progress is not None and progress.done


def run_shard(spec: ShardSpec) -> ShardOutcome:
    """The body of one fleet task (any executor): run and publish shard ``spec.index`` until both are done."""
    started = time.perf_counter()
    d = Path(spec.directory)
    (d / "captures").mkdir(parents=True, exist_ok=True)
    with open(d / "attempts", "a", encoding="utf-8") as fh:  # one line per start: the retries, and whose pid
        fh.write(f"{os.getpid()} {time.time():.3f}\n")
    attempt = len((d / "attempts").read_text().splitlines())
    env = {**os.environ, **spec.env}
    run = _Child("recrawl run", run_argv(spec), d / "run.log", env)
    pub = _Child("recrawl publish", publish_argv(spec), d / "publish.log", env)
    children = (run, pub)
    try:
        for child in children:
            child.start()
        while not all(c.finished for c in children):
            time.sleep(0.2)
            for child in children:
                if child.finished:
                    continue
                code = child.poll()
                if code is None:
                    continue
                if _STOPPING.is_set():
                    raise KeyboardInterrupt  # this process's fleet is stopping: no restart
                if code == 0 and (run.finished or (child is run and _crawl_done(spec))):
                    child.finished = True
                elif code in (0, EXIT_TEMPORARY) and child.restarts < spec.restarts:
                    # exit 0 before the crawl is done: stopped from outside (SIGTERM), so resume it
                    # exit 75 (a lock still held, a stall): start it again in place, after a short pause
                    child.restarts += 1
                    time.sleep(min(30.0, 0.5 * 2 ** min(child.restarts, 6)))
                    child.start()
                else:
                    raise CcrawlError(f"recrawl fleet: {spec.name}: {child.what} exited {code}"
                                      f"{' after ' + str(child.restarts) + ' restarts' if child.restarts else ''}: "
                                      f"{child.last_line() or 'no output'} (log: {child.log_path})")
    finally:
        # a cancelled task (KeyboardInterrupt from the engine) or a failed sibling: stop cleanly, sealed
        for child in children:
            child.stop()
    return ShardOutcome(spec.index, spec.count, attempt, run.restarts, pub.restarts,
                        time.perf_counter() - started, spec.directory)


@dataclass(slots=True)
class FleetOptions:
    """``recrawl fleet``: the flags, passed straight through by the CLI."""

    shards: int
    source: str
    repo: str
    work: Path = Path("fleet")
    server: str = "fleet"
    kind: str = "domains"
    watch: float = 30.0
    commit_every: int = 4
    restarts: int = 10
    executor: str = "local"
    ray_address: str = ""
    cpus_per_shard: float = DEFAULT_CPUS
    task_retries: int = 3
    run_args: tuple[str, ...] = ()
    publish_args: tuple[str, ...] = ()
    status_addr: str | None = None  #: host:port of one status page over every shard's journal

    def validate(self) -> None:
        from ccrawl.scale.rayexec import check_executor

        if self.shards < 1:
            raise UsageError(f"--shards must be at least 1, not {self.shards}")
        if not self.source:
            raise UsageError("give --from: the work list every shard reads (domains, urls, a repo or a directory)")
        if not self.repo:
            raise UsageError("give --repo owner/name: the dataset repo the publishers commit to")
        if self.cpus_per_shard <= 0:
            raise UsageError(f"--cpus-per-shard must be more than 0, not {self.cpus_per_shard:g}")
        for flag, value in (("--restarts", self.restarts), ("--task-retries", self.task_retries)):
            if value < 0:
                raise UsageError(f"{flag} must be 0 or more, not {value}")
        if self.commit_every < 1:
            raise UsageError(f"--commit-every must be at least 1, not {self.commit_every}")
        owned = {"--shard", "--shards", "--out", "--state", "--dir", "--repo", "--server", "--kind", "--watch",
                 "--commit-every", "--journal"}
        for args in (self.run_args, self.publish_args):
            for arg in args:
                if arg.split("=", 1)[0] in owned:
                    raise UsageError(f"recrawl fleet sets {arg.split('=', 1)[0]} for each shard; drop it from the "
                                     "arguments passed through")
        self.executor = check_executor(self.executor)
        self.work = Path(self.work)

    def specs(self) -> list[ShardSpec]:
        from ccrawl.scale.rayexec import forwarded_env

        env = forwarded_env()
        work = self.work.resolve()
        return [ShardSpec(i, self.shards, self.source, self.repo, str(shard_directory(work, i, self.shards)),
                          self.server, self.kind, self.watch, self.commit_every, self.restarts, self.run_args,
                          self.publish_args, env)
                for i in range(self.shards)]


def run_fleet(opts: FleetOptions, *, log: Callable[[str], None] | None = None) -> Iterator[Record]:
    """Start every shard task, yield one record per shard as it finishes; the first failure ends the fleet."""
    opts.validate()
    _STOPPING.clear()
    say = log or (lambda _msg: None)
    opts.work.mkdir(parents=True, exist_ok=True)
    specs = opts.specs()
    with contextlib.ExitStack() as stack:
        pool: Executor
        if opts.executor == "ray":
            from ccrawl.scale.rayexec import RayPool, cluster

            ray = stack.enter_context(cluster(opts.ray_address, log=say))
            pool = RayPool(ray, num_cpus=opts.cpus_per_shard, max_retries=opts.task_retries, what="shards", log=say)
        else:
            pool = stack.enter_context(ThreadPoolExecutor(max_workers=opts.shards, thread_name_prefix="fleet"))
        say(f"recrawl fleet: {opts.shards} shard(s) of {opts.source} on {opts.executor}, publishing to {opts.repo}; "
            f"logs and checkpoints under {opts.work}/shard-<i>of{opts.shards}/")
        from ccrawl.scale.fleetpage import FleetPage

        # the shards' journals, summed: a progress line every 30 s (and as shards end), and the page
        page = FleetPage([Path(s.directory) for s in specs], opts.status_addr, say=say)
        stack.callback(page.close)
        if page.server is not None:
            say(f"recrawl fleet: status page on {page.server.url}")
        running: dict[Future[ShardOutcome], ShardSpec] = {pool.submit(run_shard, s): s for s in specs}
        finished = 0
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    spec = running.pop(fut)
                    outcome = fut.result()
                    finished += 1
                    retried = f", attempt {outcome.attempt}" if outcome.attempt > 1 else ""
                    say(f"recrawl fleet: {spec.name} crawled and published in {outcome.seconds:.1f}s{retried} "
                        f"({finished} of {opts.shards} done)")
                    yield outcome.record()
        except BaseException:
            if isinstance(pool, ThreadPoolExecutor):
                # local tasks are threads: nothing interrupts them but their processes ending (SIGTERM, sealed)
                _STOPPING.set()
                for child in list(_LOCAL_CHILDREN):
                    child.stop()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
