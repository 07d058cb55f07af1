"""The recrawl throughput harness: the engine, its peers and the local limit, one server, one run.

    python bench/recrawl_bench.py --hosts 200 --pages 25 --repeats 3 --out /tmp/rbench \\
        [--profile real|small] [--corpus DIR] [--scaling] [--delay-run] [--update-readme]

The default profile ``real`` serves bodies from the shared html-eval corpus (real article pages,
mean ~145-175 KB: the size of Common Crawl's pages); ``small`` serves the synthetic ~24 KB pages.
Against one synthetic web (nginx when installed, else the aiohttp one; it says which) it runs,
each ``--repeats`` times, interleaved (one run of every system per round), reporting the median
and the min-max:

- ``wrk``: the limit for a client that does nothing with the bytes;
- the floor peer (``bench.peers.floor_peer``: the minimal client that also SHA-1s each body and
  writes url, status, headers, digest and body as zstd Parquet row groups inline) in as many
  processes as a default fetch-only run has pipeline processes;
- the minimal aiohttp client in one process and in one process per core;
- Scrapy with a count-only spider and with a JSONL feed;
- ``ccrawl recrawl run --no-extract`` (fetch only, Parquet with bodies), ``ccrawl recrawl run``
  (the full pipeline) and ``--format warc``.

For each: pages/s, MB/s, CPU seconds per page (user+sys of the whole process tree), and peak RSS
(the largest sum over the tree, sampled from /proc every 50 ms). Then the ratios the targets are
stated in. ``--scaling`` adds curves over fetch processes and workers; ``--delay-run`` shows that
with a per-host delay the rate is hosts in flight divided by the delay. Results go to
``<out>/results.json`` and ``<out>/recrawl.png``; ``--update-readme`` appends the table to
``bench/README.md`` with this exact command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import DOMAIN, prepare_site, serve, write_worklist  # noqa: E402

PY = sys.executable


@dataclass
class Sample:
    """One run of one system."""

    pages: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    bytes: int = 0
    errors: int = 0


@dataclass
class Result:
    """All repeats of one system, with the medians the report uses."""

    system: str
    command: str
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    def pages_per_s(self) -> list[float]:
        return [s.pages / s.seconds for s in self.samples if s.seconds > 0]

    def summary(self) -> dict[str, Any]:
        rates = self.pages_per_s()
        mbs = [s.bytes / s.seconds / 1e6 for s in self.samples if s.seconds > 0]
        cpu = [s.cpu_seconds / s.pages * 1000 for s in self.samples if s.pages]
        return {
            "system": self.system,
            "pages_per_s": statistics.median(rates) if rates else 0.0,
            "pages_per_s_min": min(rates) if rates else 0.0,
            "pages_per_s_max": max(rates) if rates else 0.0,
            "mb_per_s": statistics.median(mbs) if mbs else 0.0,
            "cpu_ms_per_page": statistics.median(cpu) if cpu else 0.0,
            "peak_rss_mb": self.median("peak_rss_mb"),
            "errors": max(s.errors for s in self.samples) if self.samples else 0,
            "command": self.command,
        }


def _tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants, in MB, read from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            pid, ppid = int(entry), int(fields[1])
            rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            children.setdefault(ppid, []).append(pid)
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / 1e6


def run_measured(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path = REPO,
                 stderr_to: Path | None = None) -> tuple[str, float, float]:
    """Run ``argv``; returns (stdout, wall seconds, peak RSS of its process tree in MB).

    ``stderr_to`` keeps what the run said on stderr (the engine's summary lines), whatever its exit.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_mb(proc.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if stderr_to is not None:
        stderr_to.write_text(err)
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {proc.returncode}: {err.strip()[-400:]}")
    return out, seconds, peak


class Runner:
    """Runs systems against one web, collecting :class:`Result` objects."""

    def __init__(self, out: Path, urls_file: Path, worklist: Path, repeats: int) -> None:
        self.out = out
        self.urls_file = urls_file
        self.worklist = worklist
        self.repeats = repeats
        self.results: dict[str, Result] = {}
        with open(urls_file) as fh:
            self.n_urls = sum(1 for _ in fh)

    def _children_cpu(self) -> float:
        # user+sys of every finished child, and of the children they waited for (the engine joins
        # its processes), so the delta over one run is the CPU of its whole tree
        usage = os.times()
        return usage.children_user + usage.children_system

    def measure(self, system: str, argv: list[str], parse: Callable[[str, Path], tuple[int, int, int]],
                repeats: int | None = None) -> Result:
        result = self.results.get(system) or Result(system, shlex.join(argv))
        for _ in range(self.repeats if repeats is None else repeats):
            i = len(result.samples)
            workdir = Path(tempfile.mkdtemp(prefix="rbench-", dir=self.out))
            cmd = [a.replace("{WORK}", str(workdir)) for a in argv]
            cpu_before = self._children_cpu()
            out, seconds, peak = run_measured(cmd, stderr_to=workdir / "stderr.txt")
            cpu = self._children_cpu() - cpu_before
            pages, nbytes, errors = parse(out, workdir)
            result.samples.append(Sample(pages, seconds, cpu, peak, nbytes, errors))
            if pages == 0 and self.n_urls:
                (workdir / "stdout.txt").write_text(out)
                print(f"  {system} #{i + 1}: WROTE NO PAGES; its work directory is kept: {workdir}", file=sys.stderr)
            else:
                shutil.rmtree(workdir, ignore_errors=True)
            print(f"  {system} #{i + 1}: {pages} pages in {seconds:.2f}s = {pages / seconds:.0f}/s, "
                  f"cpu {cpu:.2f}s, rss {peak:.0f} MB", file=sys.stderr)
        self.results[system] = result
        return result


def _parse_peer(out: str, _work: Path) -> tuple[int, int, int]:
    data = json.loads(out.strip().splitlines()[-1])
    return int(data["pages"]), int(data["bytes"]), int(data["errors"])


def _parse_journal(out: str, work: Path) -> tuple[int, int, int]:
    """A run without a sink wrote nothing to count: its own end-of-run summary says what it fetched."""
    events = [json.loads(line) for line in (work / "journal.jsonl").read_text().splitlines()]
    end = next(e for e in reversed(events) if e.get("event") == "end")
    return end["ok"], end["bytes"], end["failed"]


def _parse_ccrawl(out: str, work: Path) -> tuple[int, int, int]:
    """Count what the engine actually wrote: rows in the sealed Parquet, or response records in WARC."""
    import pyarrow.parquet as pq

    pages = nbytes = errors = 0
    for path in sorted((work / "out").glob("*.parquet")):
        table = pq.read_table(path, columns=["status", "body_length"])
        statuses = table.column("status").to_pylist()
        pages += sum(1 for s in statuses if s and s > 0)
        errors += sum(1 for s in statuses if not s)
        nbytes += sum(v or 0 for v in table.column("body_length").to_pylist())
    warcs = sorted((work / "out").glob("*.warc.gz"))
    if warcs:
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        for path in warcs:
            with open(path, "rb") as fh:
                for record in ArchiveIterator(fh, record_types=WarcRecordType.response):
                    pages += 1
                    nbytes += record.content_length
    return pages, nbytes, errors


def _wrk(port: int, urls_file: Path, seconds: int, out: Path) -> Result:
    """wrk over the same URLs (Host header rotated by a Lua script): the limit."""
    script = out / "rotate.lua"
    script.write_text(
        "local reqs = {}\n"
        f"for line in io.lines('{urls_file}') do\n"
        "  local host, path = line:match('^https?://([^/:]+)[^/]*(/.*)$')\n"
        "  reqs[#reqs + 1] = wrk.format('GET', path, {Host = host})\n"
        "end\n"
        "local i = 0\n"
        "request = function() i = i % #reqs + 1; return reqs[i] end\n"
    )
    argv = ["wrk", "-t2", "-c256", f"-d{seconds}s", "-s", str(script), f"http://127.0.0.1:{port}/"]
    result = Result("wrk", shlex.join(argv))
    return result


def _parse_wrk(text: str) -> tuple[float, float, int]:
    """(requests/s, bytes/s, requests) from wrk's summary."""
    rps = bps = 0.0
    total = 0
    units = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    for line in text.splitlines():
        parts = line.split()
        if line.startswith("Requests/sec:"):
            rps = float(parts[1])
        elif line.startswith("Transfer/sec:"):
            value = parts[1]
            for unit, mult in sorted(units.items(), key=lambda kv: -len(kv[0])):
                if value.endswith(unit):
                    bps = float(value[: -len(unit)]) * mult
                    break
        elif "requests in" in line:
            total = int(parts[0])
    return rps, bps, total


def _real_corpus() -> Path:
    """The shared html-eval pages: $CCRAWL_CORPUS/html-eval/pages, else ../shared/corpus next to the repo."""
    for base in (os.environ.get("CCRAWL_CORPUS", ""), str(REPO.parent / "shared" / "corpus"), "/work/shared/corpus"):
        if base and (Path(base) / "html-eval" / "pages").is_dir():
            return Path(base) / "html-eval" / "pages"
    raise SystemExit("recrawl_bench: --profile real needs the html-eval corpus (set CCRAWL_CORPUS) or --profile small")


def ccrawl_argv(
    worklist: Path, *, extra: list[str], workers: int = 256, delay: str = "0", out: str = "{WORK}/out"
) -> list[str]:
    return [PY, "-m", "ccrawl", "recrawl", "run", "--from", str(worklist), "--column", "url",
            "--out", out, "--state", "{WORK}/state.json", "--delay", delay, "--workers", str(workers),
            "--resolve", f"*.{DOMAIN}=127.0.0.1", "--progress", "none", *extra]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=25)
    parser.add_argument("--corpus", type=Path, help="directory of .html pages to serve (overrides --profile)")
    parser.add_argument("--profile", choices=["real", "small"], default="real",
                        help="real: bodies from the shared html-eval corpus (mean ~145-175 KB, Common Crawl's "
                             "page size); small: the synthetic ~24 KB pages")
    parser.add_argument("--server", choices=["auto", "nginx", "aiohttp"], default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wrk-seconds", type=int, default=5)
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--scale-pages", type=int, default=0,
                        help="pages a host in the --scaling runs (default 3x --pages): a longer list, so "
                             "process start-up, paid once a run, weighs on neither side of the ratio")
    parser.add_argument("--scale-workers", default="16,64,256,1024",
                        help="worker counts of the --scaling curve; '' runs only the fetch-process curve")
    parser.add_argument("--delay-run", action="store_true")
    parser.add_argument("--only", default="", help="comma list of systems to run (default all)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    cores = os.cpu_count() or 1

    scale_pages = args.scale_pages or 3 * args.pages
    site_pages = max(args.pages, scale_pages) if args.scaling else args.pages
    corpus = args.corpus
    if corpus is None and args.profile == "real":
        corpus = _real_corpus()
    size = prepare_site(args.out / "site", pages=site_pages, corpus=corpus)
    with serve(args.out / "site", server=args.server, hosts=args.hosts, pages=site_pages) as (which, port):
        worklist = write_worklist(args.out, args.hosts, args.pages, port)
        urls_file = args.out / "urls.txt"
        runner = Runner(args.out, urls_file, worklist, args.repeats)
        print(f"bench: {which} on :{port}, {runner.n_urls} URLs ({args.hosts} hosts x {args.pages} pages, "
              f"{size / site_pages / 1000:.0f} KB a page)", file=sys.stderr)

        def want(name: str) -> bool:
            return not only or name in only

        if want("wrk") and shutil.which("wrk"):
            wrk = _wrk(port, urls_file, args.wrk_seconds, args.out)
            for _ in range(args.repeats):
                cpu_before = runner._children_cpu()
                out, seconds, peak = run_measured(shlex.split(wrk.command))
                cpu = runner._children_cpu() - cpu_before
                rps, bps, total = _parse_wrk(out)
                busy = total / rps if rps else seconds
                wrk.samples.append(Sample(total, busy, cpu, peak, int(bps * busy)))
                print(f"  wrk: {rps:.0f} requests/s", file=sys.stderr)
            runner.results["wrk"] = wrk
        from ccrawl.recrawl.sizing import stage_processes

        # the engine's fetch-only pipeline processes with default flags: the fetch processes, which
        # write their own rows (the parent not counted, as before); at least two
        fetchers, _, _ = stage_processes(cores, 256, extracting=False, fetch_writes=True)
        floor_procs = max(2, fetchers)
        peers = {
            f"floor-{floor_procs}proc": [PY, "-m", "bench.peers.floor_peer", str(urls_file), "--procs",
                                         str(floor_procs), "--out", "{WORK}/floor"],
            "aiohttp-1proc": [PY, "-m", "bench.peers.aiohttp_min", str(urls_file), "--procs", "1"],
            f"aiohttp-{cores}proc": [PY, "-m", "bench.peers.aiohttp_min", str(urls_file), "--procs", str(cores)],
            "scrapy-count": [PY, "-m", "bench.peers.scrapy_count", str(urls_file)],
            "scrapy-jsonl": [PY, "-m", "bench.peers.scrapy_count", str(urls_file), "--feed", "{WORK}/feed.jsonl"],
        }
        engines = {
            "ccrawl-fetch-only": ccrawl_argv(worklist, extra=["--no-extract"]),
            # the same through the rings to one writer process (the path before the fetch processes wrote)
            "ccrawl-fetch-only-rings": ccrawl_argv(worklist, extra=["--no-extract", "--writers", "1"]),
            "ccrawl-fetch-only-1proc": ccrawl_argv(worklist, extra=["--no-extract", "--fetchers", "1"]),
            "ccrawl-fetch-only-2proc": ccrawl_argv(worklist, extra=["--no-extract", "--fetchers", "2"]),
            "ccrawl-full": ccrawl_argv(worklist, extra=[]),
            "ccrawl-warc": ccrawl_argv(worklist, extra=["--format", "warc"]),
        }
        systems = [(n, a, _parse_peer) for n, a in peers.items()] + [(n, a, _parse_ccrawl) for n, a in engines.items()]
        # interleaved: one run of every system per round, so load from the shared machine falls
        # on every system alike and the ratios of medians compare like with like
        for _ in range(args.repeats):
            for name, argv, parse in systems:
                if want(name):
                    runner.measure(name, argv, parse, repeats=1)
        if args.scaling:
            # The process curves run over a longer list of their own (hosts x --scale-pages), the
            # minimal client's 1 and N processes included, so both sides of the gain ratio are
            # measured on the same list and start-up is a small share of every run.
            scale = write_worklist(args.out / "scale", args.hosts, scale_pages, port)
            scale_urls = args.out / "scale" / "urls.txt"
            print(f"bench: scaling curves over {args.hosts * scale_pages} URLs ({scale_pages} pages a host)",
                  file=sys.stderr)
            for procs in (1, cores):
                runner.measure(f"scale-aiohttp-{procs}proc",
                               [PY, "-m", "bench.peers.aiohttp_min", str(scale_urls), "--procs", str(procs)],
                               _parse_peer)
            for fetchers in range(1, cores + 1):
                runner.measure(f"scale-fetchers-{fetchers}",
                               ccrawl_argv(scale, extra=["--no-extract", "--fetchers", str(fetchers)]),
                               _parse_ccrawl)
            # The same curve with --out '' (rows counted, nothing written), the minimal client's
            # own terms: how the fetch processes scale when no writer shares the cores.
            for fetchers in range(1, cores + 1):
                runner.measure(f"scale-fetchers-{fetchers}-no-sink",
                               ccrawl_argv(scale, out="", extra=["--no-extract", "--fetchers", str(fetchers),
                                                                  "--journal", "{WORK}/journal.jsonl"]),
                               _parse_journal)
            for workers in [int(w) for w in args.scale_workers.split(",") if w]:
                runner.measure(f"scale-workers-{workers}",
                               ccrawl_argv(worklist, extra=["--no-extract"], workers=workers), _parse_ccrawl)
        if args.delay_run:
            for hosts_in_flight in (20, 50):
                small = args.out / f"delay-{hosts_in_flight}"
                wl = write_worklist(small, hosts_in_flight, 4, port)
                # 4 pages a host at 1 s spacing: throughput should be about hosts / 1 s
                runner.measure(f"delay-1s-{hosts_in_flight}hosts",
                               ccrawl_argv(wl, extra=["--no-extract"], delay="1s"), _parse_ccrawl)

    report(runner, args, which)


def report(runner: Runner, args: argparse.Namespace, which: str) -> None:
    rows = [r.summary() for r in runner.results.values()]
    by = {r["system"]: r for r in rows}
    ratios: dict[str, float] = {}

    def ratio(a: str, b: str) -> None:
        if a in by and b in by and by[b]["pages_per_s"]:
            ratios[f"{a} / {b}"] = by[a]["pages_per_s"] / by[b]["pages_per_s"]

    floors = [name for name in by if name.startswith("floor-")]
    for engine in ("ccrawl-fetch-only", "ccrawl-fetch-only-rings", "ccrawl-full", "ccrawl-warc"):
        for peer in ("wrk", *floors, "aiohttp-1proc", "scrapy-count", "scrapy-jsonl"):
            ratio(engine, peer)
    ratio("ccrawl-fetch-only", "ccrawl-fetch-only-rings")
    for peer in floors:
        ratio("ccrawl-fetch-only-1proc", peer)
        ratio("ccrawl-fetch-only-2proc", peer)
    cores = os.cpu_count() or 1
    # The peer's gain on the scaling list when it was measured there (same list as the engine's
    # curve), else on the main list.
    peer = "scale-aiohttp" if {"scale-aiohttp-1proc", f"scale-aiohttp-{cores}proc"} <= set(by) else "aiohttp"
    if {f"{peer}-1proc", f"{peer}-{cores}proc", "scale-fetchers-1", f"scale-fetchers-{cores}"} <= set(by):
        gain_peer = by[f"{peer}-{cores}proc"]["pages_per_s"] / by[f"{peer}-1proc"]["pages_per_s"]
        gain_engine = by[f"scale-fetchers-{cores}"]["pages_per_s"] / by["scale-fetchers-1"]["pages_per_s"]
        ratios["engine second-process gain / peer second-process gain"] = gain_engine / gain_peer
        if {"scale-fetchers-1-no-sink", f"scale-fetchers-{cores}-no-sink"} <= set(by):
            gain_count = (by[f"scale-fetchers-{cores}-no-sink"]["pages_per_s"]
                          / by["scale-fetchers-1-no-sink"]["pages_per_s"])
            ratios["engine second-process gain without a sink / peer second-process gain"] = gain_count / gain_peer
    command = shlex.join([Path(sys.executable).name, *sys.argv])
    results = {"command": command, "server": which, "when": time.strftime("%Y-%m-%d %H:%M"),
               "systems": rows, "ratios": ratios, "samples": {k: [asdict(s) for s in v.samples]
                                                              for k, v in runner.results.items()}}
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    table = ["| system | pages/s (median, min-max) | MB/s | CPU ms/page | peak RSS MB |", "|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['system']} | {r['pages_per_s']:.0f} ({r['pages_per_s_min']:.0f}-{r['pages_per_s_max']:.0f})"
                     f" | {r['mb_per_s']:.1f} | {r['cpu_ms_per_page']:.2f} | {r['peak_rss_mb']:.0f} |")
    lines = "\n".join(table) + "\n\n" + "\n".join(f"- {k}: **{v:.2f}x**" for k, v in ratios.items()) + "\n"
    print(lines)
    _plot(rows, args.out / "recrawl.png")
    if args.update_readme:
        with open(REPO / "bench" / "README.md", "a") as fh:
            fh.write(f"\n### Recrawl throughput, {results['when']} ({which})\n\n`{command}`\n\n{lines}")


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: matplotlib not installed, no plot (pip install 'ccrawl[bench]')", file=sys.stderr)
        return
    main_rows = [r for r in rows if not r["system"].startswith(("scale-", "delay-"))]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    names = [r["system"] for r in main_rows]
    vals = [r["pages_per_s"] for r in main_rows]
    errs = [[r["pages_per_s"] - r["pages_per_s_min"] for r in main_rows],
            [r["pages_per_s_max"] - r["pages_per_s"] for r in main_rows]]
    axes[0].barh(names, vals, xerr=errs, color=["#888" if not n.startswith("ccrawl") else "#2a7" for n in names])
    axes[0].set_xlabel("pages/s (median, min-max)")
    axes[0].invert_yaxis()
    curves = (("scale-fetchers-", "", "fetch processes"), ("scale-fetchers-", "-no-sink", "fetch processes, no sink"),
              ("scale-aiohttp-", "proc", "minimal aiohttp client, processes"), ("scale-workers-", "", "workers"))
    for prefix, suffix, label in curves:
        pts = sorted(
            (int(name[len(prefix):len(name) - len(suffix)]), r["pages_per_s"])
            for r in rows
            if (name := r["system"]).startswith(prefix) and name.endswith(suffix)
            and name[len(prefix):len(name) - len(suffix)].isdigit()
        )
        if pts:
            axes[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    if axes[1].lines:
        axes[1].set_xscale("log", base=2)
        axes[1].set_xlabel("fetch processes / workers")
        axes[1].set_ylabel("pages/s")
        axes[1].legend()
        axes[1].set_title("scaling (fetch only)")
    else:
        axes[1].set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
