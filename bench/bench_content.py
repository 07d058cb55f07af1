"""What the content commands cost and how their signals fall on real pages.

Two parts, each bounded in time:

1. **Signals on the corpus** (``../shared/corpus/html-eval/pages``, skipped when absent): per
   page, ``h2m`` extraction then :func:`quality_signals`; reports the median and p95 cost of
   each, and how the signals fall across real pages (spam score quantiles, pages called parked,
   pages with each spam cue), listing the flagged pages so they can be read.
2. **Live fetch** against the synthetic web on loopback: ``fetch_pages`` over N URLs of many
   hosts at ``-j`` 8, pages/s including extraction.

    python bench/bench_content.py [--pages 1032] [--live 400] [--seconds 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ccrawl.content.live import fetch_pages, live_config  # noqa: E402
from ccrawl.content.signals import quality_signals  # noqa: E402
from ccrawl.extract.decode import decode_body  # noqa: E402
from ccrawl.extract.engines import get_extractor  # noqa: E402


def _q(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def corpus_part(limit: int, seconds: float) -> None:
    pages_dir = REPO.parent / "shared" / "corpus" / "html-eval" / "pages"
    if not pages_dir.is_dir():
        print(f"corpus: skipped, {pages_dir} not found")
        return
    import json

    # Real page URLs, so "external" links are judged against the page's own domain.
    evaldata = json.loads((pages_dir.parent / "evaldata.json").read_text(encoding="utf-8"))
    url_of = {Path(v["file"]).name: u for u, v in evaldata.items()}
    files = sorted(pages_dir.glob("*.html"))[:limit]
    engine = get_extractor("h2m")
    t_ex: list[float] = []
    t_sig: list[float] = []
    scores: list[float] = []
    parked: list[tuple[str, list[str]]] = []
    cues: dict[str, list[str]] = {}
    deadline = time.monotonic() + seconds
    for f in files:
        if time.monotonic() > deadline:
            break
        decoded = decode_body(f.read_bytes())
        url = url_of.get(f.name, f"http://corpus.example/{f.stem}")
        t0 = time.perf_counter()
        ex = engine.extract(decoded.text, url)
        t1 = time.perf_counter()
        s = quality_signals(decoded.text, ex, url)
        t2 = time.perf_counter()
        t_ex.append((t1 - t0) * 1000)
        t_sig.append((t2 - t1) * 1000)
        scores.append(s.spam_score)
        if s.parked:
            parked.append((f.name, s.parked_cues))
        for name in s.spam_cues:
            cues.setdefault(name, []).append(f.name)
    n = len(t_ex)
    print(f"corpus: {n} pages of {len(files)} (html-eval), h2m + signals, one core")
    print(f"  extract h2m   median {statistics.median(t_ex):.2f} ms  p95 {_q(t_ex, 0.95):.2f} ms")
    print(f"  signals       median {statistics.median(t_sig):.2f} ms  p95 {_q(t_sig, 0.95):.2f} ms")
    print(
        f"  spam_score    p50 {_q(scores, 0.5):.3f}  p90 {_q(scores, 0.9):.3f}  p99 {_q(scores, 0.99):.3f}  "
        f"max {max(scores):.3f}  >=0.5: {sum(1 for x in scores if x >= 0.5)}"
    )
    for name, names in sorted(cues.items()):
        print(f"  cue {name:<13} {len(names):4d} pages  e.g. {', '.join(names[:3])}")
    print(f"  parked        {len(parked)} pages: {parked[:10]}")


def live_part(count: int, seconds: float) -> None:
    import subprocess

    # The synthetic web in its own process, so the server does not share this process's GIL.
    server = subprocess.Popen(
        [sys.executable, "-m", "ccrawl.testing.synthweb", "--port", "0", "--hosts", "200", "--pages", "10"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        urls = [f"http://site{i % 200}.test:{port}/p/{i // 200 % 10}" for i in range(count)]
        cfg = live_config(resolve={"*.test": "127.0.0.1"}, delay=0.0, timeout=10.0, concurrency=8)
        t0 = time.perf_counter()
        done = ok = 0
        for page in fetch_pages(urls, config=cfg, concurrency=8):
            done += 1
            ok += page.ok
            if time.perf_counter() - t0 > seconds:
                break
        elapsed = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait(10)
    print(
        f"live: {done} synthetic-web pages (~24 KB) fetched + extracted at -j 8 in {elapsed:.2f} s: "
        f"{done / elapsed:.0f} pages/s, {ok} ok"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=1032)
    ap.add_argument("--live", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=50.0, help="time bound of each part")
    args = ap.parse_args()
    corpus_part(args.pages, args.seconds)
    live_part(args.live, args.seconds)


if __name__ == "__main__":
    main()
