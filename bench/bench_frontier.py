"""The frontier's admission rate and on-disk bytes as the seen set grows.

    python bench/bench_frontier.py --urls 2000000 --step 500000 --out /tmp/bfront

Admits ``--urls`` distinct URLs over 10 000 hosts through ``Frontier.add`` + ``flush`` (canonicalise,
10-byte blake3 key, seen-set insert, queue insert, host upsert), timing each ``--step``; then drops
the queue (as sealing every page would), VACUUMs, and reports the state file's bytes per URL, which
is what the seen set (plus the hosts table) costs a URL for good. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.crawl.frontier import Frontier, FrontierConfig
from ccrawl.crawl.state import StateFile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", type=int, default=2_000_000)
    parser.add_argument("--step", type=int, default=500_000)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "state.db"
    for p in args.out.glob("state.db*"):
        p.unlink()
    state = StateFile(path)
    frontier = Frontier(state, FrontierConfig(max_depth=1, flush_every=20_000))
    steps = []
    start = time.perf_counter()
    for i in range(args.urls):
        frontier.add(f"http://h{i % args.hosts}.example.com/page/{i}?q={i * 7919 % 100003}", 0, seed=True)
        if (i + 1) % args.step == 0:
            frontier.flush()
            now = time.perf_counter()
            steps.append({"admitted": i + 1, "urls_per_s": round(args.step / (now - start)),
                          "file_mb": round(path.stat().st_size / 1e6, 1)})
            start = now
    frontier.flush()
    with_queue = path.stat().st_size
    state.db.execute("DELETE FROM queue")
    state.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    state.db.execute("VACUUM")
    seen_only = path.stat().st_size
    state.close()
    print(json.dumps({
        "urls": args.urls, "hosts": args.hosts, "steps": steps,
        "bytes_per_url_with_queue": round(with_queue / args.urls, 1),
        "bytes_per_url_seen_and_hosts": round(seen_only / args.urls, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
