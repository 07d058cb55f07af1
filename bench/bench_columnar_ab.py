"""Two trees of ccrawl, query by query and run by run: the columnar engines of a base and a branch, interleaved.

``bench_columnar.py`` times one tree; comparing two of its runs compares two moments of a shared machine
as much as two versions. This runs one worker process per tree (each importing its own ``ccrawl``) against
one fake Common Crawl in a process of its own, and for every repeat of every query runs native then DuckDB
on each tree in turn, so the trees see the same load. It prints, per query and tree, the medians, the
DuckDB/native ratio and the native engine's requests and bytes, and checks that every answer is the same.

    python bench/bench_columnar_ab.py --base /tmp/base-tree --branch . --repeats 25 [--profile large]

A tree is a checkout with its extensions built (``python setup.py build_ext --inplace``); the fake
buckets are the ones ``bench_columnar.py`` builds (run it once first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

WORKER = r"""
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/bench"]
import bench_columnar as B
from ccrawl.commoncrawl.columnar.filters import Filters

url = sys.argv[2]


class Endpoint:
    def client_options(self, **extra):
        options = {"collinfo_endpoint": f"{url}/collinfo.json", "data_endpoint": url, "cdx_endpoint": url,
                   "s3_endpoint": url, "global_rate": 0, "backoff": 0.01, "backoff_max": 0.05}
        options.update(extra)
        return options


for line in sys.stdin:
    kind, engine, spec = line.rstrip("\n").split("\t")
    f = Filters(**{k: tuple(v) for k, v in json.loads(spec).items()})
    seconds, explain, answer = B.once(Endpoint(), kind, f, engine, 8)
    print(json.dumps([seconds, explain.requests, explain.bytes_read, str(B._canon(kind, answer))]), flush=True)
"""

CASES: dict[str, tuple[str, dict[str, list[Any]]]] = {
    "count": ("count", {"domains": ["example.com"]}),
    "urls": ("urls", {"domains": ["example.com"]}),
    "langs": ("langs", {"domains": ["example.com"]}),
    "tld": ("count", {"tlds": ["vn"], "not_langs": ["vie"]}),
    "langs-tld": ("langs", {"tlds": ["de"]}),
    "status": ("count", {"statuses": [200]}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the tree to compare against")
    ap.add_argument("--branch", required=True, help="the tree under test")
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--profile", choices=("small", "large"), default="small")
    ap.add_argument("--root", default=str(Path(tempfile.gettempdir()) / "colbench"))
    ap.add_argument("--large-root", default=str(Path(tempfile.gettempdir()) / "colbench-large"))
    ap.add_argument("--cases", default="count,urls,langs", help=f"comma list of {', '.join(CASES)}")
    args = ap.parse_args()
    root = args.root if args.profile == "small" else args.large_root
    if not (Path(root) / "captures.jsonl").exists():
        sys.exit(f"{root}: no fake bucket; run bench/bench_columnar.py --profile {args.profile} once first")
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    serve = ("import sys\nfrom ccrawl.testing.fakecc import FakeCCServer\n"
             "s = FakeCCServer(sys.argv[1]).start()\nprint(s.url, flush=True)\nsys.stdin.read()\n")
    server = subprocess.Popen([sys.executable, "-c", serve, root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ, PYTHONPATH=trees["branch"]))
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    workers = {name: subprocess.Popen([sys.executable, "-c", WORKER, tree, url], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=tree))
               for name, tree in trees.items()}

    def run(name: str, kind: str, engine: str, spec: dict[str, list[Any]]) -> list[Any]:
        w = workers[name]
        assert w.stdin is not None and w.stdout is not None
        w.stdin.write(f"{kind}\t{engine}\t{json.dumps(spec)}\n")
        w.stdin.flush()
        return json.loads(w.stdout.readline())  # type: ignore[no-any-return]

    try:
        cases = args.cases.split(",")
        for name in trees:  # warm-up: imports, kernels, connections; not counted
            for case in cases[:2]:
                for engine in ("native", "duckdb"):
                    run(name, CASES[case][0], engine, CASES[case][1])
        print(f"profile {args.profile}, {args.repeats} repeats, load average before {os.getloadavg()[0]:.2f}\n")
        print("| query | tree | native ms | duckdb ms | duckdb/native | native requests | native bytes |")
        print("|---|---|---|---|---|---|---|")
        for case in cases:
            kind, spec = CASES[case]
            times: dict[tuple[str, str], list[float]] = {(t, e): [] for t in trees for e in ("native", "duckdb")}
            seen: dict[str, tuple[int, int]] = {}
            answers = set()
            for _ in range(args.repeats):
                for name in trees:
                    for engine in ("native", "duckdb"):
                        seconds, requests, nbytes, answer = run(name, kind, engine, spec)
                        times[(name, engine)].append(seconds)
                        answers.add(answer)
                        if engine == "native":
                            seen[name] = (requests, nbytes)
            assert len(answers) == 1, f"{case}: the trees or the engines disagree"
            for name in trees:
                n = statistics.median(times[(name, "native")])
                d = statistics.median(times[(name, "duckdb")])
                print(f"| `{kind} {json.dumps(spec)}` | {name} | {1000 * n:.1f} | {1000 * d:.1f} | {d / n:.2f}x | "
                      f"{seen[name][0]} | {seen[name][1]:,} |", flush=True)
        print(f"\nload average after {os.getloadavg()[0]:.2f}")
    finally:
        for w in workers.values():
            if w.stdin is not None:
                w.stdin.close()
            w.wait(30)
        server.stdin.close()
        server.wait(30)


if __name__ == "__main__":
    main()
