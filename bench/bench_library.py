"""Dataset library costs: one locked manifest write at growing sizes, and scan/verify hashing speed.

Run from the repository root::

    python bench/bench_library.py            # about 20 s on a 2-core machine
    python bench/bench_library.py --quick    # a few seconds

What it answers: how long a locked read-change-write of ``library.json`` takes as the manifest
grows (this is what ``download --library`` pays per batch of 64 files, and why it batches), and
how fast ``library scan`` hashes files (MB/s, threads = ``-j``). Each figure is the median of
``--repeats`` runs; the whole run stops early when ``--budget`` seconds have passed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.ops.library import library_scan, library_verify
from ccrawl.store.library import Library


def manifest_write(root: Path, entries: int, repeats: int) -> float:
    lib = Library(root)
    lib.record(lib.artifact(f"CC-MAIN-2025-26/warc/f{i:07d}.warc.gz", size=i, sha256="ab" * 32)
               for i in range(entries))
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        lib.record([lib.artifact(f"CC-MAIN-2025-26/wet/x{r}.wet.gz", size=r, sha256="cd" * 32)])
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def hashing(root: Path, files: int, size_mb: int, workers: int, repeats: int) -> dict[str, float]:
    block = bytes(range(256)) * 4096  # 1 MiB
    for i in range(files):
        path = root / f"CC-MAIN-2025-26/warc/h{i}.warc.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            for _ in range(size_mb):
                fh.write(block)
    total = files * size_mb
    scan_t = []
    verify_t = []
    for _ in range(repeats):
        (root / "library.json").unlink(missing_ok=True)
        t0 = time.perf_counter()
        list(library_scan(str(root), workers=workers))
        scan_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        list(library_verify(str(root), workers=workers))
        verify_t.append(time.perf_counter() - t0)
    return {"scan_mb_s": total / statistics.median(scan_t), "verify_mb_s": total / statistics.median(verify_t)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=60.0)
    args = parser.parse_args()
    start = time.monotonic()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 50_000]
    results: dict[str, object] = {"manifest_write_s": {}, "hashing": {}}
    for n in sizes:
        if time.monotonic() - start > args.budget:
            break
        with tempfile.TemporaryDirectory() as tmp:
            results["manifest_write_s"][n] = manifest_write(Path(tmp), n, args.repeats)  # type: ignore[index]
    files, size_mb = (4, 16) if args.quick else (8, 32)
    for workers in (1, 2):
        if time.monotonic() - start > args.budget:
            break
        with tempfile.TemporaryDirectory() as tmp:
            results["hashing"][f"j{workers}"] = hashing(Path(tmp), files, size_mb, workers, 3)  # type: ignore[index]
    results["elapsed_s"] = round(time.monotonic() - start, 1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
