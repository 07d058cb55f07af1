"""Take the reference profiles: one profiled ``recrawl run`` against the benchmark web.

    python -m bench.profile_run --name fetch-only --no-extract [--pages 8000] [--dir profiles/reference]

Writes ``<dir>/<name>/``: the CPU profile of every process by role (collapsed stacks and pprof),
the manifest, and ``memray stats`` of each heap capture as text (the ``.memray`` captures
themselves are large and are deleted unless ``--keep-heap``). The run's stderr summary is saved
beside them as ``summary.txt`` so the timing line and the profiles can be compared.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import DOMAIN, prepare_site, serve, write_worklist  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=8000, help="pages to fetch (hosts x pages/hosts)")
    ap.add_argument("--no-extract", action="store_true")
    ap.add_argument("--format", default="parquet")
    ap.add_argument("--dir", type=Path, default=REPO / "profiles" / "reference")
    ap.add_argument("--keep-heap", action="store_true")
    args = ap.parse_args()
    out = args.dir / args.name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    per_host = max(1, args.pages // args.hosts)
    with tempfile.TemporaryDirectory(prefix="ccrawl-prof-") as tmp:
        root = Path(tmp)
        prepare_site(root / "site", pages=per_host)
        with serve(root / "site", hosts=args.hosts, pages=per_host) as (_which, port):
            wl = write_worklist(root, args.hosts, per_host, port)
            cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
                   "--out", str(root / "out"), "--delay", "0", "--format", args.format,
                   "--resolve", f"*.{DOMAIN}=127.0.0.1", "--progress", "none",
                   "--profile-dir", str(out), "--profile-name", args.name]
            if args.no_extract:
                cmd.append("--no-extract")
            proc = subprocess.run(cmd, capture_output=True, text=True)
    (out / "summary.txt").write_text(" ".join(cmd[3:]) + "\n\n" + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"profile_run: recrawl run exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    for heap in sorted(out.glob("*.memray")):
        stats = subprocess.run([sys.executable, "-m", "memray", "stats", str(heap)], capture_output=True, text=True)
        heap.with_suffix(".memray-stats.txt").write_text(stats.stdout or stats.stderr)
        if not args.keep_heap:
            heap.unlink()
    print(f"profile_run: {out}", file=sys.stderr)
    print(proc.stderr, file=sys.stderr)


if __name__ == "__main__":
    main()
