"""host degrees at scale: MB/s of gzipped edges per core and peak RSS, against decompress-only floors.

Builds a synthetic host graph (``--vertices`` vertices, edge files of ``from<TAB>to`` lines sorted by
``from``, heavy-tailed out-degrees, targets 40 % near the source, 45 % among 100,000 popular hosts and
15 % anywhere, gzip level 6 as Common Crawl's are) and serves it from the fake Common Crawl on
loopback. Each size (``--sizes``, MB of gzipped edges) is then counted in one run by:

* ``zcat | wc -l``: zlib's inflate and a line count, the decompress-only floor of a shell;
* ``isal inflate``: ISA-L's inflate alone in Python over the local files, the floor under ours;
* ``pyarrow csv``: pyarrow's streaming CSV reader (gzip input, multithreaded parse), read only;
* ``duckdb read_csv``: DuckDB counting the rows of the same files;
* ours, ``degrees.count_edges`` over HTTP from the fake server, ``-j 1`` and ``-j 2``, each in a
  child process of its own so that its peak RSS is its own; the degree arrays are checked against
  a reference count made with ``numpy.bincount`` from the generated edges.

MB/s per core is the gzipped bytes over the CPU seconds the process used (all its threads); on a
shared 2-core machine wall-clock rates move with the neighbours, CPU rates much less.

    python bench/bench_degrees.py --sizes 100,1000 --vertices 50000000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RID = "cc-main-bench-degrees"
BLOCK_SOURCES = 1_000_000


def _block(seed: int, vertices: int, first: int) -> tuple[Any, Any]:
    """Edges of ``BLOCK_SOURCES`` consecutive sources from ``first``, sorted by (from, to)."""
    rng = np.random.default_rng(seed)
    count = min(BLOCK_SOURCES, vertices - first)
    src = np.arange(first, first + count, dtype=np.int64)
    deg = np.minimum(rng.zipf(1.8, count), 2000)
    deg = np.maximum(1, (deg * 10 / deg.mean()).astype(np.int64))  # mean out-degree ~10, as CC's host graph
    frm = np.repeat(src, deg)
    n = len(frm)
    popular = rng.permutation(vertices)[:100_000]
    pop = popular[np.minimum(rng.zipf(1.5, n) - 1, len(popular) - 1)]
    uni = rng.integers(0, vertices, n)
    local = np.clip(frm + rng.integers(-300, 300, n), 0, vertices - 1)
    r = rng.random(n)
    to = np.where(r < 0.4, local, np.where(r < 0.85, pop, uni))
    order = np.lexsort((to, frm))
    frm, to = frm[order], to[order]
    keep = np.ones(n, bool)
    keep[1:] = (frm[1:] != frm[:-1]) | (to[1:] != to[:-1])
    return frm[keep], to[keep]


def _member(frm: Any, to: Any) -> bytes:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    buf = pa.BufferOutputStream()
    pcsv.write_csv(pa.table({"a": frm, "b": to}), buf,
                   pcsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none"))
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    text = buf.getvalue().to_pybytes()
    return comp.compress(text) + comp.flush()


def build(work: Path, vertices: int, blocks: int) -> list[dict[str, Any]]:
    """``blocks`` distinct gzip members (cached in ``work``), each with its edge counts."""
    out = []
    for k in range(blocks):
        path = work / f"block-{vertices}-{k}.gz"
        counts = work / f"block-{vertices}-{k}.npz"
        if not path.exists() or not counts.exists():
            t = time.perf_counter()
            frm, to = _block(k + 1, vertices, (k * BLOCK_SOURCES) % max(1, vertices - BLOCK_SOURCES))
            path.write_bytes(_member(frm, to))
            np.savez(counts, din=np.bincount(to, minlength=vertices).astype(np.uint32),
                     dout=np.bincount(frm, minlength=vertices).astype(np.uint32), edges=len(frm))
            print(f"  block {k}: {len(frm):,} edges, {path.stat().st_size / 1e6:.1f} MB gz, "
                  f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
        out.append({"path": path, "size": path.stat().st_size, "counts": counts})
    return out


def make_files(root: Path, blocks: list[dict[str, Any]], target_mb: int, file_mb: int) -> tuple[list[Path], list[int]]:
    """Edge files of about ``file_mb`` MB (whole members) adding up to ``target_mb``; uses of each block."""
    edges_dir = root / "projects/hyperlinkgraph" / RID / "host/edges"
    edges_dir.mkdir(parents=True, exist_ok=True)
    for old in edges_dir.glob("*.gz"):
        old.unlink()
    uses = [0] * len(blocks)
    files, total, k = [], 0, 0
    while total < target_mb * 1e6:
        path = edges_dir / f"part-{len(files):05d}.txt.gz"
        size = 0
        with path.open("wb") as fh:
            while size < file_mb * 1e6 and total + size < target_mb * 1e6:
                b = blocks[k % len(blocks)]
                fh.write(b["path"].read_bytes())
                size += b["size"]
                uses[k % len(blocks)] += 1
                k += 1
        total += size
        files.append(path)
    return files, uses


def write_release(root: Path, files: list[Path], vertices: int) -> None:
    import gzip

    host = root / "projects/hyperlinkgraph" / RID / "host"
    rels = [str(f.relative_to(root)) for f in files]
    (host / f"{RID}-host-edges.paths.gz").write_bytes(gzip.compress("".join(r + "\n" for r in rels).encode()))
    (root / "graphinfo.json").write_text(json.dumps([{
        "id": RID, "crawls": [], "location": f"s3://commoncrawl/projects/hyperlinkgraph/{RID}/",
        "stats": {"host": {"nodes": vertices, "arcs": 0}}}]))


def expected_digest(blocks: list[dict[str, Any]], uses: list[int]) -> tuple[str, int]:
    din = dout = None
    edges = 0
    for b, n in zip(blocks, uses, strict=True):
        if not n:
            continue
        z = np.load(b["counts"])
        din = z["din"] * n if din is None else din + z["din"] * n
        dout = z["dout"] * n if dout is None else dout + z["dout"] * n
        edges += int(z["edges"]) * n
    assert din is not None and dout is not None
    return _digest(din.astype(np.uint32), dout.astype(np.uint32)), edges


def _digest(din: Any, dout: Any) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(np.ascontiguousarray(din).tobytes())
    h.update(np.ascontiguousarray(dout).tobytes())
    return h.hexdigest()


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def floor_zcat(files: list[Path]) -> dict[str, Any]:
    c0, t = _cpu_children(), time.perf_counter()
    lines = 0
    for f in files:
        out = subprocess.run(f"zcat {f} | wc -l", shell=True, check=True, capture_output=True, text=True)
        lines += int(out.stdout)
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_children() - c0, "lines": lines}


def floor_isal(files: list[Path]) -> dict[str, Any]:
    from isal import isal_zlib

    c0, t = _cpu_self(), time.perf_counter()
    lines = 0
    for f in files:
        with f.open("rb") as fh:
            d = isal_zlib.decompressobj(31)
            while chunk := fh.read(1 << 20):
                data = chunk
                while data:
                    out = d.decompress(data, 1 << 22)
                    lines += out.count(b"\n")
                    if d.eof:
                        data = d.unused_data
                        d = isal_zlib.decompressobj(31)
                    else:
                        data = d.unconsumed_tail
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_self() - c0, "lines": lines}


def peer_pyarrow(files: list[Path]) -> dict[str, Any]:
    import pyarrow.csv as pcsv

    c0, t = _cpu_self(), time.perf_counter()
    rows = 0
    for f in files:
        reader = pcsv.open_csv(f, read_options=pcsv.ReadOptions(column_names=["a", "b"], block_size=8 << 20),
                               parse_options=pcsv.ParseOptions(delimiter="\t"),
                               convert_options=pcsv.ConvertOptions(column_types={"a": "uint32", "b": "uint32"}))
        for batch in reader:
            rows += batch.num_rows
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_self() - c0, "lines": rows}


def peer_duckdb(files: list[Path]) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads=2")
    c0, t = _cpu_self(), time.perf_counter()
    names = ", ".join(f"'{f}'" for f in files)
    rows = con.execute(f"SELECT count(*) FROM read_csv([{names}], delim='\t', header=false, "
                       "columns={'a': 'UINTEGER', 'b': 'UINTEGER'})").fetchone()
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_self() - c0, "lines": int(rows[0]) if rows else 0}


def _peak_rss() -> int:
    """This process's peak RSS in bytes: VmHWM (ru_maxrss would carry the parent's, folded in at exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def child(args: argparse.Namespace) -> None:
    """One counting run in a process of its own: figures and a digest of the arrays, as JSON."""
    from ccrawl.commoncrawl import degrees

    urls = json.loads(args.urls)
    c0, t = _cpu_self(), time.perf_counter()
    counts = degrees.count_edges(urls, args.vertices, jobs=args.jobs, client_options=json.loads(args.options))
    seconds, cpu = time.perf_counter() - t, _cpu_self() - c0
    print(json.dumps({
        "seconds": seconds, "cpu": cpu, "edges": counts.edges, "gz_bytes": counts.gz_bytes, "jobs": counts.jobs,
        "maxrss": _peak_rss(), "digest": _digest(counts.din, counts.dout),
    }))


