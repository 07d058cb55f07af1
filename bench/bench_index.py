"""Benchmark: `ccrawl index build` over N documents (whole command, peak RSS) and query latency.

Documents are made from the shared html-eval corpus: each page's text (h2m) is cut into windows
of 150-600 words, one document per window, with a per-document variation token so no two are
equal. The JSONL is written to a file first; the figure is the whole `ccrawl index build --input
FILE` command (start-up included) and its peak RSS (the tree's, from `/usr/bin/time`-style
rusage of the child). Then `index search` is timed for a set of queries of 1-4 terms, as whole
commands and as warm calls on an open index.

    python bench/bench_index.py --docs 1000000 --out /tmp/bench-index
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GO_DOCS_PER_S = 13053 / 4.2  # the Go original's figure from its search index guide


def corpus_texts(corpus: Path, limit: int) -> list[list[str]]:
    from ccrawl.extract.engines import get_extractor

    engine = get_extractor("h2m")
    texts = []
    for page in sorted((corpus / "html-eval" / "pages").iterdir())[:limit]:
        try:
            out = engine.extract(page.read_bytes(), f"http://{page.stem}.test/")
        except Exception:  # a page the extractor refuses is simply not used
            continue
        words = (out.text or "").split()
        if len(words) >= 150:
            texts.append(words)
    return texts


def write_docs(path: Path, texts: list[list[str]], count: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    size = 0
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            words = texts[i % len(texts)]
            n = rng.randint(150, 600)
            start = rng.randint(0, max(0, len(words) - n))
            text = " ".join(words[start:start + n]) + f" doc{i} v{rng.randint(0, 10**6)}"
            line = json.dumps({"url": f"http://h{i % 200_000}.test/p/{i}", "title": " ".join(words[start:start + 8]),
                               "text": text, "language": "eng"}, ensure_ascii=False)
            out.write(line + "\n")
            size += len(line) + 1
    return size


def run_measured(args: list[str]) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS MB of the child, stdout, and CPU seconds (user+sys) of one whole command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.monotonic() - started
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, after.ru_maxrss / 1024, proc.stdout, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-index"))
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--pages", type=int, default=400, help="corpus pages to draw text from")
    parser.add_argument("--heap-mb", type=int, default=128)
    parser.add_argument("--reuse", action="store_true", help="keep an existing docs.jsonl of --out (same --docs)")
    ns = parser.parse_args()
    if not (ns.corpus / "html-eval").is_dir():
        ns.corpus = REPO.parent.parent / "shared" / "corpus"
    ns.out.mkdir(parents=True, exist_ok=True)
    docs = ns.out / "docs.jsonl"
    texts = corpus_texts(ns.corpus, ns.pages)
    t0 = time.monotonic()
    size = docs.stat().st_size if ns.reuse and docs.exists() else write_docs(docs, texts, ns.docs)
    print(f"documents: {ns.docs:,} from {len(texts)} corpus pages, {size / 1e6:.0f} MB of JSONL "
          f"(made in {time.monotonic() - t0:.1f} s)", flush=True)
    ccrawl = [sys.executable, "-m", "ccrawl"]
    wall, peak, out, cpu = run_measured([*ccrawl, "index", "build", "--dir", str(ns.out / "idx"), "--input", str(docs),
                                    "--heap-mb", str(ns.heap_mb), "-o", "json"])
    stats = json.loads(out)
    rate = stats["documents"] / wall
    print(f"index build: {stats['documents']:,} docs in {wall:.1f} s = {rate:,.0f} docs/s "
          f"({rate / GO_DOCS_PER_S:.2f}x the Go figure of {GO_DOCS_PER_S:,.0f}); CPU {cpu:.1f} s = "
          f"{stats['documents'] / cpu:,.0f} docs per CPU second; peak RSS {peak:.0f} MB; "
          f"index {stats['bytes'] / 1e6:.0f} MB", flush=True)

    from ccrawl.store.textindex import Searcher

    rng = random.Random(3)
    vocab = [w for words in texts[:50] for w in words if w.isalpha() and len(w) > 3]
    queries = [" ".join(rng.sample(vocab, k)) for k in (1, 2, 3, 4) for _ in range(10)]
    searcher = Searcher.open(ns.out / "idx")
    warm = []
    for q in queries:
        t = time.perf_counter()
        searcher.search(q, 100)
        warm.append((time.perf_counter() - t) * 1000)
    cold = []
    for q in queries[:8]:
        w, _, _, _ = run_measured([*ccrawl, "index", "search", q, "--dir", str(ns.out / "idx"), "-o", "jsonl"])
        cold.append(w * 1000)
    print(f"index search (top 100, 40 queries of 1-4 terms): warm median {statistics.median(warm):.1f} ms, "
          f"max {max(warm):.1f} ms; whole command median {statistics.median(cold):.0f} ms", flush=True)


if __name__ == "__main__":
    main()
