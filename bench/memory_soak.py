"""A long recrawl, bounded in time, showing resident memory flat and ``--queue-mb`` respected.

    python -m bench.memory_soak --rows 1000000 --seconds 300 [--queue-mb 64] [--no-extract]

Writes a work list of ``--rows`` URLs (1000 hosts x rows/1000 pages of the benchmark web), runs
``ccrawl recrawl run`` over it for ``--seconds`` and then sends SIGTERM (the run drains, seals and
checkpoints). The process tree's resident memory is sampled from /proc every second; the report
gives it at the 10%, 25%, 50%, 75% and 100% marks of the run, the ratio of the 100% mark to the
10% mark (the claim is "flat": within 10%), and the run summary's queue peak against its bound.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.recrawl_bench import _tree_rss_mb  # noqa: E402
from bench.web import DOMAIN, prepare_site, serve  # noqa: E402


def write_big_worklist(out: Path, rows: int, port: int, hosts: int = 1000, pages: int = 25) -> Path:
    """``rows`` URLs over ``hosts`` hosts in host-interleaved order, in parts of 250k rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wl = out / "worklist"
    wl.mkdir(parents=True, exist_ok=True)
    part, batch = 0, []
    for i in range(rows):
        batch.append(f"http://h{i % hosts}.{DOMAIN}:{port}/p/{(i // hosts) % pages}.html?r={i}")
        if len(batch) == 250_000:
            pq.write_table(pa.table({"url": batch}), wl / f"part-{part:05d}.parquet", row_group_size=50_000)
            part, batch = part + 1, []
    if batch:
        pq.write_table(pa.table({"url": batch}), wl / f"part-{part:05d}.parquet", row_group_size=50_000)
    return wl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--queue-mb", type=float, default=64)
    ap.add_argument("--no-extract", action="store_true")
    ap.add_argument("--writers", type=int, default=0,
                    help="writer processes (0: the default; a fetch-only run then writes in its fetch processes)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="ccrawl-soak-"))
    prepare_site(root / "site", pages=25)
    with serve(root / "site", hosts=1000, pages=25) as (which, port):
        wl = write_big_worklist(root, args.rows, port)
        cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
               "--out", str(root / "out"), "--state", str(root / "state.json"), "--delay", "0",
               "--queue-mb", str(args.queue_mb), "--shard-size", "64MB", "--resolve", f"*.{DOMAIN}=127.0.0.1",
               "--progress", "none"]
        if args.no_extract:
            cmd.append("--no-extract")
        if args.writers:
            cmd += ["--writers", str(args.writers)]
        print(f"soak: {which} on :{port}, {args.rows} rows, {args.seconds} s: {' '.join(cmd[3:])}", file=sys.stderr)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        samples: list[tuple[float, float]] = []
        while proc.poll() is None and time.monotonic() - start < args.seconds:
            samples.append((time.monotonic() - start, _tree_rss_mb(proc.pid)))
            time.sleep(1.0)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    elapsed = samples[-1][0] if samples else 0.0

    def at(share: float) -> float:
        target = elapsed * share
        return min(samples, key=lambda s: abs(s[0] - target))[1]

    marks = {f"{int(s * 100)}%": round(at(s)) for s in (0.1, 0.25, 0.5, 0.75, 1.0)}
    fetched = re.search(r"recrawl: (\d+) fetched", err)
    queue = re.search(r"queue peak ([\d.]+) MB of ([\d.]+) MB bound", err)
    report = {
        "rows_in_work_list": args.rows,
        "seconds": round(elapsed),
        "fetched": int(fetched.group(1)) if fetched else None,
        "tree_rss_mb": marks,
        "rss_100_over_10": round(at(1.0) / at(0.1), 3) if samples else None,
        "queue_peak_mb": float(queue.group(1)) if queue else None,
        "queue_bound_mb": float(queue.group(2)) if queue else None,
        "exit": proc.returncode,
    }
    print(err.strip(), file=sys.stderr)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
