"""Runs a fetch process's event loop on uvloop when it is installed, asyncio's otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TypeVar

T = TypeVar("T")


def loop_name() -> str:
    """``"uvloop"`` or ``"asyncio"``: what :func:`run` will use, for the run summary."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[object, None, T], *, use_uvloop: bool = True) -> T:
    """``asyncio.run(main)`` on a uvloop loop when available and wanted."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                return runner.run(main)
    return asyncio.run(main)
