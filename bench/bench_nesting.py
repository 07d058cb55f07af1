"""The nesting series: Markdown extraction time against depth, native and twin, and a flat page.

    python bench/bench_nesting.py [--shape tables] [--depths 10000,20000,40000] [--runs 3]

For each depth N the page is N nested units (``<table><tr><td>cell i`` ... closers) and its
flat twin is the same N units side by side (the same bytes, depth 1). Each engine runs in its
own fresh process (``CCRAWL_NO_EXTENSIONS=1`` for the pure-Python twin), nested and flat pages
interleaved, medians of ``--runs``. Prints a Markdown table with the doubling ratio (time at N
over time at N/2) and the nested/flat ratio: the walks are linear when the first stays near 2
and the second near 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SHAPES = {
    "tables": ("<table><tr><td>cell {i}, text", "</td></tr></table>"),
    "tables-in-divs": ("<table><tr><td><div>cell {i}, text", "</div></td></tr></table>"),
    "main-candidates": ("<table><tr><td role=main>cell {i}, text", "</td></tr></table>"),
    "lists": ("<ul><li>item {i} with some words", "</li></ul>"),
    "quotes": ("<blockquote><p>quoted {i} with some words, more", "</p></blockquote>"),
    "formatting": ("<b><i><em>bold {i} ", "</em></i></b>"),
    "anchors": ('<a href="/p{i}">link {i} ', "</a>"),
}

_CHILD = """
import json, sys, time
from ccrawl.extract.engines import get_extractor
open_, close, depth, flat = json.loads(sys.argv[1])
units = [open_.format(i=i) for i in range(depth)]
if flat:
    html = "<html><body>" + "".join(u + close for u in units) + "end</body></html>"
else:
    html = "<html><body>" + "".join(units) + "end" + close * depth + "</body></html>"
ex = get_extractor("h2m")
started = time.perf_counter()
ex.extract(html, "https://example.com/")
print(json.dumps([time.perf_counter() - started, len(html)]))
"""


def one(open_: str, close: str, depth: int, flat: bool, twin: bool) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if twin:
        env["CCRAWL_NO_EXTENSIONS"] = "1"
    else:
        env.pop("CCRAWL_NO_EXTENSIONS", None)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([open_, close, depth, flat])],
        capture_output=True, text=True, env=env, check=True, timeout=600,
    )  # fmt: skip
    took, size = json.loads(out.stdout)
    return float(took), int(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="tables", choices=sorted(SHAPES))
    parser.add_argument("--depths", default="10000,20000,40000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", default="native,twin")
    args = parser.parse_args()
    open_, close = SHAPES[args.shape]
    depths = [int(d) for d in args.depths.split(",")]
    print(f"shape `{args.shape}`: `{open_}` ... `{close}`\n")
    print("| engine | depth | bytes | nested s | flat s | nested/flat | vs half depth |")
    print("|---|---|---|---|---|---|---|")
    for engine in args.engines.split(","):
        previous = None
        for depth in depths:
            nested, flat = [], []
            size = 0
            for _ in range(args.runs):
                t, size = one(open_, close, depth, False, engine == "twin")
                nested.append(t)
                flat.append(one(open_, close, depth, True, engine == "twin")[0])
            n, f = statistics.median(nested), statistics.median(flat)
            doubling = f"{n / previous[1]:.2f}x" if previous and depth == 2 * previous[0] else ""
            print(f"| {engine} | {depth:,} | {size:,} | {n:.3f} | {f:.3f} | {n / f:.2f}x | {doubling} |", flush=True)
            previous = (depth, n)


if __name__ == "__main__":
    main()
