"""Operations over Common Crawl's web graph: rank lookups, host records, degrees, tier assignment.

Every host command yields the same record (:data:`HOST_COLUMNS`); each fills the part it measured
and leaves the rest None, which the renderers omit in JSON and leave blank in csv/table. A count
that was measured and came out zero is 0. ``host cdx`` (and the CDX columns) belong to the
columnar index operations; ``host enrich --cdx`` calls the ``host.cdx`` operation when it exists.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Annotated

from ccrawl.errors import NothingMatched, UsageError
from ccrawl.jsontypes import Record
from ccrawl.net.options import ClientOptions
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, Value
from ccrawl.ops.context import Notice, OpContext, context

if TYPE_CHECKING:
    from ccrawl.commoncrawl.degrees import EdgeCount
    from ccrawl.commoncrawl.webgraph import GraphRelease, RankRow


RANK_COLUMNS = ("host", "host_rev", "tld", "registered_domain", "harmonic_pos", "harmonic_val", "pagerank_pos",
                "pagerank_val")
DEGREE_COLUMNS = ("in_degree", "out_degree")
#: Filled by ``host cdx`` / ``host enrich --cdx`` (the columnar index operations name them).
CDX_COLUMNS = ("cdx_captures", "cdx_urls")
HOST_COLUMNS = RANK_COLUMNS + DEGREE_COLUMNS + CDX_COLUMNS
DOMAIN_COLUMNS = ("domain", "domain_rev", "tld", "harmonic_pos", "harmonic_val", "pagerank_pos", "pagerank_val",
                  "n_hosts", "graph")
VERTEX_COLUMNS = ("id", "host_rev", "host")
SCHED_COLUMNS = ("host", "harmonic_pos", "change_rate", "tier", "interval")


def _say(ctx: OpContext | None) -> Notice:
    return context(ctx).notice


def _client(ctx: OpContext | None) -> ClientOptions:
    return context(ctx).client


def host_record(row: RankRow) -> Record:
    """The host record of a rank-table row: rank signals set, every other count None (unmeasured)."""
    from ccrawl.commoncrawl.webgraph import reverse_host
    from ccrawl.url.domain import registered_domain

    host = reverse_host(row.name_rev)
    record: Record = dict.fromkeys(HOST_COLUMNS)
    record.update(
        host=host,
        host_rev=row.name_rev,
        tld=host.rsplit(".", 1)[-1],
        registered_domain=registered_domain(host),
        harmonic_pos=row.harmonic_pos,
        harmonic_val=row.harmonic_val,
        pagerank_pos=row.pagerank_pos,
        pagerank_val=row.pagerank_val,
    )
    return record


def _tld_ok(name_rev: str, tld: str | None) -> bool:
    return not tld or name_rev.split(".", 1)[0] == tld.lower().lstrip(".")


def host_rank_rows(
    *, graph: str | None = None, table: str | None = None, tld: str | None = None,
    ctx: OpContext | None = None,
) -> Iterator[RankRow]:
    """RankRows of the host table of ``graph`` (newest by default) or of ``table``, streamed."""
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, iterate

    async def rows(cc: CCClient) -> AsyncIterator[RankRow]:
        url = table or cc.data_url(wg.host_table(await wg.release(cc, graph)))
        async for row in wg.rank_rows(cc, url):
            if _tld_ok(row.name_rev, tld):
                yield row

    yield from iterate(rows, _client(ctx), warn=_say(ctx))


def _check_table_graph(graph: str | None, table: str | None) -> None:
    if graph and table:
        raise UsageError("--graph and --table both name the table: give one")


@operation("rank.host", summary="Rank of a host in the web graph's host table", columns=HOST_COLUMNS)
def rank_host(
    host: Value[str], graph: Value[str | None] = None, table: Endpoint[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.webgraph import reverse_host

    _check_table_graph(graph, table)
    want = reverse_host(host.strip().lower().rstrip("."))
    for row in host_rank_rows(graph=graph, table=table, ctx=ctx):
        if row.name_rev == want:
            yield host_record(row)
            return
    raise NothingMatched(f"{host} is not in the host rank table")


@operation("rank.domain", summary="Rank of a registered domain in the web graph's domain table",
           columns=DOMAIN_COLUMNS)
def rank_domain(
    domain: Value[str], graph: Value[str | None] = None, table: Endpoint[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, iterate

    _check_table_graph(graph, table)
    want = wg.reverse_host(domain.strip().lower().rstrip("."))

    async def find(cc: CCClient) -> AsyncIterator[Record]:
        if table:
            rel_id, url = None, table
        else:
            rel, url = await wg.domain_table(cc, graph, warn=_say(ctx))
            rel_id = rel.id
        async for row in wg.rank_rows(cc, url):
            if row.name_rev == want:
                yield {
                    "domain": wg.reverse_host(row.name_rev), "domain_rev": row.name_rev,
                    "tld": row.name_rev.split(".", 1)[0], "harmonic_pos": row.harmonic_pos,
                    "harmonic_val": row.harmonic_val, "pagerank_pos": row.pagerank_pos,
                    "pagerank_val": row.pagerank_val, "n_hosts": row.n_hosts, "graph": rel_id,
                }
                return

    found = False
    for record in iterate(find, _client(ctx), warn=_say(ctx)):
        found = True
        yield record
    if not found:
        raise NothingMatched(f"{domain} is not in the domain rank table")


@operation("rank.all", summary="Every host in a rank table, most central first", columns=HOST_COLUMNS)
def rank_all(
    graph: Value[str | None] = None,
    table: Endpoint[str | None] = None,
    tld: Value[str | None] = None,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    _check_table_graph(graph, table)
    if limit < 0:
        raise UsageError(f"-n {limit}: must be 0 (all) or more")
    rows = host_rank_rows(graph=graph, table=table, tld=tld, ctx=ctx)
    for count, row in enumerate(rows, start=1):
        yield host_record(row)
        if limit and count >= limit:
            return


@operation("host.get", summary="Host record for one host: rank signals, and CDX counts with cdx=True",
           columns=HOST_COLUMNS)
def host_get(
    hostname: Value[str], graph: Value[str | None] = None, cdx: Value[bool] = False,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    records = [dict(r) for r in rank_host(hostname, graph=graph, ctx=ctx)]
    if cdx:
        _add_cdx(records, ctx=ctx)
    yield from records


@operation("host.vertices", summary="Vertex id to host name mapping of a web-graph release",
           columns=VERTEX_COLUMNS)
def host_vertices(
    graph: Value[str | None] = None,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, iterate

    async def rows(cc: CCClient) -> AsyncIterator[Record]:
        rel = await wg.release(cc, graph)
        async for vid, rev in wg.vertices(cc, rel):
            yield {"id": vid, "host_rev": rev, "host": wg.reverse_host(rev)}

    yield from iterate(rows, _client(ctx), warn=_say(ctx))


@operation("host.degrees", summary="In- and out-degree of every host, streamed from the edge files",
           columns=("id", *HOST_COLUMNS))
def host_degrees(
    graph: Value[str | None] = None,
    jobs: Limit[int] = 1,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Two passes: the edges (counted into per-vertex arrays, ``jobs`` files at once), then the
    vertices (joined by id). Memory is 8 bytes a vertex (ccrawl.commoncrawl.degrees)."""
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.errors import InputError
    from ccrawl.net.client import CCClient, iterate

    client, say = _client(ctx), _say(ctx)
    rel, counts = _count_degrees(graph, jobs, client, say)
    din, dout = counts.din, counts.dout

    async def vertex_stream(cc: CCClient) -> AsyncIterator[tuple[int, str]]:
        async for item in wg.vertices(cc, rel):
            yield item

    for vid, rev in iterate(vertex_stream, client, warn=say):
        if not 0 <= vid < len(din):
            raise InputError(f"vertex id {vid} ({rev}) is beyond the {len(din):,} vertices {rel.id} lists")
        host = wg.reverse_host(rev)
        record: Record = {"id": vid, **dict.fromkeys(HOST_COLUMNS)}
        record.update(host=host, host_rev=rev, tld=host.rsplit(".", 1)[-1], registered_domain=_registered(host),
                      in_degree=int(din[vid]), out_degree=int(dout[vid]))
        yield record


