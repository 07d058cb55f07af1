"""Refresh the vendored Public Suffix List and its sidecar from a file or the publicsuffixlist package.

Usage::

    python scripts/refresh_psl.py                       # take the list shipped by `publicsuffixlist`
    python scripts/refresh_psl.py --from path/to/public_suffix_list.dat

The list is copied byte for byte to ``ccrawl/data/psl/public_suffix_list.dat`` and the sidecar
``public_suffix_list.json`` records where it came from, its VERSION and COMMIT header lines, the
date of the list, its sha256 and how many rules each section holds. Nothing is downloaded: the
publicsuffixlist package is kept current on PyPI, so ``pip install -U publicsuffixlist`` followed by
this script is the refresh. A changed list changes registered domains and therefore shard keys:
bump it deliberately and say so in the changelog.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_DIR = REPO / "ccrawl" / "data" / "psl"
LIST_NAME = "public_suffix_list.dat"
SIDECAR_NAME = "public_suffix_list.json"


def package_list() -> tuple[Path, str]:
    """The list shipped by the installed ``publicsuffixlist`` package and a label naming it."""
    try:
        import publicsuffixlist
    except ImportError:
        sys.exit("refresh_psl: publicsuffixlist is not installed; `pip install -U publicsuffixlist` or use --from")
    from importlib.metadata import version

    path = Path(publicsuffixlist.__file__).resolve().parent / LIST_NAME
    return path, f"publicsuffixlist {version('publicsuffixlist')} (PyPI)"


def describe(data: bytes, source: str) -> dict[str, object]:
    """The sidecar for ``data``; exits with a message when it does not look like the PSL."""
    text = data.decode("utf-8")
    if "===BEGIN ICANN DOMAINS===" not in text or "===BEGIN PRIVATE DOMAINS===" not in text:
        sys.exit("refresh_psl: the file has no ICANN/PRIVATE section markers; is it public_suffix_list.dat?")
    version = re.search(r"^// VERSION: (\S+)", text, re.M)
    commit = re.search(r"^// COMMIT: ([0-9a-f]+)", text, re.M)
    icann, private = text.split("===BEGIN PRIVATE DOMAINS===", 1)
    date = None
    if version:
        # VERSION looks like 2026-10-22_08-36-41_UTC
        stamp = datetime.datetime.strptime(version.group(1), "%Y-%m-%d_%H-%M-%S_UTC")
        date = stamp.replace(tzinfo=datetime.UTC).isoformat().replace("+00:00", "Z")
    return {
        "file": LIST_NAME,
        "source": source,
        "version": version.group(1) if version else None,
        "commit": commit.group(1) if commit else None,
        "date": date,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "rules_icann": _count_rules(icann),
        "rules_private": _count_rules(private),
    }


def _count_rules(section: str) -> int:
    return sum(1 for line in section.splitlines() if line.strip() and not line.lstrip().startswith("//"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, help="a public_suffix_list.dat to vendor")
    parser.add_argument("--out", type=Path, default=TARGET_DIR, help="directory to write (default: package data)")
    args = parser.parse_args(argv)

    if args.source is not None:
        path, label = args.source, f"file {args.source.name}"
    else:
        path, label = package_list()
    data = path.read_bytes()
    sidecar = describe(data, label)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / LIST_NAME).write_bytes(data)
    (args.out / SIDECAR_NAME).write_text(json.dumps(sidecar, indent=2) + "\n")
    print(f"vendored PSL {sidecar['version']} ({str(sidecar['sha256'])[:12]}…) from {label}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
