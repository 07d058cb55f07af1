"""``markdown export --executor ray`` on a local 2-CPU Ray cluster vs the local run, over the same shards.

    python bench/bench_ray.py --shards 24 --pages 400 --repeats 2 --out /tmp/ray-bench

Each shard is a WARC of the shared corpus's real pages (``html-eval/pages``, cycled with distinct URLs),
served by the fake Common Crawl from a process of its own. Each run is ``python -m ccrawl markdown export
--push=false --shards 0-(N-1)`` in a fresh process, timed from start to exit, so the Ray run pays for
starting (and stopping) its local cluster. The local peer is what a user runs on this machine: a process
per CPU converting (``--workers 0``) and two shards in flight (``--parallel 2``). Runs alternate
(local, ray, local, ray, ...); pages/s is rows written over the wall time; the figure is the median of
the per-pair ratios ray / local. Both runs must write the same rows (checked on every pair).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

CRAWL = "CC-MAIN-2099-51"
SEG = f"crawl-data/{CRAWL}/segments/4102444800000.00/warc"


def build(root: Path, corpus: Path, shards: int, pages: int) -> int:
    """``shards`` gzipped WARCs of ``pages`` real pages each, and the crawl's warc.paths.gz."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    manifest = root / f"crawl-data/{CRAWL}/warc.paths.gz"
    if manifest.exists():  # built by an earlier run with the same sizes: reuse it (writing takes minutes)
        listed = gzip.decompress(manifest.read_bytes()).decode().split()
        if len(listed) == shards and (root / SEG / f"pages-{pages}").exists() and all((root / p).exists()
                                                                                     for p in listed):
            return shards * pages
    urls = {v["file"]: u for u, v in json.loads((corpus / "evaldata.json").read_text()).items()}
    files = sorted((corpus / "pages").glob("*.html"))
    bodies = [(f.read_bytes(), urls.get(f.name, f"https://example.com/{f.stem}")) for f in files]
    paths = []
    for s in range(shards):
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=True)
        for n in range(pages):
            body, url = bodies[(s * pages + n) % len(bodies)]
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(f"{url}#s{s}n{n}", "response", payload=io.BytesIO(body),
                                                          http_headers=headers))
        rel = f"{SEG}/CC-MAIN-bench-{s:05d}.warc.gz"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(buf.getvalue())
        paths.append(rel)
    (root / SEG / f"pages-{pages}").write_text("")
    manifest.write_bytes(gzip.compress(("\n".join(paths) + "\n").encode()))
    return shards * pages


def run(out: Path, env: dict[str, str], shards: int, executor: str) -> tuple[float, int, str]:
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "ccrawl", "-c", CRAWL, "markdown", "export", "--push=false",
            "--shards", f"0-{shards - 1}", "--out", str(out), "--workers", "0", "--parallel", "2"]
    if executor == "ray":
        argv += ["--executor", "ray"]
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{executor} run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    m = re.search(r"([\d,]+) rows", proc.stderr)
    assert m, proc.stderr
    started = re.search(r"ray: started a local Ray cluster with \d+ CPU\(s\) in ([\d.]+)s", proc.stderr)
    return wall, int(m.group(1).replace(",", "")), started.group(1) if started else ""


def rows_of(out: Path) -> list[tuple[str, int]]:
    import pyarrow.parquet as pq

    return sorted((p.name, pq.read_metadata(p).num_rows) for p in (out / "data").rglob("*.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/html-eval"))
    ap.add_argument("--shards", type=int, default=24)
    ap.add_argument("--pages", type=int, default=400, help="pages per shard")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/ray-bench"))
    args = ap.parse_args()

    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

    root = args.out / "fakecc"
    FakeCCServer(root, SiteSpec(records=4, files=1))  # builds the bucket; served below from its own process
    total = build(root, args.corpus, args.shards, args.pages)
    mb = sum(p.stat().st_size for p in (root / SEG).glob("*.warc.gz")) / 1e6
    server = subprocess.Popen([sys.executable, "-m", "ccrawl.testing.fakecc", "--root", str(root), "--records", "4",
                               "--files", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    env = {**os.environ, "CCRAWL_DATA_ENDPOINT": url, "CCRAWL_COLLINFO_ENDPOINT": f"{url}/collinfo.json",
           "CCRAWL_CDX_ENDPOINT": url, "CCRAWL_GLOBAL_RATE": "0", "CCRAWL_DATA_DIR": str(args.out / "data"),
           "CCRAWL_CONFIG_DIR": str(args.out / "config"), "RAY_USAGE_STATS_ENABLED": "0"}
    print(f"{args.shards} shards x {args.pages} pages = {total} pages, {mb:.0f} MB of gzipped WARC; "
          f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}", flush=True)
    ratios, rates = [], {"local": [], "ray": []}
    try:
        for i in range(args.repeats):
            pair = {}
            for executor in ("local", "ray"):
                wall, rows, startup = run(args.out / f"md-{executor}", env, args.shards, executor)
                pair[executor] = rows / wall
                rates[executor].append(rows / wall)
                print(json.dumps({"pair": i, "executor": executor, "rows": rows, "wall_s": round(wall, 2),
                                  "pages_per_s": round(rows / wall, 1), "ray_start_s": startup or None,
                                  "load": round(os.getloadavg()[0], 1)}), flush=True)
            assert rows_of(args.out / "md-local") == rows_of(args.out / "md-ray"), "the two runs wrote different rows"
            ratios.append(pair["ray"] / pair["local"])
    finally:
        server.terminate()
        server.wait(10)
    print(json.dumps({"local_pages_per_s": round(statistics.median(rates["local"]), 1),
                      "ray_pages_per_s": round(statistics.median(rates["ray"]), 1),
                      "ratio_median": round(statistics.median(ratios), 3), "ratios": [round(r, 3) for r in ratios]}))


if __name__ == "__main__":
    main()
