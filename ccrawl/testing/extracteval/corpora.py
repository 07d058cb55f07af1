"""Public labelled extraction corpora beyond html-eval: pinned by sha256, fetched into a cache, scored by word.

Issue 40: extraction measured where it was never tuned. Every corpus is a set of HTML pages with
the main content a person (or a benchmark's maintainers) wrote down for it, taken as plain files
from a public repository at a pinned commit, every file pinned by sha256 in ``corpora.sha256``
beside this module. Nothing of it is committed to this repository: ``python
scripts/fetch_corpora.py`` copies the pinned files into ``~/.cache/ccrawl/corpora/<name>/``
(``$CCRAWL_CORPORA_DIR``), checking each file's hash, from

* a local snapshot of the repository (a git directory or a checkout) named by
  ``--snapshot owner/name=PATH`` or found under ``$CCRAWL_CORPORA_SNAPSHOTS``
  (``<dir>/<owner>+<name>/repo`` or ``<dir>/<owner>+<name>``), read at the pinned commit; else
* the commit's tarball over HTTPS (``codeload.github.com``, or ``$CCRAWL_CORPORA_TARBALLS``), on a
  machine that can reach GitHub.

A corpus that neither gives is skipped with the reason (the gate tests skip the same way).

The corpora (``CORPORA``), by kind:

========== ======================================================= =========================
name       pages and labels                                         kind
========== ======================================================= =========================
l3s-gn1    621 Google News pages of 2008 (Kohlschütter et al.,      news
           boilerpipe), annotated in the HTML: headline and full
           text are the content
cleaneval  CleanEval 2007 final set (Baroni et al.), 681 pages with blogs, forums, lists and
           gold text; CleanPortalEval (70 pages of 4 portals)       personal pages
           scored alongside as ``cleanportaleval``
dragnet    1,381 news and blog pages of 2012 (Peters & Lecocq,      news and blogs
           dragnet), gold text up to its comments marker
htmltotext 28 pages labelled by hand (leogao2/htmltotext-benchmark) non-English (de, hr, zh:
           in en, de, hr, zh: blogs, forums, news                   13 pages) and forums
readability Mozilla Readability's test pages (source and the        documentation, product
           expected output of Readability.js), the real pages of    and non-English pages
           them (unit-test fixtures under 10 KB of HTML or 50
           words of gold left out)
aeb        scrapinghub's article-extraction-benchmark: 181 article  **held out**: news and
           pages with their article body                            blog articles
========== ======================================================= =========================

``aeb`` is the **held-out** corpus (``HELD_OUT``): no change is tuned on it; it is reported when
a change is finished, never while it is being made.

The scorer is ``articles.score_text``: a bag of lower-cased word tokens (``\\w`` runs; one token
per character in scripts written without spaces), precision = shared / extracted, recall = shared
/ expected, summed over a corpus's pages (micro); the mean of the per-page F1 beside it, which is
what the Web Content Extraction Benchmark (Bevendorff et al., SIGIR 2023) averages.
"""

from __future__ import annotations

import gzip
import hashlib
import html as htmllib
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

MANIFEST = Path(__file__).with_name("corpora.sha256")


@dataclass(frozen=True, slots=True)
class Repo:
    """A public repository at a pinned commit."""

    name: str  # owner/name
    commit: str
    licence: str

    @property
    def snapshot_dirname(self) -> str:
        """``owner+name``: how a snapshot folder of it is named."""
        return self.name.replace("/", "+")


MERGED = Repo(
    "j-szulc/html-cleaning-dataset-merged",
    "46e01a04b47051838a228bf23631430b2c9de375",
    "none stated; the mirror's README defers to each dataset's source (CleanEval, CleanPortalEval, dragnet_data, "
    "L3S-GN1 via page-signal, Mozilla Readability: Apache-2.0)",
)
HTMLTOTEXT = Repo("leogao2/htmltotext-benchmark", "feab59949ee4f9789af8e0c2412720895278d3cf", "none stated")
AEB = Repo("scrapinghub/article-extraction-benchmark", "4a3bc979f76c0df73cb95fe272e2fc1b96f9f010", "MIT")


@dataclass(frozen=True, slots=True)
class Corpus:
    """One labelled corpus: where its files are, what kind of pages it holds, how its labels read."""

    name: str
    kind: str
    repo: Repo
    prefixes: tuple[str, ...]  # folders (or files) of the repository it takes
    labels: str
    held_out: bool = False


