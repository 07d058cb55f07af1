"""A profiling session: py-spy on every process of a run by role, memray inside each, one manifest.

The parent creates the session before it starts any child and calls :meth:`ProfileSession.watch`
with each child's pid and role; each child wraps its work in :func:`heap_profile` (a no-op when
profiling is off). :meth:`ProfileSession.finish` stops the samplers (py-spy writes on SIGINT),
converts every collapsed file to pprof, and writes the manifest.

Arrow's own memory pool hides allocations from memray, so the session sets
``ARROW_DEFAULT_MEMORY_POOL=system`` before anything imports pyarrow: create it first.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ccrawl import __version__
from ccrawl.errors import UsageError
from ccrawl.profiling.pprof import convert_file

HEAP_ENV = "CCRAWL_HEAP_PROFILE"


@dataclass(slots=True)
class RoleRecord:
    """What the manifest says about one process."""

    role: str
    pid: int
    started: float
    ended: float = 0.0
    files: list[str] = field(default_factory=list)


def _py_spy() -> str:
    found = shutil.which("py-spy")
    if found is None:
        raise UsageError("--profile-dir needs py-spy and memray: pip install 'ccrawl[profile]'")
    return found


class ProfileSession:
    """CPU (py-spy) and heap (memray) profiles for every process of one run."""

    def __init__(self, directory: str | Path, name: str, *, rate_hz: int = 100) -> None:
        if not name or "/" in name:
            raise UsageError(f"--profile-name must be a plain file name, not {name!r}")
        try:
            import memray  # noqa: F401
        except ImportError:
            raise UsageError("--profile-dir needs py-spy and memray: pip install 'ccrawl[profile]'") from None
        self.py_spy = _py_spy()
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.rate_hz = rate_hz
        self.started = time.time()
        self.roles: dict[str, RoleRecord] = {}
        self._samplers: dict[str, subprocess.Popen[bytes]] = {}
        self._own_heap: Any = None
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
        # children read this to know where their heap capture goes
        os.environ[HEAP_ENV] = str(self.directory / self.name)

    def path(self, role: str, suffix: str) -> Path:
        return self.directory / f"{self.name}.{role}.{suffix}"

    def watch(self, pid: int, role: str) -> None:
        """Start sampling process ``pid`` under ``role``."""
        out = self.path(role, "collapsed")
        cmd = [self.py_spy, "record", "--pid", str(pid), "--format", "raw", "--rate", str(self.rate_hz),
               "--nonblocking", "--output", str(out)]
        self._samplers[role] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.roles[role] = RoleRecord(role, pid, time.time())

    def track_heap_here(self, role: str) -> None:
        """Record this process's own heap under ``role`` until :meth:`finish` (start children first)."""
        import memray

        path = self.path(role, "memray")
        path.unlink(missing_ok=True)
        self._own_heap = memray.Tracker(str(path), follow_fork=False)
        self._own_heap.__enter__()

    def finish(self) -> dict[str, Any]:
        """Stop every sampler, convert to pprof, write and return the manifest."""
        if self._own_heap is not None:
            self._own_heap.__exit__(None, None, None)
            self._own_heap = None
        notes: dict[str, str] = {}
        for role, proc in self._samplers.items():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            record = self.roles[role]
            record.ended = time.time()
            collapsed = self.path(role, "collapsed")
            if collapsed.exists() and collapsed.stat().st_size > 0:
                pprof = self.path(role, "pb.gz")
                convert_file(collapsed, pprof, rate_hz=self.rate_hz, duration_s=record.ended - record.started)
                record.files += [collapsed.name, pprof.name]
            else:
                last = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
                notes[role] = f"no CPU samples: {last[0] if last else 'py-spy wrote nothing'}"
            heap = self.path(role, "memray")
            if heap.exists():
                record.files.append(heap.name)
        for heap in sorted(self.directory.glob(f"{self.name}.*.memray")):
            role = heap.name[len(self.name) + 1 : -len(".memray")]
            if role not in self.roles:
                self.roles[role] = RoleRecord(role, 0, self.started, time.time(), [heap.name])
        manifest = {
            "name": self.name,
            "version": __version__,
            "argv": sys.argv,
            "started": self.started,
            "ended": time.time(),
            "rate_hz": self.rate_hz,
            "roles": [asdict(r) for r in self.roles.values()],
            "notes": notes,
        }
        (self.directory / f"{self.name}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        os.environ.pop(HEAP_ENV, None)
        return manifest


@contextlib.contextmanager
def heap_profile(role: str) -> Iterator[None]:
    """In a child process: record its heap with memray when a session asked for it, else do nothing."""
    prefix = os.environ.get(HEAP_ENV)
    if not prefix:
        yield
        return
    import memray

    path = Path(f"{prefix}.{role}.memray")
    path.unlink(missing_ok=True)
    with memray.Tracker(str(path), follow_fork=False):
        yield
