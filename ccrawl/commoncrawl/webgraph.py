"""Common Crawl's web graph: releases, host and domain rank tables, vertices and edges, streamed.

Releases come from ``graphinfo.json`` beside ``collinfo.json`` on the index server, newest first.
A release's files sit under ``projects/hyperlinkgraph/<id>/`` on the data host:

* ``host/<id>-host-ranks.txt.gz`` and ``domain/<id>-domain-ranks.txt.gz``: gzip text, a header
  line, then ``harmonicc_pos harmonicc_val pr_pos pr_val host_rev`` (``n_hosts`` too for domains),
  tab separated, in harmonic-centrality order;
* ``host/<id>-host-vertices.paths.gz``: the vertex files (``id<TAB>host_rev``, reversed-host order);
* ``host/<id>-host-edges.paths.gz``: the edge files (``from<TAB>to``, sorted by ``from``).

Everything here streams: a gzip file is decompressed chunk by chunk and split into lines, so
reading the whole host table (hundreds of millions of rows) holds one chunk at a time. A release is
listed as soon as its host tables land; its domain table comes later, so a domain lookup without
``--graph`` takes the newest release whose domain table answers (:func:`domain_table`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

from ccrawl.errors import CcrawlError, InputError, NothingMatched, TemporaryFailure, UsageError
from ccrawl.net.client import CCClient, HTTPStatusError

GRAPH_ROOT = "projects/hyperlinkgraph"
Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GraphRelease:
    """One web-graph release: its id, the crawls it was built from, and where its files are."""

    id: str
    crawls: tuple[str, ...]
    prefix: str
    """Path of the release's directory on the data host, ``projects/hyperlinkgraph/<id>/``."""
    host_nodes: int | None = None
    """Vertices of the host graph (``stats.host.nodes`` in ``graphinfo.json``), None when not listed."""

    def file(self, name: str) -> str:
        return self.prefix + name


@dataclass(frozen=True, slots=True)
class RankRow:
    """One row of a rank table, values as Common Crawl wrote them (parsed)."""

    harmonic_pos: int
    harmonic_val: float | int
    pagerank_pos: int
    pagerank_val: float
    name_rev: str
    n_hosts: int | None = None


def reverse_host(name: str) -> str:
    """``com.example.www`` <-> ``www.example.com`` (the operation is its own inverse)."""
    return ".".join(reversed(name.split(".")))


def graphinfo_url(collinfo_endpoint: str) -> str:
    """``graphinfo.json`` lives beside ``collinfo.json`` on the index server."""
    base, _, _ = collinfo_endpoint.rpartition("/")
    return f"{base}/graphinfo.json"


def _host_nodes(entry: Mapping[str, object]) -> int | None:
    stats = entry.get("stats")
    host = stats.get("host") if isinstance(stats, dict) else None
    nodes = host.get("nodes") if isinstance(host, dict) else None
    return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes >= 0 else None


def _prefix_of(entry: Mapping[str, object]) -> str:
    location = str(entry.get("location") or "")
    if location.startswith("s3://"):
        path = location[len("s3://") :].partition("/")[2]
        if path:
            return path if path.endswith("/") else path + "/"
    return f"{GRAPH_ROOT}/{entry['id']}/"