CORPORA: tuple[Corpus, ...] = (
    Corpus("l3s-gn1", "news", MERGED, ("page-signal-master/",),
           "annotated HTML (x-nc-sel1 headline, x-nc-sel2 full text = content)"),
    Corpus("cleaneval", "blogs, forums, general web", MERGED, ("cleaneval-final/",),
           "gold text with <p>/<h>/<l> block marks and a URL line"),
    Corpus("cleanportaleval", "portal news and blogs", MERGED, ("CleanPortalEval-master/",),
           "gold text as CleanEval's"),
    Corpus("dragnet", "news and blogs", MERGED, ("dragnet_data/",),
           "gold text up to the comments marker line (!@#$%^&*() COMMENTS)"),
    Corpus("htmltotext", "non-English (de, hr, zh) and English blogs, forums, news", HTMLTOTEXT, ("benchmarkdata/",),
           "text written by hand"),
    Corpus("readability", "documentation, product and non-English pages", MERGED, ("readability/",),
           "Readability.js's expected output (HTML), its text"),
    Corpus("aeb", "news and blog articles (held out)", AEB, ("html/", "ground-truth.json", "LICENSE"),
           "articleBody text", held_out=True),
)
BY_NAME = {c.name: c for c in CORPORA}
HELD_OUT = tuple(c.name for c in CORPORA if c.held_out)
TUNABLE = tuple(c.name for c in CORPORA if not c.held_out)


class CorporaUnavailable(RuntimeError):
    """A corpus is not in the cache (or a file there is not the pinned one)."""


