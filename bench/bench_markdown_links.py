"""What link targets cost a Markdown corpus: h2m with links kept and as text, on the html-eval pages.

    python bench/bench_markdown_links.py [--corpus DIR] [--engine h2m]

For each mode prints the Markdown's characters and pre-tokens (runs of word characters, or one
punctuation mark: a stand-in for a BPE tokenizer, whose vocabulary cannot be fetched here), the
gate's F1 scored on the Markdown string and on the text, and the CPU seconds of the whole run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.extract.engines import get_extractor
from ccrawl.extract.evaluate import Score, load_pages, score_page

PIECE = re.compile(r"\w+|[^\w\s]")


def main() -> int:
    """Run both link modes over the corpus and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("CCRAWL_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--corpus", type=Path, default=default / "html-eval")
    ap.add_argument("--engine", default="h2m")
    args = ap.parse_args()
    if not (args.corpus / "evaldata.json").is_file():
        print(f"html-eval corpus not found at {args.corpus}: pass --corpus", file=sys.stderr)
        return 1
    pages = load_pages(args.corpus)
    bodies = [(p, (args.corpus / "pages" / p.file).read_bytes()) for p in pages]
    for links in ("keep", "text"):
        engine = get_extractor(args.engine, links=links)
        text_score, md_score = Score(), Score()
        chars = pieces = 0
        cpu = 0.0
        for page, body in bodies:
            t0 = time.process_time()
            x = engine.extract(body, page.url)
            cpu += time.process_time() - t0
            text_score.add(score_page(x.text, page))
            md_score.add(score_page(x.markdown, page))
            chars += len(x.markdown)
            pieces += len(PIECE.findall(x.markdown))
        print(
            f"{engine.label:24s} markdown chars {chars:>10,} pre-tokens {pieces:>10,}"
            f"  markdown F1 {md_score.f1:.4f} (P {md_score.precision:.4f} R {md_score.recall:.4f})"
            f"  text F1 {text_score.f1:.4f}  CPU {cpu:.2f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
