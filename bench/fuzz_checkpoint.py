"""Long fuzz run of the recrawl checkpoint loader (issue #13): hostile ``--state`` files for a
fixed time, counting examples, accepted and refused. A failure prints the input and exits 1.

    nice -n 19 python bench/fuzz_checkpoint.py --minutes 30

The property is :func:`tests.recrawl.statefuzz.check_load`; ``tests/recrawl/test_checkpoint_fuzz.py``
runs the same property bounded, in CI.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.recrawl
from tests.recrawl.statefuzz import check_load, documents, prepare_out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--report", help="write the counts as JSON here too")
    args = ap.parse_args()
    outcomes: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + args.minutes * 60
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fuzz-checkpoint-") as tmp:
        root = Path(tmp)
        out = prepare_out(root)
        state = root / "state.json"

        @settings(max_examples=500, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck))
        @given(data=documents())
        def prop(data: bytes) -> None:
            outcomes[check_load(state, out, data)] += 1

        rounds = 0
        while time.monotonic() < deadline:
            prop()  # a fresh random seed per round; a failure shrinks, raises and ends the run
            rounds += 1
    elapsed = time.monotonic() - started
    total = sum(outcomes.values())
    report = {"target": "checkpoint-loader", "examples": total, "accepted": outcomes["accepted"],
              "refused": outcomes["refused"], "failures": 0, "rounds": rounds, "seconds": round(elapsed, 1)}
    print(json.dumps(report))
    if args.report:
        Path(args.report).write_text(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
