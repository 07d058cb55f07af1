"""``--executor ray``: a Ray cluster as a ``concurrent.futures`` executor; a pipeline swaps its pool, keeps its code.

The batch pipelines (``markdown export``, ``news publish``, ``recrawl fleet``) already hand work units to a
pool and act on the results in the driver (commits, ledgers, summaries). :class:`RayPool` is that pool on
a Ray cluster: :meth:`~RayPool.submit` runs the same function as a Ray task and returns an ordinary
:class:`~concurrent.futures.Future`, so ``wait(..., FIRST_COMPLETED)`` and the commit logic do not change.
Only the driver commits and writes ledgers, once per unit, whatever Ray retried underneath: a task killed
by the engine is retried by Ray (``max_retries``) and rewrites the same deterministic file names.

The cluster: ``--ray-address`` (or ``RAY_ADDRESS``) joins a running one; otherwise a local cluster sized to
this machine is started and shut down at the end. A cluster already initialised in this process (a test's,
a notebook's) is used as it is and left running. Ray is an optional extra: without it, ``--executor ray`` is
one line naming ``ccrawl[ray]`` (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ParamSpec, TypeVar

from ccrawl.errors import CcrawlError, TemporaryFailure, UsageError

P = ParamSpec("P")
T = TypeVar("T")

EXECUTORS = ("local", "ray")
MISSING = "--executor ray needs Ray, which is not installed: pip install 'ccrawl[ray]'"
#: Environment a task must see as the driver does (joined clusters do not inherit the driver's environment).
_FORWARD_PREFIXES = ("CCRAWL_", "HF_", "HUGGINGFACE_")


def check_executor(executor: str) -> str:
    """``--executor`` normalised; ``ray`` without Ray installed is the one-line usage error."""
    name = (executor or "local").strip().lower()
    if name not in EXECUTORS:
        raise UsageError(f"--executor {executor!r}: use local or ray")
    if name == "ray":
        import_ray()
    return name


def import_ray() -> ModuleType:
    """The ``ray`` module, or :data:`MISSING` as a :class:`UsageError` (exit 2)."""
    try:
        import ray
    except ImportError:
        raise UsageError(MISSING) from None
    return ray


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables tasks on a joined cluster need from the driver: ccrawl's settings and the Hub's."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k.startswith(_FORWARD_PREFIXES)}


@contextlib.contextmanager
def cluster(address: str = "", *, num_cpus: int | None = None, log: Callable[[str], None] | None = None
            ) -> Iterator[ModuleType]:
    """A connected Ray: the one this process already has, the one at ``address``/``RAY_ADDRESS``, or a local one.

    Only a cluster started here is shut down on exit (so a Ctrl-C leaves no raylet behind).
    """
    ray = import_ray()
    say = log or (lambda _msg: None)
    messages_to_stderr()
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS", "")
    started = time.perf_counter()
    kwargs: dict[str, object] = {"include_dashboard": False, "log_to_driver": True, "configure_logging": False}
    if address:
        kwargs["runtime_env"] = {"env_vars": forwarded_env()}
        ray.init(address=address, **kwargs)
        where = f"joined the Ray cluster at {address}"
    else:
        kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
        ray.init(address="local", **kwargs)
        where = f"started a local Ray cluster with {kwargs['num_cpus']} CPU(s)"
    say(f"ray: {where} in {time.perf_counter() - started:.1f}s")
    try:
        yield ray
    finally:
        stop_autoscaler_monitor()
        ray.shutdown()


def stop_autoscaler_monitor() -> None:
    """Kill the autoscaler monitor of the cluster this process started, just before ``ray.shutdown()``.

    ``ray.shutdown()`` stops the cluster's processes one at a time, giving each a second after SIGTERM
    before SIGKILL. The autoscaler monitor does not exit on SIGTERM, so every run waited that second out
    (measured: 1.0 of a 1.35 s shutdown; bench/README.md, "Ray executor retaken"). A local cluster of a
    fixed size has nothing to autoscale, so the monitor is killed outright and Ray finds it gone. Ray
    keeps its processes in a private table: on another layout nothing is done and the shutdown is as before.
    """
    try:
        from ray._private import ray_constants, worker

        node = worker._global_node
        table: dict[str, list[object]] = node.all_processes if node is not None else {}
        infos = list(table.get(ray_constants.PROCESS_TYPE_MONITOR, ()))
    except (ImportError, AttributeError):
        return
    for info in infos:
        process = getattr(info, "process", None)
        if process is None or process.poll() is not None:
            continue
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(Exception):
            process.wait(timeout=5)


def messages_to_stderr() -> None:
    """Ray prints its workers' output and its own notices ("a worker died ...") on the driver's stdout; ccrawl's
    stdout carries records (``-o jsonl``), so send them all to stderr. Ray has no option for it: wrap its printer.
    """
    try:
        from ray._private import worker
    except ImportError:  # another layout: Ray's default printing stays
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "_ccrawl_stderr", False):
        return

    def to_stderr(data: dict[str, object], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix=ignore_prefix)

    to_stderr._ccrawl_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def cluster_cpus(ray: ModuleType) -> int:
    """CPUs the cluster offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@dataclass(slots=True)
