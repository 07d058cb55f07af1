"""Waiting for a test server's thread to be listening, with no silent timeout."""

from __future__ import annotations

import threading
import time

#: How long a server may take to start before the wait gives up (a loaded CI machine can be slow;
#: returning early instead would hand out port 0).
START_LIMIT_S = 600.0


def wait_started(ready: threading.Event, thread: threading.Thread, what: str, limit: float = START_LIMIT_S) -> None:
    """Block until ``ready`` is set; raise if ``thread`` ended first or ``limit`` seconds passed."""
    deadline = time.monotonic() + limit
    while not ready.wait(0.25):
        if not thread.is_alive():
            if ready.is_set():
                break
            raise RuntimeError(f"{what} did not start: its thread ended")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {limit:.0f} s")
