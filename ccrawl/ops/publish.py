"""The ``recrawl.publish`` operation: commit sealed capture shards to a dataset repo with ledger and card.

Library side of ``ccrawl recrawl publish``; see :mod:`ccrawl.datasets.publish_recrawl` for what a pass
does. ``hub`` picks where the repo lives: ``""`` for ``$CCRAWL_HUB`` or else the HuggingFace Hub at
``endpoint`` (``HF_ENDPOINT``), ``"hf"`` for the Hub explicitly, or a directory for a local hub.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Limit, Value, WritePath

COLUMNS = ("file", "local", "rows", "bytes", "action", "commit")


@operation("recrawl.publish", summary="Commit closed capture shards to a dataset repo, with the ledger and card",
           columns=COLUMNS, writes=True)
def recrawl_publish(
    dir: WritePath[str],
    repo: Endpoint[str] = "",
    kind: Value[str] = "domains",
    server: Value[str] = "",
    shard: Annotated[int, Cap.VALUE, Bounds(0, 10**6 - 1)] = 0,
    shards: Annotated[int, Cap.VALUE, Bounds(1, 10**6)] = 1,
    state: WritePath[str] = "",
    commit_every: Limit[int] = 4,
    watch: Limit[float] = 0.0,
    keep: Value[bool] = False,
    private: Value[bool] = False,
    no_push: Value[bool] = False,
    staging: WritePath[str] = "",
    max_stall: Limit[float] = 600.0,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    backoff: Limit[float] = 1.0,
    backoff_max: Limit[float] = 60.0,
) -> Iterator[dict[str, Any]]:
    """One record per shard handled: committed, staged (``no_push``) or exists (already published).

    Progress lines and the summary go to the ``ccrawl.publish`` logger.
    """
    from ccrawl.datasets.publish_recrawl import Publisher, PublishOptions
    from ccrawl.hub.factory import open_publish_repo

    opts = PublishOptions(
        Path(dir), repo_id=repo, kind=kind, server=server, shard=shard, shards=shards,
        state=Path(state) if state else None, commit_every=commit_every, watch=watch, keep=keep,
        private=private, no_push=no_push, staging=Path(staging) if staging else None, max_stall=max_stall,
        backoff=backoff, backoff_max=backoff_max,
    )
    target = open_publish_repo(opts.repo_id, hub=hub, endpoint=endpoint, no_push=no_push)
    logger = logging.getLogger("ccrawl.publish")
    publisher = Publisher(opts, target, log=logger.info)
    yield from publisher.run()
    logger.info(summary_line(publisher.stats, no_push=no_push))
    if publisher.stats.deleted:
        logger.info(deleted_line(publisher.stats.deleted))


def deleted_line(deleted: int) -> str:
    """The line saying the default deletion happened, and how to opt out of it."""
    return f"recrawl publish: deleted {deleted} local file(s) after upload; --keep keeps them"


def summary_line(stats: Any, *, no_push: bool) -> str:
    """The one-line summary a publisher prints at the end."""
    verb = "staged" if no_push else "committed"
    return (
        f"recrawl publish: {verb} {stats.staged if no_push else stats.committed} shard(s), {stats.rows:,} rows in "
        f"{stats.commits} commit(s); {stats.existing} already on the hub, {stats.retries} retries, "
        f"{stats.conflicts} conflicts"
    )