class Tally:
    """Tasks of one pool, for the driver's progress lines."""

    submitted: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0
    started: float = field(default_factory=time.perf_counter)

    def line(self, what: str) -> str:
        took = time.perf_counter() - self.started
        running = self.submitted - self.done - self.failed - self.cancelled
        return (f"ray: {self.done} of {self.submitted} {what} done, {self.failed} failed, "
                + (f"{self.cancelled} cancelled, " if self.cancelled else "")
                + f"{running} running or queued ({took:.1f}s)")


class RayPool(Executor):
    """``submit`` runs ``fn(*args)`` as a Ray task and returns a plain Future of its result.

    ``num_cpus`` is what each task reserves (the stage's measured cost: a CPU-bound conversion takes one);
    ``max_retries`` is how often Ray reruns a task whose worker died (SIGKILL, OOM, a lost node) -- the
    functions submitted here write deterministic names, so a rerun replaces, never adds. A task that
    raises is not retried: its error comes back through the future as the original exception.
    """

    def __init__(self, ray: ModuleType, *, num_cpus: float = 1.0, max_retries: int = 3, what: str = "tasks",
                 log: Callable[[str], None] | None = None, progress_every: float = 10.0) -> None:
        self.ray = ray
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self.what = what
        self.log = log or (lambda _msg: None)
        self.progress_every = progress_every
        self.tally = Tally()
        self._refs: dict[object, Future[Any]] = {}
        self._remote: dict[Callable[..., Any], Any] = {}
        self._lock = threading.Lock()
        self._last_line = time.monotonic()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self.ray.remote(num_cpus=self.num_cpus, max_retries=self.max_retries,
                                     retry_exceptions=False)(fn)
            self._remote[fn] = remote
        ref = remote.remote(*args, **kwargs)
        out: Future[T] = Future()
        out.set_running_or_notify_cancel()
        with self._lock:
            self._refs[ref] = out
            self.tally.submitted += 1
        ref.future().add_done_callback(lambda inner, ref=ref: self._settle(ref, inner))
        return out

    def _settle(self, ref: object, inner: Future[Any]) -> None:
        with self._lock:
            out = self._refs.pop(ref, None)
        if out is None or out.done():
            return
        try:
            result = inner.result()
        except BaseException as exc:
            error = unwrap(self.ray, exc, self.max_retries)
            if isinstance(error, KeyboardInterrupt):
                self.tally.cancelled += 1
            else:
                self.tally.failed += 1
            out.set_exception(error)
        else:
            self.tally.done += 1
            out.set_result(result)
        now = time.monotonic()
        if now - self._last_line >= self.progress_every:
            self._last_line = now
            self.log(self.tally.line(self.what))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """With ``cancel_futures``: interrupt every running task (KeyboardInterrupt in it), then force."""
        if not cancel_futures:
            return
        with self._lock:
            pending = list(self._refs)
        if not pending:
            return
        for ref in pending:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=False)
        # a task that takes its KeyboardInterrupt cleans up (a shard's children get SIGTERM and seal);
        # one that does not stop within the grace is killed. Only those: a forced cancel of a task whose
        # reply is already on its way trips a check in Ray's core worker (2.60: "Tried to complete task
        # that was not pending"), which takes the driver down with it.
        ready: list[object] = []
        with contextlib.suppress(Exception):
            ready, _ = self.ray.wait(pending, num_returns=len(pending), timeout=GRACE)
        stopped = set(ready)
        for ref in pending:
            if ref in stopped:
                continue
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
        self.log(f"ray: cancelled {len(pending)} {self.what} still running; the next run resumes them")


#: Seconds a cancelled task gets to stop by itself before it is killed.
GRACE = 30.0


def unwrap(ray: ModuleType, exc: BaseException, retries: int) -> BaseException:
    """The task's own exception (``RayTaskError`` wraps it), or a ccrawl error for the engine's failures."""
    from ray import exceptions as rex

    if isinstance(exc, rex.RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            return cause
        return CcrawlError(f"ray: a task failed: {exc}")
    if isinstance(exc, rex.TaskCancelledError):
        return KeyboardInterrupt()
    if isinstance(exc, rex.WorkerCrashedError | rex.NodeDiedError | rex.OwnerDiedError | rex.ObjectLostError):
        return TemporaryFailure(f"ray: a task's worker died {retries + 1} time(s) ({type(exc).__name__}); "
                                "run the same command again to resume")
    unserializable = getattr(rex, "UnserializableException", None)
    if unserializable is not None and isinstance(exc, unserializable):
        # the task's exception did not survive pickling (a custom __init__): keep its last line, the message
        return CcrawlError(_last_line(str(exc.args[0] if exc.args else exc)))
    if isinstance(exc, rex.RayError):
        return TemporaryFailure(f"ray: {type(exc).__name__}: {_last_line(str(exc))}")
    return exc


def _last_line(text: str) -> str:
    """``pkg.Class: message`` of a traceback's last line, as ``message`` (colour codes dropped)."""
    import re

    lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else text.strip()
    head, sep, rest = last.partition(": ")
    return rest if sep and re.fullmatch(r"[\w.]+", head) else last


def task_log(message: str) -> None:
    """A line from inside a task: Ray forwards a worker's stderr to the driver's."""
    print(message, file=sys.stderr, flush=True)


__all__ = ["EXECUTORS", "MISSING", "RayPool", "check_executor", "cluster", "cluster_cpus", "forwarded_env",
           "import_ray", "stop_autoscaler_monitor", "task_log", "unwrap"]
