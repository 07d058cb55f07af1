"""The ``recrawl.fleet`` operation: the N shard runs of a recrawl and their publishers, as tasks of an executor.

``ccrawl recrawl fleet`` calls it; ``serve``/``mcp`` list it (hidden unless ``--allow-writes``: it writes
and commits). The work is :func:`ccrawl.scale.fleet.run_fleet`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, Network, Value, WritePath

COLUMNS = ("shard", "shards", "attempt", "run_restarts", "publish_restarts", "seconds", "dir")


@operation("recrawl.fleet", summary="Run and publish every shard of a recrawl as tasks (local threads or Ray)",
           columns=COLUMNS, writes=True)
def recrawl_fleet(
    source: Endpoint[str],
    repo: Endpoint[str],
    shards: Annotated[int, Cap.VALUE, Bounds(1, 10**6)],
    work: WritePath[str] = "fleet",
    server: Value[str] = "fleet",
    kind: Value[str] = "domains",
    watch: Limit[float] = 30.0,
    commit_every: Limit[int] = 4,
    restarts: Limit[int] = 10,
    executor: Limit[str] = "local",
    ray_address: Endpoint[str] = "",
    cpus_per_shard: Limit[float] = 1.0,
    task_retries: Limit[int] = 3,
    run_args: Injected[Sequence[str]] = (),
    publish_args: Injected[Sequence[str]] = (),
    status_addr: Network[str | None] = None,
) -> Iterator[dict[str, Any]]:
    """One record per shard as it finishes (crawled and published); progress on the ``ccrawl.fleet`` logger."""
    from pathlib import Path

    from ccrawl.scale.fleet import FleetOptions, run_fleet

    if watch <= 0:
        from ccrawl.errors import UsageError

        raise UsageError("--watch must be more than 0: a fleet's publishers keep watching until their crawl is done")
    opts = FleetOptions(shards=shards, source=source, repo=repo, work=Path(work), server=server, kind=kind,
                        watch=watch, commit_every=commit_every, restarts=restarts, executor=executor,
                        ray_address=ray_address, cpus_per_shard=cpus_per_shard, task_retries=task_retries,
                        run_args=tuple(run_args), publish_args=tuple(publish_args), status_addr=status_addr)
    yield from run_fleet(opts, log=logging.getLogger("ccrawl.fleet").info)