async def list_releases(cc: CCClient) -> list[GraphRelease]:
    """Every web-graph release, newest first, from ``graphinfo.json``."""
    url = graphinfo_url(cc.collinfo_endpoint)
    resp = await cc.get(url)
    try:
        entries = json.loads(resp.body)
        releases = [
            GraphRelease(str(e["id"]), tuple(str(c) for c in e.get("crawls") or ()), _prefix_of(e), _host_nodes(e))
            for e in entries
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise CcrawlError(f"{url}: not a web-graph release list ({exc})") from exc
    if not releases:
        raise CcrawlError(f"{url}: the release list is empty")
    return releases


async def release(cc: CCClient, graph: str | None) -> GraphRelease:
    """The release ``graph`` names, or the newest one when ``graph`` is None or ``latest``."""
    releases = await list_releases(cc)
    if not graph or graph == "latest":
        return releases[0]
    for r in releases:
        if r.id == graph:
            return r
    known = ", ".join(r.id for r in releases[:5])
    raise UsageError(f"--graph {graph!r}: no such web-graph release (newest: {known})")


def host_table(rel: GraphRelease) -> str:
    return rel.file(f"host/{rel.id}-host-ranks.txt.gz")


def domain_table_path(rel: GraphRelease) -> str:
    return rel.file(f"domain/{rel.id}-domain-ranks.txt.gz")


async def _exists(cc: CCClient, url: str) -> bool:
    try:
        await cc.get_range(url, 0, 1)
    except HTTPStatusError as exc:
        if exc.status in (403, 404):
            return False
        raise
    return True


async def domain_table(cc: CCClient, graph: str | None, warn: Warn | None = None) -> tuple[GraphRelease, str]:
    """(release, url) of the domain table: of ``graph``, or of the newest release that has one."""
    if graph and graph != "latest":
        rel = await release(cc, graph)
        url = cc.data_url(domain_table_path(rel))
        if not await _exists(cc, url):
            raise NothingMatched(
                f"web-graph release {rel.id} has no domain table yet; leave out --graph for the newest that has one"
            )
        return rel, url
    releases = await list_releases(cc)
    for rel in releases:
        url = cc.data_url(domain_table_path(rel))
        if await _exists(cc, url):
            if rel is not releases[0] and warn is not None:
                warn(f"rank: {releases[0].id} has no domain table yet; using {rel.id}")
            return rel, url
    raise NothingMatched("no web-graph release has a domain table")


async def gz_blocks(
    cc: CCClient, url: str, *, resumes: int = 5, on_bytes: Callable[[int], None] | None = None,
    block_size: int = 1 << 22,
) -> AsyncIterator[bytes]:
    """The decompressed bytes of a (multi-member) gzip file at ``url``, in blocks as they stream.

    ``on_bytes`` is told the size of every compressed chunk as it arrives; a block is at most
    ``block_size`` bytes.

    Empty members are skipped; a file that ends inside a member raises, because a rank table cut
    short would otherwise read as a complete, shorter one. A connection dropped mid-body is picked up
    where it stopped (a ranged request from the bytes already decompressed), up to ``resumes`` times in
    a row without progress; past that the run fails with exit 75, to be run again.
    """
    from ccrawl.net.client import TruncatedBody
    from ccrawl.warc.inflate import ZLIB_API as inflate  # ISA-L's zlib API: about twice zlib's rate
    decomp = inflate.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False
    received = 0
    failures = 0
    while True:
        try:
            async with cc.stream(url, start=received) as stream:
                async for chunk in stream.chunks(min(1 << 20, 2 * block_size)):
                    received += len(chunk)
                    failures = 0
                    if on_bytes is not None:
                        on_bytes(len(chunk))
                    data = chunk
                    while data:
                        try:
                            out = decomp.decompress(data, block_size)
                        except (zlib.error, inflate.error) as exc:
                            raise CcrawlError(f"{url}: not gzip data ({exc})") from exc
                        in_member = True
                        if out:
                            yield out
                        if decomp.eof:
                            data = decomp.unused_data
                            decomp = inflate.decompressobj(16 + zlib.MAX_WBITS)
                            in_member = False
                        elif decomp.unconsumed_tail:
                            data = decomp.unconsumed_tail
                        else:
                            data = b""
            break
        except TruncatedBody as exc:
            failures += 1
            if failures > resumes:
                raise TemporaryFailure(f"{url}: the connection dropped {failures} times at byte {received:,} "
                                       f"({exc}); run again to resume") from exc
    if in_member and not decomp.eof:
        raise CcrawlError(f"{url}: the gzip stream ends mid-member (truncated download)")


async def gz_lines(cc: CCClient, url: str) -> AsyncIterator[str]:
    """The lines of a (multi-member) gzip file at ``url``, decompressed as they stream (see :func:`gz_blocks`)."""
    tail = b""
    async for out in gz_blocks(cc, url):
        tail += out
        *lines, tail = tail.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "replace")
    if tail:
        yield tail.decode("utf-8", "replace")


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def release_sort_key(name: str) -> tuple[int, int, str]:
    """Order web-graph release ids by time: ``cc-main-2025-26-dec-jan-feb`` after ``cc-main-2025-sep-oct-nov``.

    The key is (year, first month, name) for an id of the ``cc-main-YYYY[-YY]-mon-mon-mon`` form and
    (0, 0, name) for anything else (crawl ids such as ``CC-MAIN-2026-25`` already sort by name).
    """
    tokens = name.rsplit("/", 1)[-1].lower().split("-")
    year = next((int(t) for t in tokens if len(t) == 4 and t.isdigit()), 0)
    month = next((_MONTHS.index(t) + 1 for t in tokens if t in _MONTHS), 0)
    if not year or not month:
        return 0, 0, name
    return year, month, name


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def parse_rank_line(line: str) -> RankRow | None:
    """A rank table row, or None for the header, comments and blank lines."""
    if not line or line.startswith("#"):
        return None
    cols = line.rstrip("\r").split("\t")
    if len(cols) < 5:
        raise InputError(f"rank table row has {len(cols)} columns, expected 5 or 6: {line[:80]!r}")
    try:
        return RankRow(
            int(cols[0]), _number(cols[1]), int(cols[2]), float(cols[3]), cols[4],
            int(cols[5]) if len(cols) > 5 and cols[5] else None,
        )
    except ValueError as exc:
        raise InputError(f"rank table row does not parse ({exc}): {line[:80]!r}") from exc


