"""Run one fuzz target of ccrawl.testing.fuzz for a while and print how many examples it tried.

    python bench/fuzz.py --target warc --minutes 30
    python bench/fuzz.py --target all --minutes 1      # each target in turn

Hypothesis runs in rounds of ``--batch`` examples with fresh random seeds until the time is up,
so the count is of distinct generated examples. A failing property prints hypothesis' shrunk
example and the error, and exits 1: turn it into a regression test. One example running over 60 s
counts as a hang and fails the same way. The peak RSS of this process
is printed too (the targets must keep memory bounded), and a peak over ``--max-rss-mb`` fails.
"""

from __future__ import annotations

import argparse
import resource
import signal
import sys
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from ccrawl import accel
from ccrawl.testing.fuzz import TARGETS

#: One example running longer than this is a hang (the checks' own time budgets are far smaller).
HANG_SECONDS = 60.0


def _hang(signum: int, frame: object) -> None:
    raise TimeoutError(f"one example ran over {HANG_SECONDS:.0f} s")


def run_target(name: str, seconds: float, batch: int) -> tuple[int, int]:
    """Examples tried and rounds run; raises the property's error when one fails."""
    target = TARGETS[name]
    count = 0
    rounds = 0

    @settings(max_examples=batch, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(target.strategy)
    def one_round(example: Any) -> None:
        nonlocal count
        count += 1
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)  # a hang becomes a failing example
        try:
            target.check(example)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    signal.signal(signal.SIGALRM, _hang)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        one_round()
        rounds += 1
    return count, rounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--target", required=True, choices=[*sorted(TARGETS), "all"])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=100, help="examples per hypothesis round")
    parser.add_argument("--max-rss-mb", type=float, default=1500)
    args = parser.parse_args(argv)
    names = sorted(TARGETS) if args.target == "all" else [args.target]
    native = "off" if accel.extensions_disabled() else "on"
    status = 0
    for name in names:
        started = time.monotonic()
        try:
            count, rounds = run_target(name, args.minutes * 60, args.batch)
            result = "no failure"
        except Exception as exc:  # the property's failure, after hypothesis shrank it
            notes = " | ".join(getattr(exc, "__notes__", []))  # hypothesis' falsifying example
            count, rounds, result = -1, -1, f"FAILED: {type(exc).__name__}: {exc} | {notes}"
            status = 1
        took = time.monotonic() - started
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if rss > args.max_rss_mb:
            result += f"; peak RSS {rss:.0f} MB over {args.max_rss_mb:.0f}"
            status = 1
        print(f"fuzz {name}: {count} examples in {rounds} rounds, {took / 60:.1f} min, extensions {native}, "
              f"peak RSS {rss:.0f} MB: {result}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
