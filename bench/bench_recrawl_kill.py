"""Crash safety of ``recrawl run`` under many kills: SIGKILL at random moments, resume, count.

    python -m bench.bench_recrawl_kill --kills 20 [--format parquet|warc] [--seed 1]

Serves the synthetic web (aiohttp, in this process), writes a work list of hosts x pages URLs, then
repeats: start ``ccrawl recrawl run`` (delay 300 ms, --shard-size 20KB so seals land every few
rows), wait for its first new checkpoint, sleep a random 0-1.5 s, SIGKILL it. Finally runs to the
end and prints rows lost and duplicated as JSON. Bounded by ``--kills``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ccrawl.testing.synthweb import SynthWebThread


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--format", default="parquet")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages", type=int, default=80)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp, SynthWebThread(hosts=a.hosts, pages=a.pages, page_bytes=6000) as web:
        root = Path(tmp)
        urls = web.page_urls()
        (root / "wl").mkdir()
        for i in range(3):
            pq.write_table(pa.table({"url": urls[i::3]}), root / "wl" / f"part-{i}.parquet", row_group_size=10)
        journal, state, out = root / "j.jsonl", root / "s.json", root / "out"
        cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(root / "wl"), "--column", "url",
               "--out", str(out), "--state", str(state), "--resolve", "*.test=127.0.0.1", "--workers", "32",
               "--timeout", "5s", "--shard-size", "20KB", "--writers", "2", "--progress", "none",
               "--journal", str(journal), "--format", a.format, "--batch", "10"]
        landed = 0
        t0 = time.time()
        for _ in range(a.kills):
            before = journal.read_text().count('"checkpoint"') if journal.exists() else 0
            proc = subprocess.Popen([*cmd, "--delay", "300ms"], stderr=subprocess.DEVNULL, env=os.environ)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (journal.read_text().count('"checkpoint"')
                                                   if journal.exists() else 0) <= before:
                time.sleep(0.02)
            time.sleep(rng.uniform(0, 1.5))
            proc.kill()
            proc.wait()
            if json.loads(state.read_text())["done"]:
                break
            landed += 1
        subprocess.run([*cmd, "--delay", "0s"], check=True, stderr=subprocess.DEVNULL)
        if a.format == "parquet":
            got = pq.read_table(sorted(out.glob("*.parquet")), columns=["url"]).column("url").to_pylist()
        else:
            from warcio.archiveiterator import ArchiveIterator

            got = []
            for f in out.glob("*.warc.gz"):
                with open(f, "rb") as fh:
                    got += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                            if r.rec_type == "response"]
        counts = Counter(got)
        print(json.dumps({"format": a.format, "kills_mid_run": landed, "urls": len(urls), "rows": len(got),
                          "lost": len(set(urls) - set(counts)), "duplicates": sum(n - 1 for n in counts.values()),
                          "files": len(list(out.iterdir())), "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
