"""Pacing: the per-process gap, the host-wide gap through the lock file, and the fallback warning."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

from ccrawl.net.ratelimit import GlobalRateLimiter, ProcessRateLimiter, RateLimiter

_CHILD = r"""
import asyncio, json, sys, time
from pathlib import Path
from ccrawl.net.ratelimit import GlobalRateLimiter
lim = GlobalRateLimiter(Path(sys.argv[1]), float(sys.argv[2]))
start_at = float(sys.argv[4])
time.sleep(max(0.0, start_at - time.time()))
async def main():
    out = []
    for _ in range(int(sys.argv[3])):
        await lim.acquire()
        out.append((lim.last_slot, time.time()))
    return out
print(json.dumps(asyncio.run(main())))
"""


def test_global_rate_is_shared_by_two_processes(tmp_path: Path) -> None:
    lock = tmp_path / "ratelimit.lock"
    interval, per_process = 0.05, 10
    start_at = time.time() + 1.0  # both children start taking slots at the same moment
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(lock), str(interval), str(per_process), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    got = [tuple(x) for p in procs for x in json.loads(p.communicate(timeout=60)[0])]
    assert all(p.returncode == 0 for p in procs)
    # The slots granted through the lock file: 20 in all, one interval apart whichever process took
    # them (read from the file's own clock, so a loaded machine's scheduling cannot blur them).
    slots = sorted(s for s, _ in got)
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert min(gaps) >= interval * 0.999, gaps
    # The combined rate matches the configured one (not twice it, as two private limiters would give).
    assert 19 / (slots[-1] - slots[0]) <= 1.001 / interval
    # And each process really waited for its slot before going on.
    assert all(used >= slot - 0.002 for slot, used in got)


def test_process_rate_spaces_requests() -> None:
    lim = ProcessRateLimiter(0.03)

    async def main() -> list[float]:
        out = []
        for _ in range(5):
            await lim.acquire()
            out.append(time.monotonic())
        return out

    stamps = asyncio.run(main())
    assert stamps[-1] - stamps[0] >= 4 * 0.03 * 0.95


def test_an_unlockable_file_falls_back_to_per_process_with_one_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the data dir should be")
    warnings: list[str] = []
    lim = GlobalRateLimiter(blocker / "ratelimit.lock", 0.02, warn=warnings.append)

    async def main() -> float:
        started = time.monotonic()
        for _ in range(4):
            await lim.acquire()
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    assert len(warnings) == 1 and "cannot lock" in warnings[0] and "paces this process alone" in warnings[0]
    assert not lim.shared
    assert elapsed >= 3 * 0.02 * 0.95  # still paced, only no longer shared


def test_global_rate_zero_turns_the_shared_limiter_off(tmp_path: Path) -> None:
    lim = RateLimiter(rate=0.0, global_rate=0.0, lock_path=tmp_path / "ratelimit.lock")
    assert lim.host is None
    assert "--global-rate off" in lim.describe()
    assert not (tmp_path / "ratelimit.lock").exists()


def test_a_slot_far_in_the_future_is_treated_as_a_clock_jump(tmp_path: Path) -> None:
    import struct

    lock = tmp_path / "ratelimit.lock"
    lock.write_bytes(struct.pack("<qq", time.time_ns() + 10 * 3600 * 10**9, 0))
    assert GlobalRateLimiter(lock, 0.5).reserve() == 0.0
