"""The frontier at scale: seed load from a file and link admission, rate and RSS against URLs held.

    python bench/bench_frontier.py --max-urls 10000000 --step 1000000 --out /tmp/bfront \
        --plot docs/img/frontier.png

Writes a seed file of ``--max-urls`` distinct URLs over ``--hosts`` hosts, each its own registered domain (untimed),
then loads it ``--step`` lines at a time through ``load_seeds`` as ``crawl run`` does (lines read in Python, 100 000
at a time into ``Frontier.add_many``; per flush of 200 000: canonicalise, 8-byte blake3 key and host in C, batched
seen check, queue segments and host rows in one transaction), timing each step. After each step it times a burst of
link admission (``--links`` links at depth 1 in pages of 40 through ``add_many``, 90% of them already seen, every page
from another registered domain: edges and trap budgets included, a flush per 20 000, or per the larger batch the
frontier waits for once its seen runs grow, ``Frontier._check_floor``: 200 000 at 100 M), the same burst again in one
flush (``links_one_flush_*``: the batch the same at every size, so the seen store's own flatness) and a burst of bare
seen-set checks (``SeenStore.check`` on batches of 20 000 keys, half held). Reports per step: seeds/s and links/s
(wall and per CPU-second of the process, every thread: a background merge's CPU counts), checks/s, the process's RSS
and peak RSS, and at the end the state's bytes per queued URL (SQLite file) and per seen-only URL (the seen runs).
Prints JSON; ``--plot`` draws rate and RSS against URLs held.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from ccrawl.crawl.frontier import Frontier, FrontierConfig
from ccrawl.crawl.run import load_seeds
from ccrawl.crawl.seen import url_keys
from ccrawl.crawl.state import StateFile


def _url(i: int, hosts: int) -> str:
    return f"http://www.site{i % hosts}.com/page/{i}?q={i * 7919 % 100003}"


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def _written(frontier: Frontier) -> int:
    return frontier.seen.spilled_keys + frontier.seen.merged_keys


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--max-urls", type=int, default=2_000_000, help="seed URLs to load (URLs held at the end)")
    parser.add_argument("--step", type=int, default=500_000)
    parser.add_argument("--points", default="",
                        help="more URLs-held marks to stop at besides every --step, comma-separated (1000000,2000000)")
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--links", type=int, default=200_000, help="links admitted after each step")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--plot", type=Path, help="PNG of rate and RSS against URLs held")
    parser.add_argument("--store-only", action="store_true",
                        help="the seen store alone: random keys in batches of 200 000 (no URLs, no queue), checks "
                             "timed every --step keys, to --max-urls keys")
    args = parser.parse_args()
    if args.store_only:
        store_only(args)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = args.out / "seeds.txt"
    if not seeds.is_file() or seeds.stat().st_size < args.max_urls * 40:
        with open(seeds, "w") as f:
            for i in range(0, args.max_urls, 100_000):
                f.write("".join(_url(j, args.hosts) + "\n" for j in range(i, min(args.max_urls, i + 100_000))))
    path = args.out / "state.db"
    import shutil

    for p in args.out.glob("state.db*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    state = StateFile(path)
    # seeds in batches of 200 000 as ``crawl run`` loads them (load_seeds), links in batches of 20 000
    frontier = Frontier(state, FrontierConfig(max_depth=5, flush_every=200_000))
    rng = random.Random(1)
    steps = []
    loaded = 0
    link_no = 0
    marks = sorted({*range(args.step, args.max_urls, args.step), args.max_urls,
                    *(int(p) for p in args.points.split(",") if p.strip() and int(p) < args.max_urls)})
    commit = _commit()
    with open(seeds) as f:
        lines = (line.rstrip("\n") for line in f)
        while loaded < args.max_urls:
            n_step = next(m for m in marks if m > loaded) - loaded
            merge0, written0 = frontier.seen.merge_cpu_s, _written(frontier)
            start = time.perf_counter()
            cpu = time.process_time()
            own = time.thread_time()
            load_seeds([frontier], itertools.islice(lines, n_step))
            seed_s = time.perf_counter() - start
            seed_cpu = time.process_time() - cpu
            seed_own = time.thread_time() - own
            loaded += n_step
            # link admission: pages of 40 links from another registered domain each, 90% of the links
            # already seen, 10% new, as ``crawl run`` hands a page's links over (Frontier.add_many)
            link_s, link_cpu, link_own, link_admitted, link_no = _burst(frontier, args, rng, loaded, link_no, 20_000)
            # the same links in one flush at every size: the store's own flatness, batch size held equal
            one_s, one_cpu, one_own, _, link_no = _burst(frontier, args, rng, loaded, link_no, args.links)
            check_s = _time_checks(frontier, loaded, args.hosts, rng)
            steps.append({
                "held": frontier.seen.count, "loaded": loaded,
                "seeds_per_s": round(n_step / seed_s), "seeds_per_cpu_s": round(n_step / seed_cpu),
                "links_per_s": round(args.links / link_s), "links_per_cpu_s": round(args.links / link_cpu),
                "links_admitted": link_admitted,
                "links_one_flush_per_cpu_s": round(args.links / one_cpu),
                "links_one_flush_per_s": round(args.links / one_s),
                # the same per CPU-s of the loop's thread alone: what the work itself cost, without a background
                # merge that happened to run beside it (its CPU is in merge_cpu_s once it ends)
                "seeds_per_thread_cpu_s": round(n_step / seed_own),
                "links_per_thread_cpu_s": round(args.links / link_own),
                "links_one_flush_per_thread_cpu_s": round(args.links / one_own),
                "checks_per_s": round(check_s),
                "rss_mb": round(_rss_mb()), "peak_rss_mb": round(_peak_mb()),
                "state_mb": round(path.stat().st_size / 1e6, 1),
                "seen_mb": round(frontier.seen.disk_bytes / 1e6, 1), "runs": len(frontier.seen.runs),
                "seed_cpu_s": round(seed_cpu, 2), "seed_wall_s": round(seed_s, 2),
                # CPU of the seen set's merges ended in this step (their thread), and keys the seen set wrote
                # to runs (spills and merges) per URL loaded in it: the merge policy's write amplification
                "merge_cpu_s": round(frontier.seen.merge_cpu_s - merge0, 2),
                "run_keys_written_per_url": round((_written(frontier) - written0) / n_step, 2),
                "link_cpu_s": round(link_cpu, 2), "link_wall_s": round(link_s, 2),
                "load": round(os.getloadavg()[0], 1), "utc": time.strftime("%H:%M:%S", time.gmtime()),
            })
            print(json.dumps(steps[-1]), file=sys.stderr, flush=True)
    frontier.flush()
    state.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    queued = state.counts()["queued"]
    with_queue = path.stat().st_size
    seen_bytes = frontier.seen.disk_bytes
    held = frontier.seen.count
    state.close()
    result = {
        "max_urls": args.max_urls, "hosts": args.hosts, "commit": commit, "steps": steps,
        "queued": queued, "bytes_per_queued_url_state_file": round(with_queue / max(1, queued), 1),
        "bytes_per_seen_url_runs": round(seen_bytes / max(1, held), 2),
        "peak_rss_mb": round(_peak_mb()),
        "run_keys_written_per_url": round(_written(frontier) / max(1, args.max_urls), 2),
        "merge_cpu_s": round(frontier.seen.merge_cpu_s, 1),
    }
    print(json.dumps(result, indent=1))
    if args.plot:
        _plot(steps, args.plot)


def store_only(args: argparse.Namespace) -> None:
    """The seen store without the frontier: insert rate, check rate, RSS and bytes to --max-urls keys."""
    import shutil
    import sqlite3

    from ccrawl.crawl.seen import SeenStore

    d = args.out / "store"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    db = sqlite3.connect(d / "s.db", isolation_level=None)
    db.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    store = SeenStore(db, d / "seen")
    gen = np.random.default_rng(5)
    steps = []
    held_sample = np.zeros(0, dtype=np.uint64)
    t0, c0, n0 = time.perf_counter(), time.process_time(), 0
    while store.count < args.max_urls:
        batch = gen.integers(0, 2**64, size=200_000, dtype=np.uint64)
        new = store.check(batch)
        db.execute("BEGIN")
        store.log(batch[new])
        db.execute("COMMIT")
        store.settle()
        held_sample = np.concatenate((held_sample[-200_000:], batch[:1000]))
        if store.count // args.step != (store.count - len(batch)) // args.step:
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            # checks: 10 batches of 20 000 keys, half held (from every age), half new
            batches = [np.concatenate((gen.choice(held_sample, 10_000), gen.integers(0, 2**64, size=10_000,
                                                                                       dtype=np.uint64)))
                       for _ in range(10)]
            t1, k1 = time.perf_counter(), time.process_time()
            for b in batches:
                got = store.check(b)
                assert not got[:10_000].any()
            cw, cc = time.perf_counter() - t1, time.process_time() - k1
            steps.append({"held": store.count, "inserts_per_s": round((store.count - n0) / wall),
                          "inserts_per_cpu_s": round((store.count - n0) / cpu),
                          "checks_per_s": round(200_000 / cw), "checks_per_cpu_s": round(200_000 / max(cc, 1e-9)),
                          "runs": len(store.runs), "rss_mb": round(_rss_mb()), "peak_rss_mb": round(_peak_mb()),
                          "bytes_per_key": round(store.disk_bytes / store.count, 3)})
            print(json.dumps(steps[-1]), file=sys.stderr, flush=True)
            t0, c0, n0 = time.perf_counter(), time.process_time(), store.count
    store.close()
    print(json.dumps({"store_only": True, "steps": steps}, indent=1))


def _burst(frontier: Frontier, args: argparse.Namespace, rng: random.Random, loaded: int, link_no: int,
           flush_every: int) -> tuple[float, float, float, int, int]:
    """``--links`` links at depth 1 in pages of 40, 90% of them already seen, every page from another registered
    domain, flushed every ``flush_every`` (or the frontier's floor): (wall s, CPU s of the process, CPU s of this
    thread, admitted, last link number)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    own = time.thread_time()
    before = frontier.admitted
    saved, frontier.config.flush_every = frontier.config.flush_every, flush_every
    for page in range(0, args.links, 40):
        links = []
        for k in range(page, min(args.links, page + 40)):
            if k % 10:
                links.append(_url(rng.randrange(loaded), args.hosts))
            else:
                link_no += 1
                links.append(f"http://www.site{link_no % args.hosts}.com/link/{link_no}")
        frontier.add_many(links, 1, source_host=f"www.src{page // 40 % 97}.example.org")
    frontier.flush()
    frontier.config.flush_every = saved
    return (time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - own, frontier.admitted - before,
            link_no)


