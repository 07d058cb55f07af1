"""The immediate SIGINT exit of the CLI: one line, exit code 130, no traceback.

Installed by :mod:`ccrawl._entry` on import (before the rest of the CLI is imported) and again by
:func:`ccrawl.cli.main.main` once the command has run. Apart from ``_entry`` so the CLI can use it
without importing its own entry point.
"""

from __future__ import annotations

import contextlib
import os
import signal
from types import FrameType

EXIT_INTERRUPTED = 130


def interrupted_now(signum: int, frame: FrameType | None) -> None:
    """SIGINT before (or after) the command runs: the one line, then exit 130 right away."""
    try:
        os.write(2, b"ccrawl: interrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


def install() -> None:
    """Make SIGINT exit at once (only the main thread may set handlers; elsewhere do nothing)."""
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, interrupted_now)