def _count_degrees(graph: str | None, jobs: int, client: ClientOptions,
                   notice: Notice) -> tuple[GraphRelease, EdgeCount]:
    """(release, EdgeCount): every vertex's degrees from the release's edge files."""
    from ccrawl.commoncrawl import degrees
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, run

    if jobs < 1:
        raise UsageError(f"-j {jobs}: must be 1 or more")

    async def plan(cc: CCClient) -> tuple[wg.GraphRelease, int, list[str]]:
        rel = await wg.release(cc, graph)
        vertices = await degrees.vertex_count(cc, rel, notice)
        return rel, vertices, [cc.data_url(p) for p in await wg.edge_files(cc, rel)]

    rel, vertices, urls = run(plan, client, warn=notice)
    counts = degrees.count_edges(urls, vertices, jobs=jobs, client_options={**client.as_dict(), "warn": notice})
    notice(counts.summary(f"host degrees {rel.id}"))
    return rel, counts


def _registered(host: str) -> str | None:
    from ccrawl.url.domain import registered_domain

    return registered_domain(host)


def _add_degrees(records: list[Record], graph: str | None, jobs: int, client: ClientOptions, notice: Notice) -> None:
    """Degrees of ``records``' hosts: every vertex counted (8 bytes a vertex), then their ids looked up."""
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, run

    rel, counts = _count_degrees(graph, jobs, client, notice)
    wanted = {str(r["host_rev"]): r for r in records}

    async def find(cc: CCClient) -> dict[str, int]:
        return await wg.vertex_ids(cc, rel, set(wanted))

    for rev, vid in run(find, client, warn=notice).items():
        if 0 <= vid < len(counts.din):
            wanted[rev]["in_degree"] = int(counts.din[vid])
            wanted[rev]["out_degree"] = int(counts.dout[vid])


