"""``python -m ccrawl.profiling diff A B``: the largest changes in self share, role by role."""

from __future__ import annotations

import argparse
import sys

from ccrawl.output import OutputOptions, emit
from ccrawl.profiling.diff import diff_runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ccrawl.profiling")
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("diff", help="compare two runs given as DIR/NAME prefixes")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--top", type=int, default=15)
    d.add_argument("-o", "--output", default="table")
    args = parser.parse_args(argv)
    columns = ("role", "function", "self_a", "self_b", "delta", "total_a", "total_b")
    n = emit(diff_runs(args.a, args.b, top=args.top), OutputOptions(fmt=args.output), columns=columns)
    if n == 0:
        print(f"no collapsed profiles found for {args.a} or {args.b}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
