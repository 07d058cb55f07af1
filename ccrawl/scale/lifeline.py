"""A pool worker that exits when the process that made its pool does, however that process died.

``ProcessPoolExecutor`` workers wait on the call queue, and after a SIGKILL of the pool's owner
that wait never ends: under ``forkserver`` the workers are the fork server's children, and each
keeps the fork server alive in turn, so a killed ``markdown export --workers N`` left the fork
server, N workers and the resource tracker behind for good. ``PR_SET_PDEATHSIG`` does not help
there: it follows the *thread* that started the process, which is the fork server (or, under
``fork``, whichever of the owner's threads first submitted work).

:func:`exit_with` is a pool ``initializer``: it opens a pidfd on the owner (Linux 5.3+), and a
daemon thread blocks on it and ends the worker the moment the owner is gone. Where pidfds are
missing it checks the owner once a second instead. The fork server and the resource tracker then
see their last client go and exit by themselves.
"""

from __future__ import annotations

import os
import select
import threading
import time

#: Seconds between checks where the owner cannot be watched with a pidfd.
POLL_SECONDS = 1.0


def exit_with(owner: int) -> None:
    """In a pool worker: end this process when ``owner`` (the pool's creator, by pid) exits."""
    try:
        fd = os.pidfd_open(owner)
    except (AttributeError, OSError):
        fd = -1
    if fd < 0 and not _alive(owner):
        os._exit(1)  # the owner died while this worker was starting
    threading.Thread(target=_watch, args=(owner, fd), name="exit-with-owner", daemon=True).start()


def _watch(owner: int, fd: int) -> None:
    if fd >= 0:
        select.select([fd], [], [])  # a pidfd turns readable when its process exits
    else:
        while _alive(owner):
            time.sleep(POLL_SECONDS)
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
