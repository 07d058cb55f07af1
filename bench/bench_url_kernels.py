"""URL kernels and batch URL commands against their peers, on distinct-host inputs (issue 27).

Run from the repository root (after ``python setup.py build_ext --inplace``)::

    python bench/bench_url_kernels.py kernels            # 3 fresh processes x 200k URLs, ~1-2 min
    python bench/bench_url_kernels.py commands           # 1M URLs: text and Parquet, ~2-4 min
    python bench/bench_url_kernels.py all --urls 200000  # both

``kernels``: each of three fresh processes builds the same 200k URLs (every one on its own host, see
``bench/urlsets.py``) and times, interleaved, our per-call and batch APIs against the peers: the ``surt``
package (``surt.surt``) and publicsuffix2's ``get_sld`` loaded with our vendored list. There is no host
cache in the kernels, so every figure is one without a cache. The medians of the three processes are
printed.

``commands``: the whole ``ccrawl url surt --from FILE -o parquet --out FILE`` (start-up included)
against a one-process Python loop calling ``surt.surt`` per line (text: stdin to stdout as
``url<TAB>surt``; Parquet: read the column, loop, write a Parquet file), over ``--command-urls`` URLs.
Wall-clock seconds, median of ``--runs`` runs of ours; the loop runs once per input kind (it is the
slow side, and its own spread is small next to the ratio).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {repo!r}); sys.path.insert(0, {bench!r})
from urlsets import distinct_host_urls
import pyarrow as pa
import surt as ia_surt
import publicsuffix2
from ccrawl.url import canon, domain, surt
from ccrawl import accel

n = {n}
urls = distinct_host_urls(n)
hosts = [u.split("/", 3)[2].split(":")[0] for u in urls]
arrow_urls = pa.array(urls, pa.string())
arrow_hosts = pa.array(hosts, pa.string())
psl2 = publicsuffix2.PublicSuffixList(psl_file=str(domain.PSL_PATH))

def loop(func, items):
    t = time.perf_counter()
    for item in items:
        func(item)
    return len(items) / (time.perf_counter() - t)

def once(func, arg, count):
    t = time.perf_counter()
    func(arg)
    return count / (time.perf_counter() - t)

def peer_surt(u):
    try:
        return ia_surt.surt(u)
    except Exception:
        return None

rates = {{}}
rates["surt per call"] = loop(surt.surt, urls)
rates["surt peer: surt.surt"] = loop(peer_surt, urls)
rates["surt batch (list of str)"] = once(surt.surt_array, urls, n)
rates["surt batch (pyarrow array)"] = once(surt.surt_array, arrow_urls, n)
rates["registered_domain per call"] = loop(domain.registered_domain, hosts)
rates["registered_domain peer: publicsuffix2 get_sld"] = loop(lambda h: psl2.get_sld(h, strict=True), hosts)
rates["registered_domain batch (pyarrow array)"] = once(lambda a: domain.domain_columns(a)[1], arrow_hosts, n)
rates["registered_domain per call, from the URL"] = loop(domain.registered_domain, urls)
rates["canon per call"] = loop(canon.canonicalize, urls)
rates["canon batch (pyarrow array)"] = once(canon.canonical_array, arrow_urls, n)
rates["shard_of(url, 64) per call"] = loop(lambda u: domain.shard_of(u, 64), urls)
rates["shard batch (pyarrow array)"] = once(lambda a: domain.shard_array(a, 64), arrow_urls, n)
print(json.dumps({{"rates": rates, "impl": accel.implementations()}}))
"""


def kernels(count: int, processes: int) -> dict[str, Any]:
    runs = []
    for _ in range(processes):
        code = _CHILD.format(repo=str(REPO), bench=str(REPO / "bench"), n=count)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        runs.append(json.loads(proc.stdout))
    names = list(runs[0]["rates"])
    medians = {name: statistics.median(r["rates"][name] for r in runs) for name in names}
    ratios = {
        "surt per call / surt.surt": statistics.median(
            r["rates"]["surt per call"] / r["rates"]["surt peer: surt.surt"] for r in runs),
        "surt batch (pyarrow) / surt.surt": statistics.median(
            r["rates"]["surt batch (pyarrow array)"] / r["rates"]["surt peer: surt.surt"] for r in runs),
        "registered_domain per call / get_sld": statistics.median(
            r["rates"]["registered_domain per call"] / r["rates"]["registered_domain peer: publicsuffix2 get_sld"]
            for r in runs),
        "registered_domain batch / get_sld": statistics.median(
            r["rates"]["registered_domain batch (pyarrow array)"]
            / r["rates"]["registered_domain peer: publicsuffix2 get_sld"] for r in runs),
    }
    return {"urls": count, "processes": processes, "ops_per_s": medians, "ratios": ratios,
            "impl": runs[0]["impl"]}


