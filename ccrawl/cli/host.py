"""``ccrawl host top|get|vertices|degrees|enrich``: host records from Common Crawl's web graph.

Every subcommand emits the same host record and fills the part it measured; a count nothing
measured is left out of JSON and blank in csv/table, a measured zero prints 0.

``host cdx`` (a GROUP BY over the columnar index) is built with the columnar commands and attaches
to this group from its own module: ``from ccrawl.cli.host import host; host.add_command(cdx)``,
done by :func:`attach_optional` below when that module is present.
"""

from __future__ import annotations

import importlib

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.cli.rank import graph_option


@click.group("host", help="Enumerate and enrich hosts from the CC web graph.")
def host() -> None:
    pass


@command("top", help="Top hosts by harmonic centrality, streamed from the rank table (-n, default 10).")
@graph_option
def host_top(run: Run, graph: str | None) -> None:
    from ccrawl import ops

    op = ops.get("rank.all")
    run.emit(op(graph=graph, limit=run.output.limit or 10, ctx=run.context()),
             columns=ops.get("host.get").columns)


@command("get", help="Enriched profile for one host.")
@click.argument("hostname")
@op_option("host.get", "cdx", help="Add CDX counts from the columnar index (host cdx)")
@graph_option
def host_get(run: Run, hostname: str, graph: str | None, cdx: bool) -> None:
    from ccrawl import ops

    op = ops.get("host.get")
    run.emit(op(hostname=hostname, graph=graph, cdx=cdx, ctx=run.context()),
             columns=op.columns, single=True)


@command("vertices", help="Stream the vertex ID to hostname mapping.")
@graph_option
def host_vertices(run: Run, graph: str | None) -> None:
    from ccrawl import ops

    op = ops.get("host.vertices")
    run.emit(op(graph=graph, ctx=run.context()), columns=op.columns)


@command("degrees", help="In- and out-degree of every host from the edge files (streamed, 8 bytes a vertex; "
                         "-j N counts N files at once on N threads, default 1).")
@graph_option
def host_degrees(run: Run, graph: str | None) -> None:
    from ccrawl import ops

    op = ops.get("host.degrees")
    run.emit(op(graph=graph, jobs=_jobs(run), ctx=run.context()), columns=op.columns)


def _jobs(run: Run) -> int:
    """Edge files counted at once: ``-j`` when given (at most the machine's cores, a thread each), else 1.

    Not the workers setting's default of 8: two threads adding into one pair of arrays measured
    slower than one on the 2-vCPU bench machine (bench/README.md, "host degrees at scale").
    """
    import os

    if run.settings.sources.get("workers", "default") == "default":
        return 1
    return max(1, min(int(run.settings.workers or 1), os.cpu_count() or 1))


@command("enrich", help="Enrichment pipeline: rank, then --degrees and --cdx (opt-in, large transfers).")
@graph_option
@op_option("host.enrich", "degrees", help="Phase 3: in/out-degree from the edge files")
@op_option("host.enrich", "cdx", help="Phase 4: CDX statistics from the columnar index")
def host_enrich(run: Run, graph: str | None, degrees: bool, cdx: bool) -> None:
    from ccrawl import ops

    op = ops.get("host.enrich")
    run.emit(op(graph=graph, limit=run.output.limit or 20, degrees=degrees, cdx=cdx, jobs=_jobs(run),
                ctx=run.context()), columns=op.columns)


for _cmd in (host_top, host_get, host_vertices, host_degrees, host_enrich):
    host.add_command(_cmd)

#: Subcommands other modules contribute: (module, attribute). Missing modules are skipped.
OPTIONAL = (("ccrawl.cli.columnar_extra", "cdx"),)


def attach_optional(group: click.Group, optional: tuple[tuple[str, str], ...]) -> None:
    for module_name, attr in optional:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        group.add_command(getattr(module, attr))


attach_optional(host, OPTIONAL)
