"""Fetch the public labelled extraction corpora (issue 40), every file checked against its pinned sha256.

    python scripts/fetch_corpora.py        # every corpus, into $CCRAWL_CORPORA_DIR or ~/.cache/ccrawl/corpora
    python scripts/fetch_corpora.py --corpus dragnet --corpus aeb
    python scripts/fetch_corpora.py --snapshot j-szulc/html-cleaning-dataset-merged=/path/to/snapshot
    CCRAWL_CORPORA_SNAPSHOTS=/work/.mirror python scripts/fetch_corpora.py   # snapshots named <owner>+<name>
    python scripts/fetch_corpora.py --list                   # the corpora, their kind, source and state
    python scripts/fetch_corpora.py --pin --snapshot ...     # rewrite the pins (maintainers):
                                                             # ccrawl/testing/extracteval/corpora.sha256

The files come from public GitHub repositories at pinned commits (``ccrawl/testing/extracteval/corpora.py``):
from a local snapshot when one is given (a git directory or a checkout; read at the pinned commit),
else from the commit's tarball over HTTPS. Where neither works (this sandbox reaches PyPI but not
GitHub, so here only a snapshot does) the corpus is skipped and the reason printed. Nothing is
ever written into the repository. ``aeb`` is the held-out corpus: no change is tuned on it.

Idempotent: a verified corpus is not copied again. Exit status 1 when any corpus asked for could
not be fetched (the others are still fetched; the gates skip the missing ones, saying why).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ccrawl.testing.extracteval.corpora import (
    BY_NAME,
    CORPORA,
    MANIFEST,
    CorporaUnavailable,
    cache_dir,
    fetch_corpora,
    find_snapshot,
    is_complete,
    load,
    manifest,
    pin_from_snapshot,
)


def _snapshots(values: list[str]) -> dict[str, Path]:
    out = {}
    for v in values:
        repo, sep, path = v.partition("=")
        if not sep or "/" not in repo:
            raise SystemExit(f"--snapshot takes owner/name=PATH, not {v!r}")
        out[repo] = Path(path)
    return out


def main() -> int:
    """Fetch (or list, or pin) the corpora asked for."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=sorted(BY_NAME), help="only these (repeatable)")
    ap.add_argument("--snapshot", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="a local snapshot of a source repository (git dir or checkout)")
    ap.add_argument("--root", type=Path, help="cache folder (default $CCRAWL_CORPORA_DIR or ~/.cache/ccrawl/corpora)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds for the HTTPS fallback to answer")
    ap.add_argument("--list", action="store_true", help="say what each corpus is and whether it is fetched")
    ap.add_argument("--pin", action="store_true", help="rewrite the manifest from the snapshots (maintainers)")
    args = ap.parse_args()
    root = args.root or cache_dir()
    snaps = _snapshots(args.snapshot)
    chosen = [BY_NAME[n] for n in args.corpus] if args.corpus else list(CORPORA)
    if args.pin:
        return _pin(chosen, snaps)
    pins = manifest()
    if args.list:
        for c in chosen:
            state = "fetched" if is_complete(c, root, pins.get(c.name, {})) else "absent"
            held = " HELD OUT" if c.held_out else ""
            print(f"{c.name:16s} {state:8s} {len(pins.get(c.name, {})):5d} files  {c.kind}{held}  "
                  f"[{c.repo.name}@{c.repo.commit[:12]}, licence: {c.repo.licence}]")
        return 0
    failed = 0
    results = fetch_corpora(chosen, root, snapshots=snaps, timeout=args.timeout)
    for c in chosen:
        how = results[c.name]
        try:
            if isinstance(how, CorporaUnavailable):
                raise how
            pages = load(c.name, root, verify=False)
        except CorporaUnavailable as exc:
            failed += 1
            print(f"{c.name}: skipped: {exc}", file=sys.stderr)
            continue
        held = " (held out: report only, never tune)" if c.held_out else ""
        print(f"{c.name}: {len(pages)} labelled pages in {root / c.name} ({how}){held}")
    return 1 if failed else 0


def _pin(chosen: list, snaps: dict[str, Path]) -> int:  # type: ignore[type-arg]
    old = manifest() if MANIFEST.exists() else {}
    for c in chosen:
        snap = find_snapshot(c.repo, snaps)
        if snap is None:
            print(f"{c.name}: no snapshot of {c.repo.name} given; its pins stay", file=sys.stderr)
            continue
        old[c.name] = pin_from_snapshot(c, snap)
        print(f"{c.name}: {len(old[c.name])} files pinned from {snap}")
    lines = ["# sha256  <corpus>/<path in its repository at the pinned commit> (ccrawl/testing/extracteval/corpora.py)"]
    for c in CORPORA:
        lines += [f"{d}  {c.name}/{p}" for p, d in sorted(old.get(c.name, {}).items())]
    MANIFEST.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
