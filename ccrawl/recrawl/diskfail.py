"""A full disk or an unwritable ``--out`` mid-run: one line, exit 75, the checkpoint intact.

Every write to ``--out`` happens in a writer process (the shards) or in the parent (the
checkpoint and the renames). Both turn an ``OSError`` of the disk kind (no space, quota, file
too large, read-only, permission, I/O error) into a :class:`DiskFailure`: a writer sends its message to
the parent as a ``Crash(disk=True)`` event and exits quietly (no traceback), the parent raises it as a
:class:`TemporaryFailure`. Nothing is lost: a write that failed was never checkpointed, so the
resume fetches those rows again (WARC files are cut back to their checkpointed length, Parquet
``.tmp`` files swept). Any other error still surfaces as it is.

``CCRAWL_TEST_FSIZE_LIMIT=<bytes>`` (tests only) sets ``RLIMIT_FSIZE`` in the writer processes,
so a test fills "the disk" without root and without limiting the parent's shared memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

from ccrawl.errors import CcrawlError, TemporaryFailure

if TYPE_CHECKING:
    from ccrawl.recrawl.ring import Ring

DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})
_FSIZE_ENV = "CCRAWL_TEST_FSIZE_LIMIT"


@dataclass(frozen=True, slots=True)
class DiskFailure:
    """A write under ``--out`` (or to ``--state``) that the disk refused."""

    out: str
    errno: int
    strerror: str
    filename: str = ""

    def message(self) -> str:
        where = f" ({self.filename})" if self.filename else ""
        code = errno.errorcode.get(self.errno, str(self.errno))
        return (f"writing to --out {self.out} failed: {self.strerror} [{code}]{where}; the checkpoint is intact: "
                "free space (or fix the permissions) and run again to resume")

    def error(self) -> TemporaryFailure:
        return TemporaryFailure(self.message())


def disk_failure(exc: BaseException, out: str) -> DiskFailure | None:
    """The :class:`DiskFailure` ``exc`` is, or None when it is not a disk error."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRNOS:
        return None
    return DiskFailure(out, exc.errno, exc.strerror or os.strerror(exc.errno), str(exc.filename or ""))


def crash_error(who: str, detail: str, *, disk: bool = False) -> CcrawlError:
    """The error the parent raises for a child's :class:`~ccrawl.recrawl.messages.Crash`."""
    if disk:
        return TemporaryFailure(detail)  # DiskFailure.message(): says what happened and to run again
    return CcrawlError(f"{who} failed: {detail}; the checkpoint is intact, run again to resume")


def apply_test_fsize_limit() -> None:
    """Tests only: cap the size of files this process writes (see the module docstring)."""
    limit = os.environ.get(_FSIZE_ENV)
    if limit:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def release_rings(procs: list[BaseProcess], rings: list[Ring]) -> None:
    """On a failed run: reap the killed processes, then close and unlink every ring, so the run
    leaves no shared memory behind (and the resource tracker warns of no leak)."""
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.join(timeout=5)
    for ring in rings:
        with contextlib.suppress(Exception):
            ring.close()
