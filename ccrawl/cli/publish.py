"""``ccrawl recrawl publish``: the fleet publisher's command line (parsing and rendering only).

Only the ``publish`` leaf lives here; the ``recrawl`` group is the lead's (``ccrawl/cli/recrawl.py``)
and ``recrawl run`` is the pipeline's. The work is :class:`ccrawl.datasets.publish_recrawl.Publisher`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import click

from ccrawl.cli.common import Run, command, op_option

_DURATION = "a duration such as 30s, 5m or a number of seconds"


def duration_arg(flag: str, value: str) -> float:
    from ccrawl.config import parse_duration
    from ccrawl.errors import UsageError

    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{flag} {value!r}: {exc}; give {_DURATION}") from exc


@command("publish", help="Commit closed capture shards to a dataset repo as they land, with the ledger and card. "
                         "Each local shard is deleted once its commit lands (stderr says how many); --keep keeps them.")
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Capture directory to publish from, the same one recrawl run writes into")
@op_option("recrawl.publish", "repo", help="Dataset repo to publish to, default the open-index repo for --kind")
@op_option("recrawl.publish", "kind", type=click.Choice(["domains", "urls"]),
           help="Which recrawl this is, domains or urls, default domains")
@op_option("recrawl.publish", "server", help="Name of this machine, default the hostname")
@click.option("--shard", default="0",
              help="Which partition of the work list this machine took, 0-based, or auto (from the engine)")
@click.option("--shards", type=int, default=None,
              help="How many machines are splitting the work list, default 1 (or the engine's count)")
@click.option("--state", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The crawl's checkpoint file, read so the card can report progress")
@op_option("recrawl.publish", "commit_every", help="Shards per HuggingFace commit, default 4")
@click.option("--watch", default="0",
              help="Keep watching the directory and publish shards as they close, 0 makes one pass")
@op_option("recrawl.publish", "keep",
           help="Keep the local shards after upload; by default each is deleted once its commit lands")
@op_option("recrawl.publish", "private", help="Create the dataset repo private")
@op_option("recrawl.publish", "no_push", help="Stage and report but skip the upload")
@click.option("--staging", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where --no-push writes the would-be commits, default <dir>/.publish-staging")
@click.option("--max-stall", default="10m",
              help="Exit 75 when no commit lands for this long with shards waiting, default 10m")
@op_option("recrawl.publish", "hub",
           help="A directory to publish to a local hub instead (default $CCRAWL_HUB, else the Hub)")
def publish(run: Run, directory: Path, repo: str, kind: str, server: str, shard: str, shards: int | None,
            state: Path | None, commit_every: int, watch: str, keep: bool, private: bool, no_push: bool,
            staging: Path | None, max_stall: str, hub: str) -> None:
    from ccrawl import ops
    from ccrawl.ops.publish import COLUMNS
    from ccrawl.scale.engine import resolve_shard

    assignment = resolve_shard(shard, shards)
    settings = run.settings
    if not repo:
        repo = str(getattr(settings, f"recrawl_{kind}_repo", "") or "")
    records = ops.get("recrawl.publish")(
        dir=str(directory), repo=repo, kind=kind, server=server, shard=assignment.index, shards=assignment.count,
        state=str(state) if state else "", commit_every=commit_every, watch=duration_arg("--watch", watch), keep=keep,
        private=private, no_push=no_push, staging=str(staging) if staging else "",
        max_stall=duration_arg("--max-stall", max_stall), hub=hub,
        endpoint=str(getattr(settings, "hf_endpoint", "") or ""),
        backoff=float(getattr(settings, "backoff", 1.0) or 1.0),
        backoff_max=float(getattr(settings, "backoff_max", 60.0) or 60.0),
    )
    # the operation reports progress and its summary on the ccrawl.publish logger: to stderr via run.info
    handler = InfoHandler(run.info)
    logger = logging.getLogger("ccrawl.publish")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    propagate, logger.propagate = logger.propagate, False  # printed once, by the handler above
    if assignment.source != "flag":
        from ccrawl.hub.ledger import MachineKey

        ledger = MachineKey(server, assignment.index, assignment.count).ledger_path
        run.info(f"recrawl publish: ledger {ledger} is {assignment.describe()}")
    try:
        run.emit(records, columns=COLUMNS)
        if assignment.source != "flag":
            run.info(f"recrawl publish: {assignment.describe()}")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = propagate


class InfoHandler(logging.Handler):
    """Hands each message of the ``ccrawl.publish`` logger to ``run.info`` (stderr, silenced by -q)."""

    def __init__(self, info: Callable[[str], None]) -> None:
        super().__init__(level=logging.INFO)
        self.info = info

    def emit(self, record: logging.LogRecord) -> None:
        self.info(record.getMessage())
