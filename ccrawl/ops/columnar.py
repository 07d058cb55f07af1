"""Columnar-index operations: ``columnar.*``, ``db.load``, ``host.cdx`` and ``sched.diff``.

Every filter operation takes the same keyword parameters (the columnar filter flags, ``crawl``,
``engine``, ``limit``, ``jobs``, ``local`` for a local copy of the bucket, ``ctx``) and
yields the records :mod:`ccrawl.commoncrawl.columnar.query` answers. ``explain``, when given, is an
:class:`~ccrawl.commoncrawl.columnar.query.Explain` filled in as the query runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

from ccrawl.errors import UsageError
from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Injected, Limit, ReadPath, Sql, Value
from ccrawl.ops.context import OpContext, context

if TYPE_CHECKING:
    from pyarrow import RecordBatch

    from ccrawl.commoncrawl.columnar.filters import Filters
    from ccrawl.commoncrawl.columnar.query import Explain, Index

_SUMMARIES = {
    "urls": ("Matching URLs", ("url",)),
    "locations": ("Record locations, ready for fetch", ("url", "warc_filename", "warc_record_offset",
                                                        "warc_record_length")),
    "count": ("Count of matching captures", ("count",)),
    "langs": ("Breakdown by content language", ("lang", "count")),
    "mimes": ("Breakdown by MIME type", ("mime", "count")),
}


def filters_from(params: Mapping[str, object]) -> Filters:
    """:class:`~ccrawl.commoncrawl.columnar.filters.Filters` from operation keywords."""
    from ccrawl.commoncrawl.columnar import filters

    def many(name: str) -> tuple[str, ...]:
        v = params.get(name)
        if v is None:
            return ()
        if isinstance(v, str | int):
            return (str(v),)
        if isinstance(v, Iterable):
            return tuple(str(x) for x in v)
        raise UsageError(f"--{name.replace('_', '-')}: give a value or a list of values, not {type(v).__name__}")

    def one(name: str) -> str | None:
        v = params.get(name)
        return None if v is None else str(v)

    return filters.build(
        domain=many("domain"), host=many("host"), tld=many("tld"), mime=many("mime"), status=many("status"),
        lang=many("lang"), path_prefix=one("path_prefix"), subset=many("subset"),
        not_tld=many("not_tld"), not_mime=many("not_mime"), not_lang=many("not_lang"),
        not_status=many("not_status"), hosts_file=one("hosts_file"), domains_file=one("domains_file"),
    )


@contextmanager
def open_index(
    *, crawl: str, local: str | None, ctx: OpContext | None, jobs: int, crawls: Sequence[str] = ()
) -> Iterator[Index]:
    """The index of ``crawl`` (over HTTP, or from the local copy ``local``), closed afterwards."""
    from ccrawl.commoncrawl.columnar import parts

    if local:
        index = parts.open_local(local, crawls=crawls)
    else:
        index = parts.open_http(context(ctx).client.as_dict(), ",".join(crawls) if crawls else crawl,
                                connections=max(4, 2 * jobs))
    try:
        yield index
    finally:
        index.source.close()


@contextmanager
def open_filtered(
    f: Filters, *, crawl: str, local: str | None, ctx: OpContext | None, jobs: int
) -> Iterator[tuple[Index, Filters]]:
    """The index of ``crawl`` and the filters ``f`` narrowed to the crawls selected in it."""
    with open_index(crawl=crawl, local=local, ctx=ctx, jobs=jobs) as index:
        yield index, f.with_crawls(select_crawls(index, crawl, local))


def select_crawls(index: Index, crawl: str, local: str | None) -> list[str]:
    """With a local copy, ``crawl`` is matched against the crawls present (``latest`` = the newest)."""
    if not local:
        return list(index.crawls)
    have = sorted(index.crawls)
    if crawl in ("", "latest"):
        return have[-1:]
    if crawl == "all":
        return have
    wanted = [c.strip() for c in crawl.split(",") if c.strip()]
    from ccrawl.errors import UsageError

    unknown = [c for c in wanted if c not in have]
    if unknown:
        raise UsageError(f"-c {','.join(unknown)}: not in the local copy (it has {', '.join(have)})")
    return wanted


def _make(kind: str) -> Callable[..., Iterator[Record | RecordBatch]]:
    def op(
        domain: Value[list[str] | None] = None,
        host: Value[list[str] | None] = None,
        tld: Value[list[str] | None] = None,
        mime: Value[list[str] | None] = None,
        status: Value[list[str] | None] = None,
        lang: Value[list[str] | None] = None,
        path_prefix: Value[str | None] = None,
        subset: Value[list[str] | None] = None,
        not_tld: Value[list[str] | None] = None,
        not_mime: Value[list[str] | None] = None,
        not_lang: Value[list[str] | None] = None,
        not_status: Value[list[str] | None] = None,
        hosts_file: ReadPath[str | None] = None,
        domains_file: ReadPath[str | None] = None,
        crawl: Value[str] = "latest",
        engine: Value[str] = "auto",
        limit: Annotated[int | None, Cap.VALUE, Bounds(0, 10**12)] = None,
        jobs: Limit[int] = 4,
        local: ReadPath[str | None] = None,
        ctx: Injected[OpContext | None] = None,
        explain: Injected[Explain | None] = None,
        arrow: Injected[bool] = False,
    ) -> Iterator[Record | RecordBatch]:
        """With ``arrow`` (the CLI's text renderer sets it), large answers come as Arrow record batches."""
        from ccrawl.commoncrawl.columnar import query

        params = locals()
        f = filters_from(params)
        query.choose_engine(engine)
        with open_filtered(f, crawl=crawl, local=local, ctx=ctx, jobs=jobs) as (index, f):
            yield from query.run_arrow(kind, f, index, engine=engine, limit=limit or None, jobs=jobs, explain=explain,
                                       arrow=arrow)

    op.__name__ = f"columnar_{kind}"
    return op


for _kind, (_summary, _columns) in _SUMMARIES.items():
    operation(f"columnar.{_kind}", summary=_summary, columns=_columns)(_make(_kind))


@operation("columnar.query", summary="Run raw SQL over the columnar index (ccindex is the source)")
def columnar_query(
    sql: Sql[str],
    crawl: Value[str] = "latest",
    engine: Value[str] = "auto",
    jobs: Limit[int] = 4,
    local: ReadPath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
    trusted: Injected[bool] = False,
) -> Iterator[Record]:
    """The rows of ``sql`` over the view ``ccindex``, streamed.

    Unless ``trusted`` (set by the CLI for the user at their shell, never by a client of serve or
    mcp), the connection is sandboxed (:func:`ccrawl.store.duck.sandbox`): it reads the selected
    index parts and nothing else, writes nothing, and keeps to a memory and thread budget.
    """
    from ccrawl.commoncrawl.columnar import duck, query
    from ccrawl.store.duck import THREADS, sandbox, stream

    query.choose_engine(engine, raw_sql=True)
    if engine == "print":
        yield {"sql": sql}
        return
    with open_index(crawl=crawl, local=local, ctx=ctx, jobs=jobs) as index:
        keep = set(select_crawls(index, crawl, local))
        chosen = [p for p in index.parts if p.crawl in keep]
        con = duck.connect_index(index.source, chosen, threads=jobs)
        try:
            if not trusted:
                sandbox(con, allowed_paths=duck.part_urls(chosen), threads=min(jobs, THREADS))
            for row in stream(con, sql):  # a bad query is said in one line
                yield query.clean_record(row)
        finally:
            con.close()


@operation("columnar.schema", summary="The columns of the index", columns=("name", "type", "nullable", "partition"))
def columnar_schema() -> Iterator[Record]:
    from ccrawl.commoncrawl.columnar.schema import COLUMNS, PARTITIONS

    for name, typ, nullable in COLUMNS:
        yield {"name": name, "type": typ, "nullable": nullable, "partition": False}
    for name in PARTITIONS:
        yield {"name": name, "type": "string", "nullable": False, "partition": True}


@operation("host.cdx", summary="Aggregate CDX statistics per host from the columnar index",
           columns=("host", "captures", "urls", "status_2xx", "status_3xx", "status_4xx", "status_5xx"))
def host_cdx(
    filter: Value[str | None] = None,
    crawl: Value[str] = "latest",
    engine: Value[str] = "auto",
    limit: Annotated[int | None, Cap.VALUE, Bounds(0, 10**12)] = None,
    jobs: Limit[int] = 4,
    local: ReadPath[str | None] = None,
    graph: Value[str | None] = None,
    ctx: Injected[OpContext | None] = None,
    explain: Injected[Explain | None] = None,
) -> Iterator[Record]:
    """Per-host CDX statistics of ``crawl``; with ``graph``, of the crawls that web-graph release was built from.

    ``graph`` (a release id, or ``latest``) replaces ``crawl``: the counts then cover the same captures
    as the release's ranks, which is how the ``host`` commands' ``--graph`` reads here.
    """
    from ccrawl.commoncrawl.columnar import filters, query

    if graph:
        crawl = graph_crawls(graph, crawl, ctx)
    f = filters.build(host=[filter] if filter else ())
    query.choose_engine(engine)
    with open_filtered(f, crawl=crawl, local=local, ctx=ctx, jobs=jobs) as (index, f):
        yield from query.run("hostcdx", f, index, engine=engine, limit=limit or None, jobs=jobs, explain=explain)


def graph_crawls(graph: str, crawl: str, ctx: OpContext | None) -> str:
    """The crawls (a comma list) web-graph release ``graph`` was built from, per graphinfo.json."""
    from ccrawl.commoncrawl import webgraph
    from ccrawl.errors import NothingMatched, UsageError
    from ccrawl.net.client import run

    if crawl not in ("", "latest"):
        raise UsageError(f"--graph {graph} and -c {crawl} both pick the crawls: give one")
    c = context(ctx)
    rel = run(lambda cc: webgraph.release(cc, graph), c.client)
    if not rel.crawls:
        raise NothingMatched(f"--graph {rel.id}: graphinfo.json lists no crawls for it")
    c.notice(f"host cdx: --graph {rel.id}: crawls {', '.join(rel.crawls)}")
    return ",".join(rel.crawls)


@operation("sched.diff", summary="Per-host content change rates between two crawls",
           columns=("host", "urls", "changed", "change_rate"))
def sched_diff(
    crawl_a: Value[str],
    crawl_b: Value[str],
    engine: Value[str] = "auto",
    limit: Annotated[int | None, Cap.VALUE, Bounds(0, 10**12)] = None,
    jobs: Limit[int] = 4,
    local: ReadPath[str | None] = None,
    ctx: Injected[OpContext | None] = None,
    explain: Injected[Explain | None] = None,
) -> Iterator[Record]:
    from ccrawl.commoncrawl.columnar import filters, query
    from ccrawl.errors import UsageError

    if not crawl_a or not crawl_b:
        raise UsageError("sched diff needs --crawl-a and --crawl-b")
    if crawl_a == crawl_b:
        raise UsageError(f"--crawl-a and --crawl-b are both {crawl_a}: give two different crawls")
    query.choose_engine(engine)
    with open_index(crawl="", local=local, ctx=ctx, jobs=jobs,
                    crawls=(crawl_a, crawl_b)) as index:
        missing = [c for c in (crawl_a, crawl_b) if c not in index.crawls]
        if missing:
            raise UsageError(f"no columnar index for {', '.join(missing)}")
        yield from query.run("diff", filters.build(), index, engine=engine, limit=limit or None, jobs=jobs,
                             crawl_a=crawl_a, crawl_b=crawl_b, explain=explain)
