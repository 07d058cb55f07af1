"""The fake Common Crawl's web graph: releases, host and domain rank tables, vertices and edges.

Laid out the way ``data.commoncrawl.org/projects/hyperlinkgraph/`` lays it out, and listed by
``/graphinfo.json`` the way ``index.commoncrawl.org/graphinfo.json`` lists the releases, newest
first::

    <root>/graphinfo.json
    <root>/projects/hyperlinkgraph/<id>/host/<id>-host-ranks.txt.gz
    <root>/projects/hyperlinkgraph/<id>/domain/<id>-domain-ranks.txt.gz   (not for the newest)
    <root>/projects/hyperlinkgraph/<id>/host/<id>-host-vertices.paths.gz  -> host/vertices/part-0000N.txt.gz
    <root>/projects/hyperlinkgraph/<id>/host/<id>-host-edges.paths.gz     -> host/edges/part-0000N.txt.gz

Rank tables are gzip text, tab separated, with Common Crawl's header line and column order:
``#harmonicc_pos #harmonicc_val #pr_pos #pr_val #host_rev`` (the domain table adds ``#n_hosts``),
sorted by harmonic centrality, values written the way Java prints floats (``3.4375268E7``).
Vertices are ``id<TAB>reversed host`` in reversed-host order; edges ``from<TAB>to`` sorted by
``from`` then ``to``. The newest release has its host tables but not yet its domain table, as a
real release does for a while after it is listed. Everything is deterministic.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

#: Releases newest first; the first has no domain table yet.
RELEASES = (
    ("cc-main-2026-mar-apr-may", ("CC-MAIN-2026-13", "CC-MAIN-2026-17", "CC-MAIN-2026-21")),
    ("cc-main-2025-26-dec-jan-feb", ("CC-MAIN-2025-51", "CC-MAIN-2026-04", "CC-MAIN-2026-08")),
    ("cc-main-2025-sep-oct-nov", ("CC-MAIN-2025-38", "CC-MAIN-2025-43", "CC-MAIN-2025-47")),
)

#: Hosts in harmonic order for the newest release (older releases swap a few neighbours).
HOSTS = (
    "www.facebook.com", "www.google.com", "fonts.googleapis.com", "www.youtube.com", "twitter.com",
    "www.instagram.com", "www.linkedin.com", "en.wikipedia.org", "github.com", "www.wikipedia.org",
    "wordpress.org", "www.apple.com", "golang.org", "pkg.go.dev", "www.bbc.co.uk", "news.bbc.co.uk",
    "example.com", "www.example.org", "news.example.net", "shop.example.co.uk", "blog.example.de",
    "vnexpress.net", "www.senate.gov", "www.nasa.gov", "de.wikipedia.org", "fr.wikipedia.org",
    "www.lemonde.fr", "www.spiegel.de", "www.mit.edu", "www.stanford.edu", "docs.python.org",
    "pypi.org", "www.rust-lang.org", "crates.io", "a.example.co.uk", "b.example.co.uk",
    "site0.test", "site1.test", "site2.test", "tiny.example.com",
)

#: Hosts with no edges at all in any release: a measured zero degree.
ISOLATED = ("tiny.example.com",)

#: How the oldest release's domain table differs from its hosts' domains, as the web changes between
#: graphs: a domain not linked yet (dropped) and one that has since lapsed (ranked last), so
#: ``domains diff`` between the two older releases has one domain added and one removed.
DOMAIN_DROPPED = {"cc-main-2025-sep-oct-nov": ("vnexpress.net",)}
DOMAIN_LAPSED = {"cc-main-2025-sep-oct-nov": ("gone-away.com",)}

HOST_HEADER = "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev"
DOMAIN_HEADER = HOST_HEADER + "\t#n_hosts"
ROOT = "projects/hyperlinkgraph"


def reverse_host(host: str) -> str:
    return ".".join(reversed(host.split(".")))


def java_float(value: float) -> str:
    """``value`` as Java's ``Float.toString`` writes it for the magnitudes a rank table holds."""
    if value == 0:
        return "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(float(f"{value:.8g}"))
        return text if "e" not in text else f"{value:.8f}".rstrip("0")
    mantissa, exp = f"{value:.8E}".split("E")
    mantissa = mantissa.rstrip("0")
    if mantissa.endswith("."):
        mantissa += "0"
    return f"{mantissa}E{int(exp)}"


def java_double(value: float) -> str:
    """``value`` as Java's ``Double.toString`` writes it (``2.7961E-6`` below 1e-3)."""
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}E{int(exp)}"
    return text


def _registered(host: str) -> str:
    labels = host.split(".")
    keep = 3 if host.endswith(".co.uk") else 2
    return ".".join(labels[-keep:])


@dataclass(frozen=True, slots=True)
class FakeRelease:
    id: str
    crawls: tuple[str, ...]
    hosts: tuple[str, ...]
    has_domain_table: bool


def releases() -> list[FakeRelease]:
    out = []
    for index, (rid, crawls) in enumerate(RELEASES):
        hosts = list(HOSTS)
        rng = random.Random(index)
        for _ in range(index * 3):  # older graphs rank a few hosts differently
            i = rng.randrange(len(hosts) - 1)
            hosts[i], hosts[i + 1] = hosts[i + 1], hosts[i]
        out.append(FakeRelease(rid, crawls, tuple(hosts), has_domain_table=index > 0))
    return out