def cache_dir() -> Path:
    """``$CCRAWL_CORPORA_DIR`` or ``~/.cache/ccrawl/corpora``."""
    env = os.environ.get("CCRAWL_CORPORA_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ccrawl" / "corpora"


def manifest() -> dict[str, dict[str, str]]:
    """``{corpus: {path in its repository: sha256}}`` as pinned in ``corpora.sha256``."""
    out: dict[str, dict[str, str]] = {}
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, rest = line.partition("  ")
        corpus, _, path = rest.partition("/")
        out.setdefault(corpus, {})[path] = digest
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------
# Fetching


def _git_dir(path: Path) -> Path | None:
    for cand in (path / "repo", path / ".git", path):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def _from_git(git_dir: Path, commit: str, paths: list[str]) -> Iterable[tuple[str, bytes]]:
    """Blobs ``commit:path`` read with one ``git cat-file --batch``."""
    proc = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for path in paths:
            proc.stdin.write(f"{commit}:{path}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().decode().split()
            if len(header) != 3:  # "<spec> missing"
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield path, data
    finally:
        proc.stdin.close()
        proc.wait()


def _from_checkout(root: Path, paths: list[str]) -> Iterable[tuple[str, bytes]]:
    for path in paths:
        f = root / path
        if f.is_file():
            yield path, f.read_bytes()


def _from_https(repo: Repo, paths: list[str], timeout: float) -> Iterable[tuple[str, bytes]]:
    """The wanted members of the commit's tarball, streamed (never the whole archive in memory)."""
    base = os.environ.get("CCRAWL_CORPORA_TARBALLS", "https://codeload.github.com").rstrip("/")
    url = f"{base}/{repo.name}/tar.gz/{repo.commit}"
    wanted = set(paths)
    with urllib.request.urlopen(url, timeout=timeout) as resp, tarfile.open(fileobj=resp, mode="r|gz") as tar:
        for member in tar:
            rel = member.name.partition("/")[2]
            if rel in wanted and member.isfile():
                f = tar.extractfile(member)
                if f is not None:
                    yield rel, f.read()


def find_snapshot(repo: Repo, snapshots: dict[str, Path]) -> Path | None:
    """The local snapshot of ``repo``: given by name, else under ``$CCRAWL_CORPORA_SNAPSHOTS``."""
    if repo.name in snapshots:
        return snapshots[repo.name]
    base = os.environ.get("CCRAWL_CORPORA_SNAPSHOTS")
    if base:
        cand = Path(base) / repo.snapshot_dirname
        if cand.exists():
            return cand
    return None


def is_complete(corpus: Corpus, root: Path, pins: dict[str, str]) -> bool:
    """The corpus's folder was fetched and verified against these very pins."""
    done = root / corpus.name / ".complete"
    return done.is_file() and done.read_text().strip() == _pins_digest(pins)


def _pins_digest(pins: dict[str, str]) -> str:
    return _sha("".join(f"{d}  {p}\n" for p, d in sorted(pins.items())).encode())


def fetch_corpus(
    corpus: Corpus,
    root: Path | None = None,
    *,
    snapshots: dict[str, Path] | None = None,
    timeout: float = 30.0,
    https: bool = True,
) -> str:
    """Copy a corpus's pinned files into ``root/<name>/``, each checked against its sha256; idempotent.

    Returns how it was satisfied (``cached``, ``snapshot <path>``, ``https``); raises
    CorporaUnavailable saying why when no source gives every pinned file with its pinned hash.
    ``https=False`` tries the cache and a snapshot only (``fetch_corpora`` then reads each
    repository's tarball once for all the corpora it holds).
    """
    root = root or cache_dir()
    pins = manifest().get(corpus.name)
    if not pins:
        raise CorporaUnavailable(f"{corpus.name}: no files pinned in {MANIFEST.name}")
    if is_complete(corpus, root, pins):
        return "cached"
    paths = sorted(pins)
    snap = find_snapshot(corpus.repo, snapshots or {})
    reasons = []
    sources: list[tuple[str, Callable[[], Iterable[tuple[str, bytes]]]]] = []
    if snap is not None:
        git_dir = _git_dir(snap)
        if git_dir is not None:
            sources.append((f"snapshot {git_dir}", lambda: _from_git(git_dir, corpus.repo.commit, paths)))
        else:
            sources.append((f"snapshot {snap}", lambda: _from_checkout(snap, paths)))
    else:
        reasons.append(f"no local snapshot of {corpus.repo.name} (--snapshot or $CCRAWL_CORPORA_SNAPSHOTS)")
    if https:
        sources.append(("https", lambda: _from_https(corpus.repo, paths, timeout)))
    for label, read in sources:
        try:
            _store({corpus.name: pins}, root, read())
        except (OSError, tarfile.TarError) as exc:
            reasons.append(f"{label}: {exc}")
            continue
        if _complete(corpus, root, pins, label, reasons):
            return label
    raise CorporaUnavailable(f"{corpus.name}: " + "; ".join(reasons))


def _store(pins: dict[str, dict[str, str]], root: Path, items: Iterable[tuple[str, bytes]]) -> None:
    """Write each ``(path, data)`` into every corpus that pins that path, refusing a wrong hash."""
    for path, data in items:
        digest = _sha(data)
        for name, files in pins.items():
            if path not in files:
                continue
            if digest != files[path]:
                raise CorporaUnavailable(f"{name}: {path} has sha256 {digest}, pinned {files[path]}")
            out = root / name / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)


def _complete(corpus: Corpus, root: Path, pins: dict[str, str], label: str, reasons: list[str]) -> bool:
    """Mark the corpus complete when every pinned file is there with its hash; else say what is missing."""
    base = root / corpus.name
    missing = [p for p, d in pins.items() if not (base / p).is_file() or _sha((base / p).read_bytes()) != d]
    if missing:
        reasons.append(f"{label}: {len(missing)} of {len(pins)} pinned files missing at {corpus.repo.commit[:12]}")
        return False
    (base / ".complete").write_text(_pins_digest(pins) + "\n")
    return True


def fetch_corpora(
    corpora: Iterable[Corpus],
    root: Path | None = None,
    *,
    snapshots: dict[str, Path] | None = None,
    timeout: float = 30.0,
) -> dict[str, str | CorporaUnavailable]:
    """``fetch_corpus`` for several corpora, reading a repository's tarball at most once for all of them.

    Returns, per corpus, how it was satisfied or the CorporaUnavailable saying why not.
    """
    root = root or cache_dir()
    out: dict[str, str | CorporaUnavailable] = {}
    pending: dict[Repo, list[Corpus]] = {}
    for c in corpora:
        try:
            out[c.name] = fetch_corpus(c, root, snapshots=snapshots, timeout=timeout, https=False)
        except CorporaUnavailable as exc:
            out[c.name] = exc
            pending.setdefault(c.repo, []).append(c)
    pins = manifest()
    for repo, group in pending.items():
        wanted = {c.name: pins.get(c.name, {}) for c in group}
        paths = sorted({p for files in wanted.values() for p in files})
        try:
            _store(wanted, root, _from_https(repo, paths, timeout))
        except (OSError, tarfile.TarError, CorporaUnavailable) as exc:
            for c in group:
                out[c.name] = CorporaUnavailable(f"{out[c.name]}; https: {exc}")
            continue
        for c in group:
            reasons: list[str] = []
            if _complete(c, root, wanted[c.name], "https", reasons):
                out[c.name] = "https"
            else:
                out[c.name] = CorporaUnavailable(f"{out[c.name]}; {reasons[0]}")
    return out


# ---------------------------------------------------------------------------------------------
# Loading: pages and their gold text


@dataclass(frozen=True, slots=True)
class Page:
    """One labelled page: its corpus, an id, the URL handed to the extractor, its HTML and gold text."""

    corpus: str
    id: str
    url: str
    html: bytes
    gold: str


_BLOCK = re.compile(
    r"(<(?:/?)(?:p|div|br|li|ul|ol|dl|dt|dd|h[1-6]|tr|td|th|table|blockquote|pre|section|article|header|footer"
    r"|figure|figcaption|hr)\b)",
    re.IGNORECASE,
)
_COMMENTS = re.compile(r"^[!@#$%^&*() \t]*COMMENTS[ \t]*$", re.MULTILINE)
_MARK = re.compile(r"<\s*/?\s*[phl]\s*>", re.IGNORECASE)


def cleaneval_text(raw: str) -> tuple[str, str]:
    """CleanEval gold: ``(url, text)`` without the ``URL:`` line and the ``<p>``/``<h>``/``<l>`` marks."""
    url = ""
    lines = raw.lstrip("\ufeff").split("\n")
    for i, line in enumerate(lines[:3]):
        if line.strip().startswith("URL:"):
            url = line.strip()[4:].strip()
            lines = lines[i + 1 :]
            break
    return url, htmllib.unescape(_MARK.sub("\n", "\n".join(lines)))


def html_text(markup: bytes | str, classes: tuple[str, ...] | None = None) -> str:
    """The text of ``markup``; with ``classes``, only of the outermost elements carrying one of them."""
    from selectolax.lexbor import LexborHTMLParser

    if isinstance(markup, bytes):
        markup = _decode(markup)
    # A line break before every block tag: text nodes are then joined as they are (a drop cap
    # "W" + "hale" stays one word) while blocks never run into each other.
    tree = LexborHTMLParser(_BLOCK.sub(r"\n\1", markup))
    for node in tree.css("script, style, noscript"):
        node.decompose()
    if classes is None:
        root = tree.body or tree.root
        return root.text(separator="") if root is not None else ""
    selector = ", ".join(f".{c}" for c in classes)
    parts = []
    for node in tree.css(selector):
        parent, nested = node.parent, False
        while parent is not None:
            if set((parent.attributes.get("class") or "").split()) & set(classes):
                nested = True
                break
            parent = parent.parent
        if not nested:
            parts.append(node.text(separator=""))
    return "\n".join(parts)


def _decode(data: bytes) -> str:
    from ccrawl.extract.decode import decode_body

    return decode_body(data).text


def _invalid(corpus: str, page_id: str) -> str:
    return f"https://example.invalid/{corpus}/{page_id}"


def _pairs(base: Path, html_dir: str, gold_dir: str, gold_ext: str) -> Iterable[tuple[str, Path, Path]]:
    for html in sorted((base / html_dir).glob("*.html")):
        gold = base / gold_dir / f"{html.stem}{gold_ext}"
        if gold.is_file():
            yield html.stem, html, gold


MIN_GOLD_TOKENS = 10


def _load(corpus: Corpus, base: Path) -> list[Page]:
    """Every pair, less those whose gold text has under ``MIN_GOLD_TOKENS`` tokens (nothing to score)."""
    from ccrawl.testing.extracteval.articles import tokens

    return [p for p in _load_all(corpus, base) if sum(tokens(p.gold).values()) >= MIN_GOLD_TOKENS]


def _load_all(corpus: Corpus, base: Path) -> list[Page]:
    name = corpus.name
    out: list[Page] = []
    if name in ("cleaneval", "cleanportaleval", "l3s-gn1", "dragnet", "readability"):
        folder = corpus.prefixes[0].rstrip("/")
        for stem, html, gold in _pairs(base / folder, "input", "GoldStandard", ".txt"):
            raw = gold.read_bytes()
            url = ""
            if name in ("cleaneval", "cleanportaleval"):
                url, text = cleaneval_text(_decode(raw))
            elif name == "l3s-gn1":
                text = html_text(_decode(raw), ("x-nc-sel1", "x-nc-sel2"))
            elif name == "readability":
                text = html_text(raw)
            else:  # dragnet: the content, then (on 416 pages) a marker line and the comments
                text = _COMMENTS.split(_decode(raw), 1)[0]
            body = html.read_bytes()
            if name == "readability" and (len(body) < 10_000 or len(_words(text)) < 50):
                continue  # a unit-test fixture, not a page
            out.append(Page(name, stem, url if url.startswith(("http://", "https://")) else _invalid(name, stem),
                            body, text))
    elif name == "htmltotext":
        for lang_dir in sorted((base / "benchmarkdata").iterdir()):
            for stem, html, gold in _pairs(lang_dir, "html", "text", ".txt"):
                pid = f"{lang_dir.name}/{stem}"
                out.append(Page(name, pid, _invalid(name, pid), html.read_bytes(),
                                gold.read_text(encoding="utf-8", errors="replace")))
    elif name == "aeb":
        truth = json.loads((base / "ground-truth.json").read_text(encoding="utf-8"))
        for key in sorted(truth):
            f = base / "html" / f"{key}.html.gz"
            if not f.is_file():
                continue
            url = truth[key].get("url") or _invalid(name, key)
            out.append(Page(name, key, url, gzip.decompress(f.read_bytes()), truth[key].get("articleBody") or ""))
    return out


def _words(text: str) -> list[str]:
    return text.split()


def load(name: str, root: Path | None = None, *, verify: bool = True) -> list[Page]:
    """The labelled pages of corpus ``name`` from the cache, in id order.

    With ``verify`` (default) every pinned file is re-hashed first (about a second for all of
    them): a page is never scored from a file that is not the pinned one.
    """
    corpus = BY_NAME[name]
    root = root or cache_dir()
    pins = manifest().get(name, {})
    base = root / name
    if not is_complete(corpus, root, pins):
        raise CorporaUnavailable(f"{name} is not fetched into {root}: run python scripts/fetch_corpora.py")
    if verify:
        for path, digest in pins.items():
            f = base / path
            if not f.is_file() or _sha(f.read_bytes()) != digest:
                raise CorporaUnavailable(f"{f} is missing or not the pinned file: fetch again")
    return _load(corpus, base)


def labelled_pages(names: Iterable[str] = TUNABLE) -> list[tuple[str, str, str, bytes, str]]:
    """(corpus, page id, URL, HTML, gold text) of every page of the corpora ``names`` that are fetched; a corpus
    that is not is named on stderr and left out (what the benches score)."""
    out: list[tuple[str, str, str, bytes, str]] = []
    for name in names:
        try:
            out += [(name, p.id, p.url, p.html, p.gold) for p in load(name)]
        except CorporaUnavailable as exc:
            print(f"{name}: {exc}: skipped", file=sys.stderr)
    return out


def corpus_digest(pages: list[Page]) -> str:
    """sha256 over every page's id, HTML and gold text: what a gate's floors were measured on."""
    h = hashlib.sha256()
    for p in pages:
        for part in (f"{p.corpus}/{p.id}".encode(), p.html, p.gold.encode()):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


def pin_from_snapshot(corpus: Corpus, snapshot: Path) -> dict[str, str]:
    """``{path: sha256}`` of the files a corpus takes from a snapshot at its pinned commit (for the manifest)."""
    git_dir = _git_dir(snapshot)
    if git_dir is None:
        raise CorporaUnavailable(f"{snapshot} is not a git directory")
    listing = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", corpus.repo.commit],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    paths = [p for p in listing if p.startswith(corpus.prefixes) and _wanted(corpus, p)]
    if corpus.name != "aeb":  # keep pairs only: an HTML page with its gold text
        stems: dict[str, int] = {}
        for p in paths:
            stems[_pair_key(p)] = stems.get(_pair_key(p), 0) + 1
        paths = [p for p in paths if stems[_pair_key(p)] == 2]
    return {path: _sha(data) for path, data in _from_git(git_dir, corpus.repo.commit, paths)}


def _pair_key(path: str) -> str:
    """``dir/X`` for ``dir/input/X.html`` and ``dir/GoldStandard/X.txt`` (``html``/``text`` likewise)."""
    head, _, leaf = path.rpartition("/")
    return f"{head.rpartition('/')[0]}/{leaf.rpartition('.')[0]}"


def _wanted(corpus: Corpus, path: str) -> bool:
    leaf = path.rsplit("/", 1)[-1]
    if leaf.startswith(".") or leaf == "README.md":
        return False
    return corpus.name != "htmltotext" or path.endswith((".html", ".txt"))


__all__ = [
    "BY_NAME",
    "CORPORA",
    "HELD_OUT",
    "TUNABLE",
    "CorporaUnavailable",
    "Corpus",
    "Page",
    "Repo",
    "cache_dir",
    "corpus_digest",
    "fetch_corpora",
    "fetch_corpus",
    "labelled_pages",
    "load",
    "manifest",
    "pin_from_snapshot",
]
