"""``ccrawl recrawl fleet``: parse the flags, call the ``recrawl.fleet`` operation, print a row per shard."""

from __future__ import annotations

import logging
import shlex

import click

from ccrawl.cli.common import Run, command, op_option


@command("fleet", help="Run and publish every shard of a recrawl as tasks: here, or on a Ray cluster.")
@op_option("recrawl.fleet", "source", "--from",
           help="Work list every shard reads: domains, urls, a dataset repo ID or a local directory")
@op_option("recrawl.fleet", "repo", help="Dataset repo the shards' publishers commit to, owner/name")
@op_option("recrawl.fleet", "shards", type=int, help="How many shards split the work list (fixed for a release)")
@op_option("recrawl.fleet", "executor", type=click.Choice(["local", "ray"]), show_default=True,
           help="Where shard tasks run: threads here, or Ray tasks (pip install 'ccrawl[ray]')")
@op_option("recrawl.fleet", "ray_address",
           help="Ray cluster to join [$RAY_ADDRESS, else a local one sized to this machine]")
@op_option("recrawl.fleet", "work", type=click.Path(file_okay=False), show_default=True,
           help="Directory of the shards' captures, checkpoints and logs (shard-<i>of<N>/)")
@op_option("recrawl.fleet", "server", show_default=True, help="Name in every ledger: <server>-shard<i>of<N>")
@op_option("recrawl.fleet", "kind", type=click.Choice(["domains", "urls"]), show_default=True,
           help="Which recrawl this is")
@click.option("--watch", default="30s", show_default=True, help="How often each publisher looks for sealed shards")
@op_option("recrawl.fleet", "commit_every", show_default=True, help="Shards per commit, per publisher")
@op_option("recrawl.fleet", "restarts", show_default=True,
           help="Restarts in place of a process that exits 75, per shard task")
@op_option("recrawl.fleet", "cpus_per_shard", show_default=True,
           help="CPUs a shard task reserves on Ray (its processes keep their own per-core layout)")
@op_option("recrawl.fleet", "task_retries", show_default=True,
           help="Times Ray reruns a shard task whose worker died (the rerun resumes from the checkpoint)")
@click.option("--run-args", default="", help="More flags for every recrawl run, one shell-quoted string")
@click.option("--publish-args", default="", help="More flags for every recrawl publish, one shell-quoted string")
@op_option("recrawl.fleet", "status_addr",
           help="Serve one read-only status page for every shard at host:port (e.g. 127.0.0.1:9100)")
def fleet(run: Run, source: str, repo: str, shards: int, executor: str, ray_address: str, work: str, server: str,
          kind: str, watch: str, commit_every: int, restarts: int, cpus_per_shard: float, task_retries: int,
          run_args: str, publish_args: str, status_addr: str | None) -> None:
    from ccrawl import ops
    from ccrawl.cli.publish import InfoHandler, duration_arg

    op = ops.get("recrawl.fleet")
    records = op(source=source, repo=repo, shards=shards, work=work, server=server, kind=kind,
                 watch=duration_arg("--watch", watch),
                 commit_every=commit_every, restarts=restarts, executor=executor, ray_address=ray_address,
                 cpus_per_shard=cpus_per_shard, task_retries=task_retries, run_args=shlex.split(run_args),
                 publish_args=shlex.split(publish_args), status_addr=status_addr)
    handler = InfoHandler(run.info)
    logger = logging.getLogger("ccrawl.fleet")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        run.emit(records, columns=op.columns)
    finally:
        logger.removeHandler(handler)
