"""``ccrawl recrawl``: the group holding ``run`` (the engine) and ``publish`` (the fleet publisher)."""

from __future__ import annotations

import click

from ccrawl.cli.main import LazyGroup

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "ccrawl.cli.recrawl_run:run",
        "Walk a published dataset and fetch every URL in it, resumable from a checkpoint",
    ),
    "publish": (
        "ccrawl.cli.publish:publish",
        "Commit closed capture shards to a dataset repo as they land, with the ledger and card",
    ),
    "fleet": (
        "ccrawl.cli.fleet:fleet",
        "Run and publish every shard of a recrawl as tasks: here, or on a Ray cluster",
    ),
}


@click.group("recrawl", cls=LazyGroup, lazy=SUBCOMMANDS,
             help="Recrawl a published dataset, streamed out of Parquet rather than loaded into a frontier.")
def recrawl() -> None:
    pass