def ours(urls: list[str], vertices: int, jobs: int, options: dict[str, Any], twin: bool = False) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if twin:
        env["CCRAWL_NO_EXTENSIONS"] = "1"
    parent = _cpu_self()  # the fake server's threads: its CPU is not ours, but it takes a core's share
    out = subprocess.run([sys.executable, __file__, "--child", "--urls", json.dumps(urls), "--vertices", str(vertices),
                          "--jobs", str(jobs), "--options", json.dumps(options)],
                         check=True, capture_output=True, text=True, env=env)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]), server_cpu=_cpu_self() - parent)


def inprocess(member: Path, vertices: int, repeats: int = 2) -> None:
    """ISA-L's inflate alone, then inflate + tally, over one gzip file in this process (no HTTP):
    the second repeat has the arrays faulted in already, the steady state of a long run."""
    from isal import isal_zlib

    from ccrawl.commoncrawl.degrees import degree_arrays
    from ccrawl.commoncrawl.edgecount import EdgeTally

    data = member.read_bytes()
    din, dout = degree_arrays(vertices)

    def once(tally: Any) -> None:
        d = isal_zlib.decompressobj(31)
        for i in range(0, len(data), 1 << 20):
            chunk = data[i:i + (1 << 20)]
            while chunk:
                out = d.decompress(chunk, 1 << 22)
                if tally is not None:
                    tally.feed(out)
                chunk = d.unconsumed_tail
        if tally is not None:
            tally.finish()

    print(f"# in-process, {member.name} ({len(data) / 1e6:.1f} MB gz), load {os.getloadavg()[0]:.2f}")
    for rep in range(repeats):
        for name, make in (("isal inflate only", lambda: None), ("isal + tally", lambda: EdgeTally(din, dout))):
            c = _cpu_self()
            once(make())
            cpu = _cpu_self() - c
            print(f"repeat {rep + 1} {name}: {cpu:.3f} CPU-s, {len(data) / cpu / 1e6:.1f} MB/s gz per core")


