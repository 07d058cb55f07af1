"""What every pipeline process shares: its start-up and its peak memory (messages: :mod:`.messages`).

Child processes are started with the ``spawn`` method (pyarrow's and aiohttp's threads do not
survive a fork), die with the parent (``PR_SET_PDEATHSIG`` where Linux offers it, and an EOF
on their parent pipe everywhere), and ignore SIGINT/SIGTERM: stopping is the parent's call,
so a Ctrl-C on the process group drains the pipeline instead of killing it mid-row.
"""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def child_setup() -> None:
    """Start-up of every pipeline process: die with the parent, leave signals to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass  # the parent pipe's EOF still ends the process


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux reports ru_maxrss in KB)."""
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(kb / 1024 if sys.platform != "darwin" else kb / 1048576, 1)