async def rank_rows(cc: CCClient, url: str) -> AsyncIterator[RankRow]:
    async for line in gz_lines(cc, url):
        row = parse_rank_line(line)
        if row is not None:
            yield row


async def paths_listing(cc: CCClient, url: str) -> list[str]:
    return [p.strip() for p in [line async for line in gz_lines(cc, url)] if p.strip()]


async def vertex_files(cc: CCClient, rel: GraphRelease) -> list[str]:
    return await paths_listing(cc, cc.data_url(rel.file(f"host/{rel.id}-host-vertices.paths.gz")))


async def edge_files(cc: CCClient, rel: GraphRelease) -> list[str]:
    return await paths_listing(cc, cc.data_url(rel.file(f"host/{rel.id}-host-edges.paths.gz")))


async def vertices(cc: CCClient, rel: GraphRelease) -> AsyncIterator[tuple[int, str]]:
    """(vertex id, reversed host) over every vertex file, in file order."""
    for path in await vertex_files(cc, rel):
        async for line in gz_lines(cc, cc.data_url(path)):
            if not line:
                continue
            vid, _, rev = line.partition("\t")
            try:
                yield int(vid), rev.strip()
            except ValueError as exc:
                raise InputError(f"{path}: vertex line does not parse: {line[:80]!r}") from exc


async def edges(cc: CCClient, rel: GraphRelease) -> AsyncIterator[tuple[int, int]]:
    for path in await edge_files(cc, rel):
        async for line in gz_lines(cc, cc.data_url(path)):
            if not line:
                continue
            a, _, b = line.partition("\t")
            try:
                yield int(a), int(b)
            except ValueError as exc:
                raise InputError(f"{path}: edge line does not parse: {line[:80]!r}") from exc


async def vertex_ids(cc: CCClient, rel: GraphRelease, revs: set[str]) -> dict[str, int]:
    """The vertex ids of the reversed host names ``revs``, found by a byte search of the vertex files.

    Each inflated block is searched for ``<TAB>name<LF>`` once per name still missing, so a few
    names cost one scan at ``bytes.find``'s speed, not a Python string per vertex; the scan stops
    as soon as every name is found. A name not in the graph is left out of the answer.
    """
    missing = {rev: ("\t" + rev + "\n").encode() for rev in revs}
    found: dict[str, int] = {}
    for path in await vertex_files(cc, rel):
        tail = b""
        async for block in gz_blocks(cc, cc.data_url(path)):
            text = tail + block
            cut = text.rfind(b"\n") + 1
            text, tail = b"\n" + text[:cut], text[cut:]
            for rev, needle in list(missing.items()):
                at = text.find(needle)
                if at < 0:
                    continue
                start = text.rfind(b"\n", 0, at) + 1
                try:
                    found[rev] = int(text[start:at])
                except ValueError as exc:
                    raise InputError(f"{path}: vertex line does not parse: {text[start:at + 80]!r}") from exc
                del missing[rev]
            if not missing:
                return found
        if tail:  # a last line without its newline
            for rev, needle in list(missing.items()):
                if (b"\n" + tail + b"\n").find(needle) >= 0:
                    found[rev] = int(tail.partition(b"\t")[0])
                    del missing[rev]
    return found