def _time_checks(frontier: Frontier, loaded: int, hosts: int, rng: random.Random) -> float:
    """Seen checks per second (``SeenStore.check`` alone) over 10 batches of 20 000 keys, half held."""
    batches = []
    for _ in range(10):
        held = [_url(rng.randrange(loaded), hosts) for _ in range(10_000)]
        fresh = [f"http://x{rng.random()}.example.net/" for _ in range(10_000)]
        batches.append(url_keys(held + fresh))
    t0 = time.perf_counter()
    for keys in batches:
        new = frontier.seen.check(keys)
        assert not new[:10_000].any() and new[10_000:].all()
    return sum(len(k) for k in batches) / (time.perf_counter() - t0)


def _plot(steps: list[dict[str, float]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    held = np.array([s["held"] for s in steps]) / 1e6
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(held, [s["seeds_per_s"] / 1e3 for s in steps], "o-", label="seed load (k URLs/s, wall)")
    ax.plot(held, [s["seeds_per_cpu_s"] / 1e3 for s in steps], "o:", label="seed load (k URLs per CPU s)")
    ax.plot(held, [s["links_per_s"] / 1e3 for s in steps], "s-", label="link admission (k links/s, wall)")
    ax.plot(held, [s["links_per_cpu_s"] / 1e3 for s in steps], "s:", label="link admission (k links per CPU s)")
    ax.plot(held, [s["links_one_flush_per_cpu_s"] / 1e3 for s in steps], "x:",
            label="link admission, one flush a burst (k links per CPU s)")
    ax.plot(held, [s["checks_per_s"] / 1e5 for s in steps], "^-", label="seen checks (100k/s)")
    ax.set_xlabel("URLs held (millions)")
    ax.set_ylabel("rate")
    ax2 = ax.twinx()
    ax2.plot(held, [s["rss_mb"] for s in steps], "k--", label="RSS (MB)")
    ax2.set_ylabel("RSS (MB)")
    ax2.set_ylim(bottom=0)
    ax.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="lower left", fontsize=8)
    ax.set_title("crawl frontier: bench/bench_frontier.py")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