def _runs(files: list[Path], urls: list[str], vertices: int, options: dict[str, Any], *, peers: bool,
          twin: bool) -> list[tuple[str, Any]]:
    """(name, measure) of every reader of one size, in the order they run."""
    runs: list[tuple[str, Any]] = []
    if peers:
        runs += [("zcat \\| wc -l (zlib)", lambda: floor_zcat(files)),
                 ("isal inflate + count newlines", lambda: floor_isal(files)),
                 ("pyarrow open_csv (read only)", lambda: peer_pyarrow(files)),
                 ("duckdb read_csv count(*)", lambda: peer_duckdb(files))]
    runs += [("ours -j 1", lambda: ours(urls, vertices, 1, options)),
             ("ours -j 2", lambda: ours(urls, vertices, 2, options))]
    if twin:
        runs.append(("twin -j 1 (CCRAWL_NO_EXTENSIONS=1)", lambda: ours(urls, vertices, 1, options, True)))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100", help="MB of gzipped edges, comma separated [100]")
    ap.add_argument("--vertices", type=int, default=50_000_000)
    ap.add_argument("--blocks", type=int, default=4, help="distinct gzip members the files repeat [4]")
    ap.add_argument("--file-mb", type=int, default=50, help="size of one edge file [50]")
    ap.add_argument("--work", default=None, help="directory for the generated graph (kept between runs)")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--twin", action="store_true", help="also time the pure-Python twin (-j 1; slow)")
    ap.add_argument("--inprocess", metavar="GZ", help="time inflate, then inflate + tally, over one file in-process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--urls", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    if args.inprocess:
        inprocess(Path(args.inprocess), args.vertices)
        return

    from ccrawl import accel
    from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

    work = Path(args.work or tempfile.mkdtemp(prefix="bench-degrees-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"# bench_degrees {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} load {os.getloadavg()[0]:.2f} "
          f"tally {accel.implementations()['edgecount']} vertices {args.vertices:,} "
          f"(arrays {8 * args.vertices / 1e6:,.0f} MB)", flush=True)
    blocks = build(work, args.vertices, args.blocks)
    serve_root = work / "serve"
    serve_root.mkdir(exist_ok=True)
    with FakeCCServer(serve_root, SiteSpec(records=2, files=1)) as server:
        options = {"collinfo_endpoint": f"{server.url}/collinfo.json", "data_endpoint": server.url,
                   "global_rate": 0, "no_cache": True}
        for size in (int(s) for s in args.sizes.split(",")):
            files, uses = make_files(serve_root, blocks, size, args.file_mb)
            write_release(serve_root, files, args.vertices)
            gz = sum(f.stat().st_size for f in files)
            digest, edges = expected_digest(blocks, uses)
            urls = [f"{server.url}/{f.relative_to(serve_root)}" for f in files]
            print(f"\n## {gz / 1e6:,.0f} MB gzipped, {len(files)} files, {edges:,} edges "
                  f"({gz / edges:.2f} gz bytes an edge), load {os.getloadavg()[0]:.2f}", flush=True)
            print("| reader | wall s | CPU s | MB/s gz (wall) | MB/s gz per core (CPU) | Medges/s per core | "
                  "peak RSS MB | RSS - arrays MB | server CPU s | check |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            runs = _runs(files, urls, args.vertices, options, peers=not args.skip_peers, twin=args.twin)
            for name, fn in runs:
                r = fn()
                check = ""
                if "digest" in r:
                    check = "ok" if r["digest"] == digest and r["edges"] == edges else "WRONG"
                elif "lines" in r:
                    check = "ok" if r["lines"] == edges else f"{r['lines']:,} lines"
                rss = r.get("maxrss")
                rss_cells = (f"{rss / 1e6:,.0f} | {(rss - 8 * args.vertices) / 1e6:,.0f}" if rss else " | ")
                rss_cells += f" | {r['server_cpu']:.1f}" if "server_cpu" in r else " | "
                print(f"| {name} | {r['seconds']:.1f} | {r['cpu']:.1f} | {gz / r['seconds'] / 1e6:,.1f} | "
                      f"{gz / r['cpu'] / 1e6:,.1f} | {edges / r['cpu'] / 1e6:,.1f} | {rss_cells} | {check} |",
                      flush=True)


if __name__ == "__main__":
    main()
