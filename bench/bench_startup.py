"""Cold start of the CLI: `ccrawl --help` and `ccrawl version`, medians of repeated fresh processes.

    python bench/bench_startup.py [--runs 20]

Also reports `python -c pass` as the floor every Python command pays.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (floor)": [sys.executable, "-c", "pass"],
    "ccrawl --help": [sys.executable, "-m", "ccrawl", "--help"],
    "ccrawl version": [sys.executable, "-m", "ccrawl", "version"],
    "ccrawl url --help": [sys.executable, "-m", "ccrawl", "url", "--help"],
}


def measure(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print("| command | median ms | min ms | max ms |")
    print("|---|---|---|---|")
    for name, argv in CASES.items():
        times = measure(argv, args.runs)
        print(f"| `{name}` | {statistics.median(times):.0f} | {min(times):.0f} | {max(times):.0f} |")


if __name__ == "__main__":
    main()
