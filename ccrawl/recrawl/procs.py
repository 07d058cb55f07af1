"""What every pipeline process shares: its start-up, its messages to the parent, and row metadata.

Child processes are started with the ``spawn`` method (pyarrow's and aiohttp's threads do not
survive a fork), die with the parent (``PR_SET_PDEATHSIG`` where Linux offers it, and an EOF
on their parent pipe everywhere), and ignore SIGINT/SIGTERM: stopping is the parent's call,
so a Ctrl-C on the process group drains the pipeline instead of killing it mid-row.
"""

from __future__ import annotations

import ctypes
import pickle
import signal
import sys
from typing import Any

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


def pack_meta(meta: dict[str, Any]) -> bytes:
    """Row fields other than the body; small, so pickle is the right tool."""
    return pickle.dumps(meta, protocol=pickle.HIGHEST_PROTOCOL)


def unpack_meta(blob: bytes) -> dict[str, Any]:
    value = pickle.loads(blob)
    assert isinstance(value, dict)
    return value
