"""``host cdx`` and ``sched diff``: GROUP BYs over the columnar index, on either engine.

The ``host`` and ``sched`` groups belong to other modules; these commands are attached to them
with ``host.add_command(cdx)`` and ``sched.add_command(diff)``. :data:`host` and :data:`sched`
here are stand-in groups holding only these commands, for when those modules are absent.
"""

from __future__ import annotations

from typing import Any

import click

from ccrawl.cli.columnar import ENGINE_HELP, emit_with_explain
from ccrawl.cli.common import Run, command, op_option


@command("cdx", help="Aggregate CDX statistics per host from the columnar index (a GROUP BY url_host_name).")
@click.option("--filter", "host_filter", default=None, help="Restrict to one host (url_host_name)")
@op_option("host.cdx", "engine", help=ENGINE_HELP)
@op_option("host.cdx", "local", type=click.Path(file_okay=False), help="Read a local copy of the bucket")
@click.option("--explain", "explain_", is_flag=True, help="On stderr: bytes read vs the index total")
@op_option("host.cdx", "graph", metavar="RELEASE",
           help="Aggregate over the crawls this web-graph release was built from, e.g. cc-main-2026-mar-apr-may "
                   "(latest: the newest release); instead of -c")
def cdx(run: Run, host_filter: str | None, engine: str, local: str | None, explain_: bool, graph: str | None) -> None:
    from ccrawl import ops
    from ccrawl.cli.columnar import print_sql
    from ccrawl.commoncrawl.columnar.query import Explain, choose_engine

    if choose_engine(engine) == "print":
        params = {"host": [host_filter] if host_filter else [], "local": local}
        if graph:  # the release's crawls, named in the SQL as explicit IDs
            from ccrawl.commoncrawl.columnar import sql
            from ccrawl.ops.columnar import filters_from, graph_crawls

            crawls = graph_crawls(graph, run.settings.crawl or "latest", run.context(run.info)).split(",")
            text = sql.build("hostcdx", filters_from(params).with_crawls(crawls), limit=run.output.limit or None)
            click.echo(sql.cluster_preamble() + text + ";")
            return
        print_sql(run, "hostcdx", params)
        return
    op = ops.get("host.cdx")
    explain = Explain()
    records = op(filter=host_filter, crawl=run.settings.crawl or "latest", engine=engine,
                 limit=run.output.limit or None, jobs=int(run.settings.workers or 4), local=local, graph=graph,
                 explain=explain, ctx=run.context(run.info))
    emit_with_explain(run, records, op.columns, explain, explain_, single=bool(host_filter))


@command("diff", help="Compare two crawls: per-host content change rates (content_digest joined on URL).")
@op_option("sched.diff", "crawl_a", help="Older crawl ID")
@op_option("sched.diff", "crawl_b", help="Newer crawl ID")
@op_option("sched.diff", "engine", help=ENGINE_HELP)
@op_option("sched.diff", "local", type=click.Path(file_okay=False), help="Read a local copy of the bucket")
@click.option("--explain", "explain_", is_flag=True, help="On stderr: bytes read vs the index total")
def diff(run: Run, crawl_a: str, crawl_b: str, engine: str, local: str | None, explain_: bool) -> None:
    from ccrawl import ops
    from ccrawl.commoncrawl.columnar import sql
    from ccrawl.commoncrawl.columnar.filters import Filters
    from ccrawl.commoncrawl.columnar.query import Explain, choose_engine

    if choose_engine(engine) == "print":
        text = sql.build("diff", Filters(), limit=run.output.limit or None, crawl_a=crawl_a, crawl_b=crawl_b)
        click.echo(sql.cluster_preamble() + text + ";")
        return
    op = ops.get("sched.diff")
    explain = Explain()
    records: Any = op(crawl_a=crawl_a, crawl_b=crawl_b, engine=engine, limit=run.output.limit or None,
                      jobs=int(run.settings.workers or 4), local=local, ctx=run.context(), explain=explain)
    emit_with_explain(run, records, op.columns, explain, explain_)


@click.group("host", help="Enumerate and enrich hosts (here: only host cdx).")
def host() -> None:
    pass


@click.group("sched", help="Recrawl scheduling (here: only sched diff).")
def sched() -> None:
    pass


host.add_command(cdx)
sched.add_command(diff)