def _add_cdx(records: list[Record], *, ctx: OpContext | None) -> None:
    from ccrawl import ops

    try:
        cdx = ops.get("host.cdx")
    except KeyError:
        raise UsageError("--cdx needs the host cdx operation (the columnar index), which this build lacks") from None
    for record in records:
        # the query ran: a host with no capture in the index is a measured zero, not a blank
        captures = urls = 0
        for row in cdx(filter=record["host"], ctx=ctx):
            captures += int(row.get("captures") or 0)
            urls += int(row.get("urls") or 0)
        record.update(cdx_captures=captures, cdx_urls=urls)


@operation("host.enrich", summary="Host records: rank, then degrees and CDX counts when asked", columns=HOST_COLUMNS)
def host_enrich(
    graph: Value[str | None] = None,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 20,
    degrees: Value[bool] = False,
    cdx: Value[bool] = False,
    jobs: Limit[int] = 1,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """Phase 1-2 the rank table's top ``limit`` hosts; phase 3 their degrees (``jobs`` edge files at
    once); phase 4 their CDX counts."""
    if limit <= 0:
        raise UsageError("host enrich needs -n > 0: the degree and CDX phases hold the hosts they enrich")
    records = [dict(r) for r in rank_all(graph=graph, limit=limit, ctx=ctx)]
    if degrees:
        _add_degrees(records, graph, jobs, _client(ctx), _say(ctx))
    if cdx:
        _add_cdx(records, ctx=ctx)
    yield from records


@operation("sched.assign", summary="Recrawl tier of each host from harmonic rank and change rate",
           columns=SCHED_COLUMNS)
def sched_assign(
    graph: Value[str | None] = None,
    change_rate: Annotated[float, Cap.VALUE, Bounds(0, 1e9)] = 0.5,
    limit: Annotated[int, Cap.VALUE, Bounds(0, 10**12)] = 0,
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.webgraph import reverse_host
    from ccrawl.crawl.tiers import check_change_rate, tier_of

    check_change_rate(change_rate)
    rows = host_rank_rows(graph=graph, ctx=ctx)
    for count, row in enumerate(rows, start=1):
        tier = tier_of(row.harmonic_pos, change_rate)
        yield {"host": reverse_host(row.name_rev), "harmonic_pos": row.harmonic_pos, "change_rate": change_rate,
               "tier": tier.number, "interval": tier.interval}
        if limit and count >= limit:
            return
