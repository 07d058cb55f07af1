"""The stall clock: bounded calls, backoff on a busy hub, exit 75 once the budget is spent."""

from __future__ import annotations

import threading
import time

import pytest

from ccrawl.errors import EXIT_TEMPORARY, TemporaryFailure
from ccrawl.hub.repo import HubBusy
from ccrawl.hub.stall import StallClock


def test_a_call_that_never_returns_is_abandoned_when_the_budget_runs_out() -> None:
    clock = StallClock(0.3)
    never = threading.Event()
    started = time.monotonic()
    with pytest.raises(TemporaryFailure, match="did not return") as err:
        clock.bounded("commit", never.wait)
    assert err.value.exit_code == EXIT_TEMPORARY
    assert time.monotonic() - started < 2
    never.set()


def test_busy_answers_are_retried_with_growing_waits_and_retry_after_wins() -> None:
    slept: list[float] = []
    answers = [HubBusy("429"), HubBusy("503"), HubBusy("429", retry_after=0.25), "ok"]

    def call() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = StallClock(60, backoff=0.1, backoff_max=10, sleep=slept.append)
    assert clock.retrying("commit", call) == "ok"
    assert clock.retries == 3
    assert 0.05 <= slept[0] < 0.15 and 0.1 <= slept[1] < 0.3  # base 0.1 then 0.2, jittered by [0.5, 1.5)
    assert slept[2] == 0.25


def test_a_wait_that_would_overrun_the_budget_fails_now_instead() -> None:
    clock = StallClock(1.0, sleep=lambda s: pytest.fail(f"slept {s}"))

    def busy() -> None:
        raise HubBusy("429", retry_after=30)

    with pytest.raises(TemporaryFailure, match="no commit landed for 1s"):
        clock.retrying("commit", busy)


def test_progress_restarts_the_budget() -> None:
    clock = StallClock(0.2)
    time.sleep(0.25)
    assert clock.left() < 0
    clock.progressed()
    assert clock.left() > 0.1
    assert clock.bounded("read", lambda: 42) == 42


def test_errors_other_than_busy_propagate_unchanged() -> None:
    clock = StallClock(5)

    def broken() -> None:
        raise ValueError("not a hub problem")

    with pytest.raises(ValueError, match="not a hub problem"):
        clock.retrying("commit", broken)
    assert clock.retries == 0
