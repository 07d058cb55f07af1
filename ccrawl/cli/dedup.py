"""``ccrawl dedup``: report exact and near duplicate documents in a Markdown Parquet dataset (read only)."""

from __future__ import annotations

import json

import click

from ccrawl.cli.common import Run, command, op_option


@command("dedup", help="Report exact and near duplicate documents in a Markdown Parquet dataset.")
@click.argument("paths", nargs=-1, required=True)
@op_option("dedup", "distance",
           help="Hamming distance between fingerprints that still counts as a near duplicate, 0 to 64")
@op_option("dedup", "top", help="How many of the largest clusters to list, 0 for none")
@click.option("--json", "as_json", is_flag=True, help="Emit the report as JSON instead of a table")
def dedup(run: Run, paths: tuple[str, ...], distance: int, top: int, as_json: bool) -> None:
    from ccrawl import ops
    from ccrawl.datasets.dedup import render_text

    (report,) = ops.get("dedup")(paths=paths, distance=distance, top=top)
    if as_json:
        click.echo(json.dumps(report, indent=1))
    else:
        click.echo(render_text(report), nl=False)
