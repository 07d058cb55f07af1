"""fetch --batch against one record per request, on the fake Common Crawl with injected latency.

Starts ``python -m ccrawl.testing.fakecc`` in its own process (500 records packed in 20 WARC
files, 50 ms added to every request), then fetches every record twice through the library the
CLI uses: one ranged GET per record, in input order, and ``--batch`` with the default gap and
max span. Both outputs must be byte-for-byte equal; the script prints the timings, the request
counts and the speedup. Bounded: a few seconds for the batch, ~30 s for one at a time.

    python bench/bench_fetch_batch.py                       # the figure in bench/README.md
    python bench/bench_fetch_batch.py --latency 0.05 --records 500 --files 20 --global-rate 0
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ccrawl.ops.commoncrawl import fetch_results
from ccrawl.output import render_to_string


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds added to every request")
    parser.add_argument("--global-rate", default="0", help="the shared request gap (0: latency alone)")
    parser.add_argument("--content", default="body")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-fakecc-") as tmp:
        root = Path(tmp) / "cc"
        server = subprocess.Popen(
            [sys.executable, "-m", "ccrawl.testing.fakecc", "--port", "0", "--root", str(root),
             "--records", str(args.records), "--files", str(args.files), "--latency", str(args.latency)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            with open(root / "captures.jsonl") as fh:
                caps = [json.loads(line) for line in fh]
            newest = caps[0]["filename"].split("/")[1]
            locs = [c for c in caps if c["filename"].startswith(f"crawl-data/{newest}/") and "/warc/" in c["filename"]]
            random.Random(1).shuffle(locs)  # an index answer is in URL order, not disk order
            files = len({c["filename"] for c in locs})
            options = {"data_endpoint": url, "global_rate": args.global_rate, "data_dir": str(Path(tmp) / "data")}

            def run(batch: bool) -> tuple[float, str]:
                started = time.perf_counter()
                rows = [row for r in fetch_results(locs, content=args.content, batch=batch, order="input",
                                                   client_options=options) for row in (r.rows or ())]
                return time.perf_counter() - started, render_to_string(rows, "jsonl")

            t_batch, out_batch = run(True)
            t_one, out_one = run(False)
        finally:
            server.terminate()
            server.wait(10)
    same = out_batch == out_one
    print(f"records: {len(locs)} in {files} files, latency {args.latency * 1000:g} ms/request, "
          f"global rate {args.global_rate}")
    print(f"one at a time: {len(locs)} requests in {t_one:.2f} s")
    print(f"--batch:       {files} requests in {t_batch:.2f} s")
    print(f"speedup: {t_one / t_batch:.1f}x; outputs byte-for-byte equal: {same} ({len(out_one)} bytes of JSONL)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
