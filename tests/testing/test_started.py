"""A test server's start: waited for as long as it takes, never handed out before it listens."""

from __future__ import annotations

import threading
import time

import pytest

from ccrawl.testing.started import wait_started


def test_a_server_slower_than_the_old_fixed_timeouts_is_still_waited_for() -> None:
    ready = threading.Event()

    def slow() -> None:
        time.sleep(1.2)  # beyond a fixed 1 s wait; the old waits were 10-30 s, which load 14 outlasted
        ready.set()
        time.sleep(0.5)

    thread = threading.Thread(target=slow, daemon=True)
    thread.start()
    start = time.monotonic()
    wait_started(ready, thread, "slow server", limit=30)
    assert ready.is_set() and time.monotonic() - start >= 1.1


def test_a_thread_that_ends_without_starting_is_an_error_at_once() -> None:
    ready = threading.Event()
    thread = threading.Thread(target=lambda: None, daemon=True)
    thread.start()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="dead server did not start: its thread ended"):
        wait_started(ready, thread, "dead server", limit=30)
    assert time.monotonic() - start < 5


def test_a_server_that_never_starts_fails_at_the_limit_instead_of_returning() -> None:
    ready, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        with pytest.raises(RuntimeError, match="stuck server did not start within 1 s"):
            wait_started(ready, thread, "stuck server", limit=1)
    finally:
        stop.set()


def test_a_thread_that_set_ready_and_ended_counts_as_started() -> None:
    ready = threading.Event()
    thread = threading.Thread(target=ready.set, daemon=True)
    thread.start()
    thread.join()
    wait_started(ready, thread, "quick server", limit=5)
