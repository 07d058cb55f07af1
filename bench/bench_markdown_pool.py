"""``markdown export --workers N`` on several shards of real pages: CPU of the process tree and of the exporter.

    python bench/bench_markdown_pool.py --copies 4 --rounds 3 --workers 1,2
    python bench/bench_markdown_pool.py --trees /work/before,/work/main   # A/B of two checkouts, alternating

The crawl is ``--copies`` copies of ``bench_markdown.py``'s shard (the corpus's real pages, one
response record each, ~29 MB), served by the fake Common Crawl from its own process. Each run is
the CLI as a user types it, start-up included (``python -m ccrawl -c CRAWL markdown export
--shards 0-N --workers W --push=false``), measured by ``tree_cpu.py`` (``/proc`` polled every 50 ms):
``tree_cpu_s`` is every process of the run (the exporting process, the forkserver, the pool's
workers), ``export_cpu_s`` the exporting process alone, which feeds the pool and writes the Parquet
(what limits how many workers one exporting process can keep busy). Runs alternate trees and
worker counts, so a slow minute of this machine falls on all of them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_markdown as bm

CRAWL = "CC-MAIN-2099-51"
HERE = Path(__file__).resolve().parent


def build(root: Path, corpus: Path, pages: int, copies: int) -> int:
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

    FakeCCServer(root, SiteSpec(records=4, files=1))
    n = bm.build_shard(root, corpus, pages)
    shard = next((root / f"crawl-data/{bm.CRAWL}").rglob("*.warc.gz"))
    rels = []
    for i in range(copies):
        rel = f"crawl-data/{CRAWL}/segments/1/warc/CC-MAIN-pool-{i:05d}.warc.gz"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shard, root / rel)
        rels.append(rel)
    (root / f"crawl-data/{CRAWL}/warc.paths.gz").write_bytes(gzip.compress("\n".join(rels).encode()))
    return n


def run(tree: Path, workers: int, copies: int, out: Path, env: dict[str, str]) -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, str(HERE / "tree_cpu.py"), sys.executable, "-m", "ccrawl", "-c", CRAWL, "markdown", "export",
           "--shards", f"0-{copies - 1}", "--workers", str(workers), "--push=false", "--out", str(out)]
    got = json.loads(subprocess.run(cmd, env={**env, "PYTHONPATH": str(tree)}, cwd=tree, check=True,
                                    capture_output=True, text=True).stdout)
    if got["rc"] != 0:
        raise SystemExit(f"the export failed in {tree} (exit {got['rc']})")
    events = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()]
    written = [e for e in events if e["event"] == "unit_written"]
    return {"wall_s": got["wall_s"], "tree_cpu_s": got["cpu_s"], "export_cpu_s": got["by_kind"].get("-m ccrawl", 0.0),
            "rows": sum(e["rows"] for e in written), "parts": sum(e.get("parts", 0) for e in written)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/html-eval"))
    ap.add_argument("--pages", type=int, default=1032)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--trees", default=str(HERE.parent), help="checkouts to compare, comma-separated")
    ap.add_argument("--out", type=Path, default=Path("/tmp/md-pool-bench"))
    args = ap.parse_args()
    if not args.corpus.is_dir():
        raise SystemExit(f"the corpus is not at {args.corpus}: pass --corpus")
    root = args.out / "fakecc"
    shutil.rmtree(args.out, ignore_errors=True)
    pages = build(root, args.corpus, args.pages, args.copies)
    server = subprocess.Popen([sys.executable, "-m", "ccrawl.testing.fakecc", "--root", str(root), "--records", "4",
                               "--files", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    env = {**os.environ, "CCRAWL_COLLINFO_ENDPOINT": f"{url}/collinfo.json", "CCRAWL_DATA_ENDPOINT": url,
           "CCRAWL_CDX_ENDPOINT": url, "CCRAWL_GLOBAL_RATE": "0"}
    trees = [Path(t) for t in args.trees.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    try:
        print(f"{args.copies} shards of {pages} pages")
        run(trees[0], workers[0], args.copies, args.out / "run", env)  # warm the page cache and the server
        for r in range(args.rounds):
            for w in workers:
                for tree in trees:
                    got = run(tree, w, args.copies, args.out / "run", env)
                    results.setdefault((str(tree), w), []).append(got)
                    print(json.dumps({"round": r, "tree": str(tree), "workers": w, **got}), flush=True)
    finally:
        server.terminate()
    print("\n| tree | --workers | wall s | CPU s, whole tree | CPU s, exporting process | pages per CPU s | parts |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (tree, w), runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "tree_cpu_s", "export_cpu_s")}
        rows = runs[0]["rows"]
        print(f"| {tree} | {w} | {med['wall_s']:.2f} | {med['tree_cpu_s']:.2f} | {med['export_cpu_s']:.2f} "
              f"| {rows / med['tree_cpu_s']:.0f} | {runs[0]['parts']:.0f} |")


if __name__ == "__main__":
    main()
