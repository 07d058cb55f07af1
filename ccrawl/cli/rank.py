"""``ccrawl rank domain|host|top|all``: host and domain ranks from Common Crawl's web graph.

All four read the newest release unless ``--graph`` pins one or ``--table`` names a table URL.
``rank domain`` reads the domain table of the newest release that has one (a release is listed as
soon as its host tables land); the other three read the host table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ccrawl.cli.common import Run, command, op_option

F = TypeVar("F", bound=Callable[..., Any])


def graph_option(func: F) -> F:
    return op_option("rank.all", "graph", metavar="RELEASE",
                     help="Web-graph release ID, e.g. cc-main-2026-mar-apr-may (default: latest)")(func)


def _table_options(func: F) -> F:
    func = op_option("rank.all", "table", metavar="URL", help="Read this rank table URL, skip the lookup")(func)
    return graph_option(func)


@click.group("rank", help="Look up host and domain ranks from the web graph.")
def rank() -> None:
    pass


@command("domain", help="Rank of a registered domain (from the newest release with a domain table).")
@click.argument("domain")
@_table_options
def rank_domain(run: Run, domain: str, graph: str | None, table: str | None) -> None:
    from ccrawl import ops

    op = ops.get("rank.domain")
    run.emit(op(domain=domain, graph=graph, table=table, ctx=run.context()),
             columns=op.columns, single=True)


@command("host", help="Rank of a host.")
@click.argument("host")
@_table_options
def rank_host(run: Run, host: str, graph: str | None, table: str | None) -> None:
    from ccrawl import ops

    op = ops.get("rank.host")
    run.emit(op(host=host, graph=graph, table=table, ctx=run.context()),
             columns=op.columns, single=True)


def _all(run: Run, graph: str | None, table: str | None, tld: str | None, default_limit: int) -> None:
    from ccrawl import ops

    op = ops.get("rank.all")
    limit = run.output.limit or default_limit
    run.emit(op(graph=graph, table=table, tld=tld, limit=limit, ctx=run.context()),
             columns=op.columns)


@command("top", help="Top-ranked hosts (-n, default 10).")
@op_option("rank.all", "tld", help="Only hosts under this top-level domain")
@_table_options
def rank_top(run: Run, graph: str | None, table: str | None, tld: str | None) -> None:
    _all(run, graph, table, tld, 10)


@command("all", help="Stream every host in a rank table, most central first.")
@op_option("rank.all", "tld", help="Only hosts under this top-level domain")
@_table_options
def rank_all(run: Run, graph: str | None, table: str | None, tld: str | None) -> None:
    _all(run, graph, table, tld, 0)


for _cmd in (rank_domain, rank_host, rank_top, rank_all):
    rank.add_command(_cmd)
