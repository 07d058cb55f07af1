"""What every worker process shares (the recrawl pipeline's, the crawl's partitions): start-up, CPUs, peak memory.

Child processes are started with the ``spawn`` method (pyarrow's and aiohttp's threads do not
survive a fork), die with the parent (``PR_SET_PDEATHSIG`` where Linux offers it, and an EOF
on their parent pipe everywhere), and ignore SIGINT/SIGTERM: stopping is the parent's call,
so a Ctrl-C on the process group drains the pipeline instead of killing it mid-row.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15

#: Tests only: a child whose role name (``fetch-0``, ``extract-1``, ``writer-0``) this variable holds
#: stops itself with SIGSTOP right after its start-up, before it reports ``Ready`` (issue #37).
STOP_BEFORE_READY_ENV = "CCRAWL_TEST_STOP_BEFORE_READY"


def cores() -> int:
    """CPUs this process may run on (affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def child_setup(role: str = "") -> None:
    """Start-up of every pipeline process: die with the parent, leave signals to it.

    ``role`` (``fetch-0``, ``writer-1``, ...) becomes the process's name in ``ps``/``top``
    (``cc-fetch-0``; Linux keeps 15 bytes of it), so a missing or stuck process can be told apart.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if role:
                libc.prctl(_PR_SET_NAME, ctypes.c_char_p(f"cc-{role}".encode()[:15]))
        except (OSError, AttributeError):
            pass  # the parent pipe's EOF still ends the process
    if role and os.environ.get(STOP_BEFORE_READY_ENV) == role:
        os.kill(os.getpid(), signal.SIGSTOP)


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux reports ru_maxrss in KB)."""
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(kb / 1024 if sys.platform != "darwin" else kb / 1048576, 1)
