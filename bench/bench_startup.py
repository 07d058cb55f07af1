"""Cold start of the CLI: `ccrawl --help` and `ccrawl version`, medians of repeated fresh processes.

    python bench/bench_startup.py [--runs 20]

Also reports `python -c pass` as the floor every Python command pays; the cases run
interleaved (one of each per round, so load on a shared machine hits them alike) and the last
column is each median over the floor's median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (floor)": [sys.executable, "-c", "pass"],
    "ccrawl --help": [sys.executable, "-m", "ccrawl", "--help"],
    "ccrawl version": [sys.executable, "-m", "ccrawl", "version"],
    "ccrawl url --help": [sys.executable, "-m", "ccrawl", "url", "--help"],
    "ccrawl parse --help": [sys.executable, "-m", "ccrawl", "parse", "--help"],
}


def measure(argv: list[str], runs: int) -> list[float]:
    return [wall for wall, _ in measure_cpu(argv, runs)]


def measure_cpu(argv: list[str], runs: int) -> list[tuple[float, float]]:
    """(wall ms, CPU ms of the child: user + system) per run; CPU time is less hurt by load."""
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
        out.append(((time.perf_counter() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in CASES}
    cpu: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, argv in CASES.items():
            for wall, used in measure_cpu(argv, 1):
                times[name].append(wall)
                cpu[name].append(used)
    floor = statistics.median(times["python -c pass (floor)"])
    cpu_floor = statistics.median(cpu["python -c pass (floor)"])
    print("| command | median ms | min ms | max ms | x floor | CPU ms | CPU x floor |")
    print("|---|---|---|---|---|---|---|")
    for name, got in times.items():
        median, used = statistics.median(got), statistics.median(cpu[name])
        print(
            f"| `{name}` | {median:.0f} | {min(got):.0f} | {max(got):.0f} | {median / floor:.2f}x"
            f" | {used:.0f} | {used / cpu_floor:.2f}x |"
        )


if __name__ == "__main__":
    main()
