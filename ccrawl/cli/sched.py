"""``ccrawl sched assign``: recrawl tiers of hosts by harmonic rank and change rate.

``sched diff`` (two crawls' columnar indexes joined on URL) is built with the columnar commands and
attaches from its own module, ``ccrawl.cli.sched_diff:diff``, when that module is present.
"""

from __future__ import annotations

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.cli.host import attach_optional
from ccrawl.cli.rank import graph_option


@click.group("sched", help="Recrawl scheduling: tier assignment and differential CDX analysis.")
def sched() -> None:
    pass


@command("assign", help="Assign crawl tiers (1-5) to hosts by harmonic rank and change rate.")
@graph_option
@op_option("sched.assign", "change_rate", show_default=True,
           help="Assumed change rate for all hosts (0-1)")
def sched_assign(run: Run, graph: str | None, change_rate: float) -> None:
    from ccrawl import ops

    op = ops.get("sched.assign")
    run.emit(op(graph=graph, change_rate=change_rate, limit=run.output.limit, ctx=run.context()), columns=op.columns)


sched.add_command(sched_assign)
attach_optional(sched, (("ccrawl.cli.columnar_extra", "diff"),))