_LOOP_TEXT = """
import sys, surt
w = sys.stdout.write
for line in sys.stdin:
    url = line.rstrip("\\n")
    try:
        w(url + "\\t" + surt.surt(url) + "\\n")
    except Exception as exc:
        w(url + "\\t\\t" + str(exc) + "\\n")
"""

_LOOP_PARQUET = """
import sys, surt
import pyarrow as pa, pyarrow.parquet as pq
urls = pq.read_table(sys.argv[1], columns=["url"]).column("url").to_pylist()
out = []
for url in urls:
    try:
        out.append(surt.surt(url))
    except Exception:
        out.append(None)
pq.write table
"""


_CPU: list[float] = []  # CPU seconds (user + sys) of the last _timed command


def _timed(cmd: list[str], stdin: Path | None = None, stdout: Any = subprocess.DEVNULL) -> float:
    """Wall seconds of ``cmd``; its CPU seconds (user + sys, every thread) go to ``_CPU``."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as given:
        subprocess.run(cmd, stdin=given, stdout=stdout, stderr=subprocess.PIPE, env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def commands(count: int, runs: int, workdir: Path, loop_runs: int = 3) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from urlsets import distinct_host_urls

    urls = distinct_host_urls(count, seed=99)
    text = workdir / "urls.txt"
    text.write_text("\n".join(urls) + "\n")
    table = workdir / "urls.parquet"
    pq.write_table(pa.table({"url": urls}), table, row_group_size=131_072)
    del urls
    loop_parquet = _LOOP_PARQUET.replace(
        "pq.write table", "pq.write_table(pa.table({'url': urls, 'surt': out}), sys.argv[2])")
    result: dict[str, Any] = {"urls": count, "runs": runs}
    for kind, source in (("text", text), ("parquet", table)):
        ours = []
        ours_cpu = []
        cli = [sys.executable, "-m", "ccrawl", "url", "surt", "--from", str(source), "-o", "parquet",
               "--out", str(workdir / "out.parquet"), "-q"]
        loops: list[float] = []
        loops_cpu: list[float] = []
        for i in range(runs):  # interleaved, ours then the loop, so a slow minute weighs on both sides
            ours.append(_timed(cli))
            ours_cpu.append(_CPU[-1])
            if i < loop_runs:
                if kind == "text":
                    loops.append(_timed([sys.executable, "-c", _LOOP_TEXT], stdin=text))
                else:
                    loop_out = str(workdir / "loop.parquet")
                    loops.append(_timed([sys.executable, "-c", loop_parquet, str(table), loop_out]))
                loops_cpu.append(_CPU[-1])
        loop, loop_cpu = statistics.median(loops), statistics.median(loops_cpu)
        rows = pq.read_metadata(workdir / "out.parquet").num_rows
        assert rows == count, (rows, count)
        result[kind] = {"ours_s": statistics.median(ours), "ours_runs": ours, "loop_s": loop, "loop_runs": loops,
                        "ratio": loop / statistics.median(ours), "ours_cpu_s": statistics.median(ours_cpu),
                        "loop_cpu_s": loop_cpu, "cpu_ratio": loop_cpu / statistics.median(ours_cpu),
                        "command": " ".join(cli[1:])}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["kernels", "commands", "all"])
    parser.add_argument("--urls", type=int, default=200_000, help="URLs for the kernels [200000]")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes for the kernels [3]")
    parser.add_argument("--command-urls", type=int, default=1_000_000, help="URLs for the commands [1000000]")
    parser.add_argument("--runs", type=int, default=5,
                        help="runs of our command [5]: a ~1 s run doubles when the VM stalls for a second")
    parser.add_argument("--loop-runs", type=int, default=3,
                        help="runs of the one-process loop, interleaved with ours (at most --runs) [3]")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    if args.what in ("kernels", "all"):
        out["kernels"] = kernels(args.urls, args.processes)
        for name, rate in out["kernels"]["ops_per_s"].items():
            print(f"{name:52s} {rate:>12,.0f} ops/s")
        for name, ratio in out["kernels"]["ratios"].items():
            print(f"{name:52s} {ratio:>11.1f}x")
    if args.what in ("commands", "all"):
        with tempfile.TemporaryDirectory(prefix="ccrawl-bench-url-") as tmp:
            out["commands"] = commands(args.command_urls, args.runs, Path(tmp),
                                       loop_runs=max(1, min(args.loop_runs, args.runs)))
        for kind in ("text", "parquet"):
            row = out["commands"][kind]
            runs = ", ".join(f"{s:.2f}" for s in row["ours_runs"])
            loops = ", ".join(f"{s:.2f}" for s in row["loop_runs"])
            print(f"url surt --from {kind:8s} ours {row['ours_s']:.2f} s (runs {runs})  loop {row['loop_s']:.2f} s"
                  f" (runs {loops})"
                  f"  ratio {row['ratio']:.1f}x | CPU ours {row['ours_cpu_s']:.2f} s, loop {row['loop_cpu_s']:.2f} s,"
                  f" ratio {row['cpu_ratio']:.1f}x")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