def _rank_lines(names: list[str], extra: dict[str, int] | None, seed: int) -> list[str]:
    """Rank rows for ``names`` (already in harmonic order), PageRank order shuffled a little."""
    n = len(names)
    harmonic = [34375268.0 * (0.93**i) for i in range(n)]
    rng = random.Random(seed)
    pr_order = sorted(range(n), key=lambda i: i + rng.uniform(-3.0, 3.0))
    pr_pos = {name_index: pos + 1 for pos, name_index in enumerate(pr_order)}
    lines = []
    for i, name in enumerate(names):
        pr_val = 0.0055143537769673755 * (0.8 ** (pr_pos[i] - 1))
        row = [str(i + 1), java_float(harmonic[i]), str(pr_pos[i]), java_double(pr_val), reverse_host(name)]
        if extra is not None:
            row.append(str(extra[name]))
        lines.append("\t".join(row))
    return lines


def _write_gz(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as fh:
        fh.write("".join(line + "\n" for line in lines).encode("utf-8"))


def _edges(hosts_by_id: list[str], seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    ids = [i for i, h in enumerate(hosts_by_id) if h not in ISOLATED]
    edges = set()
    for src in ids:
        for dst in rng.sample(ids, k=min(len(ids), rng.randint(1, 6))):
            if dst != src:
                edges.add((src, dst))
    return sorted(edges)


def build_webgraph(root: Path) -> None:
    """Write every release under ``root`` (idempotent: same bytes every time)."""
    root = Path(root)
    info = []
    for index, rel in enumerate(releases()):
        base = root / ROOT / rel.id
        host_rows = _rank_lines(list(rel.hosts), None, index)
        _write_gz(base / "host" / f"{rel.id}-host-ranks.txt.gz", [HOST_HEADER, *host_rows])
        if rel.has_domain_table:
            domains: dict[str, int] = {}
            for host in rel.hosts:
                d = _registered(host)
                domains[d] = domains.get(d, 0) + 1
            ordered = [d for d in dict.fromkeys(_registered(h) for h in rel.hosts)
                       if d not in DOMAIN_DROPPED.get(rel.id, ())]
            for lapsed in DOMAIN_LAPSED.get(rel.id, ()):
                ordered.append(lapsed)
                domains[lapsed] = 1
            _write_gz(
                base / "domain" / f"{rel.id}-domain-ranks.txt.gz",
                [DOMAIN_HEADER, *_rank_lines(ordered, domains, index + 100)],
            )
        by_rev = sorted(rel.hosts, key=reverse_host)
        vertex_parts = [by_rev[: len(by_rev) // 2], by_rev[len(by_rev) // 2 :]]
        paths, vid = [], 0
        for part, hosts in enumerate(vertex_parts):
            rel_path = f"{ROOT}/{rel.id}/host/vertices/part-{part:05d}.txt.gz"
            _write_gz(root / rel_path, [f"{vid + i}\t{reverse_host(h)}" for i, h in enumerate(hosts)])
            vid += len(hosts)
            paths.append(rel_path)
        _write_gz(base / "host" / f"{rel.id}-host-vertices.paths.gz", paths)
        edges = _edges(by_rev, index)
        half = len(edges) // 2
        edge_paths = []
        for part, chunk in enumerate((edges[:half], edges[half:])):
            rel_path = f"{ROOT}/{rel.id}/host/edges/part-{part:05d}.txt.gz"
            _write_gz(root / rel_path, [f"{a}\t{b}" for a, b in chunk])
            edge_paths.append(rel_path)
        _write_gz(base / "host" / f"{rel.id}-host-edges.paths.gz", edge_paths)
        info.append({
            "id": rel.id,
            "crawls": list(rel.crawls),
            "index": f"https://data.commoncrawl.org/{ROOT}/{rel.id}/index.html",
            "location": f"s3://commoncrawl/{ROOT}/{rel.id}/",
            "stats": {"host": {"nodes": len(rel.hosts), "arcs": len(edges)}},
        })
    (root / "graphinfo.json").write_text(json.dumps(info, indent=1))


def expected_edges(release_id: str) -> list[tuple[str, str]]:
    """The (from host, to host) edges of a release, for tests to check degrees against."""
    for index, rel in enumerate(releases()):
        if rel.id == release_id:
            by_rev = sorted(rel.hosts, key=reverse_host)
            return [(by_rev[a], by_rev[b]) for a, b in _edges(by_rev, index)]
    raise KeyError(release_id)


async def graphinfo(request: web.Request) -> web.Response:
    root: Path = request.app[GRAPH_ROOT]
    return web.json_response(json.loads((root / "graphinfo.json").read_text()))


GRAPH_ROOT = web.AppKey("graph_root", Path)


def add_webgraph_routes(app: web.Application, root: Path) -> None:
    """Build the graph under ``root`` when it is not there yet and serve ``/graphinfo.json``."""
    if not (Path(root) / "graphinfo.json").exists():
        build_webgraph(Path(root))
    app[GRAPH_ROOT] = Path(root)
    app.router.add_get("/graphinfo.json", graphinfo)
