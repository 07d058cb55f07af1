"""Where h2m's leaked text comes from: every ``without`` snippet that survives, by the element that carried it.

    python bench/extract_leaks.py                          # whole html-eval corpus, table by carrier
    python bench/extract_leaks.py --missed                 # the ``with`` snippets lost instead
    python bench/extract_leaks.py --json /tmp/leaks.json   # one row per snippet, for diffing runs

For each page h2m extracts the text as the engines do; every ``without`` snippet found in it
(a false positive of the quality gate) is then located in the parsed page: the deepest element
whose text holds the whole snippet. It is reported by its *carrier*: the closest element on
the way up (itself included) that has a class or id, or failing that a sectioning tag, written
``tag.class#id``, and by where it stands against the container h2m rendered (``in`` the chosen
container, ``body`` when h2m fell back to the whole body or a scored region). The table groups
the snippets by the carrier's tag and class/id words, so a cause shared by many pages shows as
one row. Analysis only: the gate's scoring is ``ccrawl.testing.extracteval.evaluate``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from selectolax.lexbor import LexborHTMLParser

from ccrawl.extract.engines import _fallback_roots, get_extractor
from ccrawl.extract.mainsel import select_main
from ccrawl.testing.extracteval.evaluate import load_pages, sample

_SECTIONING = frozenset({"article", "main", "aside", "nav", "header", "footer", "section", "form", "table", "ul", "ol"})


def _norm(text: str) -> str:
    return " ".join(text.split())


def _deepest(body: Any, snippet: str) -> Any:
    """The deepest element whose whitespace-collapsed text holds ``snippet`` (None if none does)."""
    node = body
    if snippet not in _norm(node.text(deep=True)):
        return None
    while True:
        for child in node.iter():
            if snippet in _norm(child.text(deep=True)):
                node = child
                break
        else:
            return node


def _label(node: Any) -> str:
    attrs = node.attributes
    out = node.tag
    cls = " ".join((attrs.get("class") or "").split()[:3])
    if cls:
        out += "." + cls.replace(" ", ".")
    if attrs.get("id"):
        out += "#" + (attrs.get("id") or "")
    return out


def _carrier(node: Any, stop: Any) -> tuple[str, list[str]]:
    """The closest named element from ``node`` up to ``stop`` and the path of tags up to it."""
    path = []
    while node is not None and node.tag not in ("body", "html"):
        path.append(_label(node))
        attrs = node.attributes
        if attrs.get("class") or attrs.get("id") or node.tag in _SECTIONING:
            return _label(node), path
        if stop is not None and node.mem_id == stop.mem_id:
            break
        node = node.parent
    return (path[-1] if path else "body"), path


def _inside(node: Any, root: Any) -> bool:
    while node is not None:
        if node.mem_id == root.mem_id:
            return True
        node = node.parent
    return False


_WORD = re.compile(r"[a-z]+")


def _group(carrier: str) -> str:
    """tag and the class/id words: ``div.share-box#x12`` -> ``div share box x``."""
    tag = carrier.partition(".")[0].partition("#")[0]
    words = sorted(set(_WORD.findall(carrier[len(tag) :].lower())))
    return tag + (" " + " ".join(words[:4]) if words else "")


def main() -> int:
    """Run h2m on the corpus and print where the leaks (or the misses) come from."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("CCRAWL_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--corpus", type=Path, default=default / "html-eval")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--missed", action="store_true", help="locate the with snippets h2m lost instead")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    engine = get_extractor("h2m")
    rows = []
    for page in sample(load_pages(args.corpus), args.every):
        html = (args.corpus / "pages" / page.file).read_bytes()
        hay = _norm(engine.extract(html, page.url).text)
        snippets = page.with_ if args.missed else page.without
        hits = [s for s in snippets if (_norm(s) in hay) != args.missed]
        if not hits:
            continue
        tree = LexborHTMLParser(html)
        tree.strip_tags(["script", "style", "template", "svg"])
        body = tree.body
        if body is None:
            continue
        main = select_main(body)
        roots = [main.root] if main.chosen else _fallback_roots(body, main.root_chars)[0]
        where = "in" if main.chosen else "body" if roots[0].mem_id == body.mem_id else "scored"
        for s in hits:
            node = _deepest(body, _norm(s))
            if node is None:
                rows.append({"file": page.file, "snippet": s, "carrier": "?", "group": "?", "where": "?", "path": []})
                continue
            carrier, path = _carrier(node, None)
            inside = any(_inside(node, r) for r in roots)
            rows.append(
                {
                    "file": page.file,
                    "snippet": s[:80],
                    "carrier": carrier,
                    "group": _group(carrier),
                    "where": where if inside else "outside",
                    "root": _label(roots[0]),
                    "path": path[:6],
                }
            )
    print(
        f"{len(rows)} {'missed with' if args.missed else 'leaked without'} snippets on "
        f"{len({r['file'] for r in rows})} pages"
    )
    print("by where:", dict(Counter(r["where"] for r in rows).most_common()))
    print("by carrier tag:", dict(Counter(r["group"].split(" ")[0] for r in rows).most_common(15)))
    words = Counter(w for r in rows for w in set(r["group"].split(" ")[1:]))
    print("by class/id word:", dict(words.most_common(30)))
    print(f"top {args.top} groups:")
    for group, n in Counter(r["group"] for r in rows).most_common(args.top):
        example = next(r for r in rows if r["group"] == group)
        print(f"  {n:4d}  {group:40s}  e.g. {example['file']}: {example['snippet'][:50]!r}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
