"""The owner of an output directory: an exclusive ``flock`` on ``<out>/.ccrawl.lock`` for one run.

Two runs writing into one ``--out`` wipe each other: each start sweeps the ``.tmp`` files no
checkpoint of *its own* covers, which includes the files the other run is writing (issue #13).
So a run takes this lock before it repairs or writes anything in ``--out`` and holds it to the
end; a second run is refused with :class:`TemporaryFailure` (exit 75: run it again once the
first is done) naming the holder's pid. The kernel drops the lock when its process dies, however
it dies, so a killed run never leaves a stale lock behind; the file itself stays, harmlessly.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from ccrawl.errors import TemporaryFailure

LOCK_NAME = ".ccrawl.lock"


class OutputLock:
    """``with OutputLock(out):`` owns ``out`` for the block; :meth:`acquire` / :meth:`release` too."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.path = self.out / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> OutputLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise TemporaryFailure(
                f"--out {self.out} is in use by another run ({holder}); wait for it to finish, "
                "or give this run another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor drops the flock

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "pid unknown"
