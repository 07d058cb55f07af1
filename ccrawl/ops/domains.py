"""The web-graph domain mirror: ``domains publish|recount|diff``.

Same conventions as :mod:`ccrawl.ops.mirrors`: ``ctx`` (:class:`~ccrawl.ops.context.OpContext`) carries the
:class:`~ccrawl.net.client.CCClient` keywords (where the web graph is read from) and the notice (where stderr
lines go), and ``hub`` picks where the dataset repo lives (``""`` for ``$CCRAWL_HUB`` or the Hub, ``"hf"``, or a
directory).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Endpoint, Injected, Limit, Value, WritePath
from ccrawl.ops.context import OpContext, context

if TYPE_CHECKING:
    from ccrawl.datasets.publish_domains import DomainsPublishStats

DOMAINS_REPO = "open-index/ccrawl-domains"
PUBLISH_COLUMNS = ("release", "shard", "rows", "first_pos", "bytes", "action", "commit")
RECOUNT_COLUMNS = ("release", "field", "was", "now")
DIFF_COLUMNS = ("from", "to", "from_domains", "to_domains", "added", "removed", "shared", "bytes_read",
                "dataset_bytes")


def domain_table(graph: str, ctx: OpContext | None) -> tuple[str, str]:
    """(release id, URL) of the domain rank table of ``graph``, or of the newest release that has one."""
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, iterate

    async def find(cc: CCClient) -> Any:
        rel, url = await wg.domain_table(cc, graph or None, warn=context(ctx).notice)
        yield rel.id, url

    found: tuple[str, str] = next(iterate(find, context(ctx).client, warn=context(ctx).notice))
    return found


def table_blocks(url: str, ctx: OpContext | None) -> Iterator[bytes]:
    """The decompressed blocks of the table at ``url``, streamed (a truncated file raises at its end)."""
    from ccrawl.commoncrawl import webgraph as wg
    from ccrawl.net.client import CCClient, iterate

    def blocks(cc: CCClient) -> Any:
        return wg.gz_blocks(cc, url)

    return iterate(blocks, context(ctx).client, warn=context(ctx).notice)


@operation("domains.publish", summary="Mirror a web-graph release's domain ranks to a dataset repo, in rank order",
           columns=PUBLISH_COLUMNS, writes=True)
def domains_publish(
    graph: Value[str] = "",
    repo: Endpoint[str] = DOMAINS_REPO,
    commit_every: Limit[int] = 8,
    workers: Limit[int] = 0,
    shard_rows: Limit[int] = 1_000_000,
    private: Value[bool] = False,
    keep: Value[bool] = False,
    min_free_gb: Limit[float] = 0.0,
    max_stall: Limit[float] = 600.0,
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    staging: WritePath[str] = "",
    ctx: Injected[OpContext | None] = None,
    stats: Injected[DomainsPublishStats | None] = None,
) -> Iterator[Record]:
    """One record per shard: committed, staged (``no_push``), exists (on the hub already) or failed; ``stats``, when
    given, is the run's tally as it goes (the publisher counts into it)."""
    from pathlib import Path

    from ccrawl.datasets.publish_domains import DomainsPublisher, DomainsPublishOptions, summary_line
    from ccrawl.hub.factory import open_publish_repo

    say = context(ctx).notice
    opts = DomainsPublishOptions(repo_id=repo, commit_every=commit_every, workers=workers, shard_rows=shard_rows,
                                 private=private, keep=keep, min_free_gb=min_free_gb, max_stall=max_stall,
                                 no_push=no_push, staging=Path(staging) if staging else
                                 Path("domains-staging") / repo.replace("/", "__"))
    target = open_publish_repo(repo, hub=hub, endpoint=endpoint, no_push=no_push)
    release, url = domain_table(graph, ctx)
    say(f"domains publish: {release}: streaming {url}")
    pub = DomainsPublisher(opts, target, release, url, lambda: table_blocks(url, ctx), log=say, stats=stats)
    yield from pub.run()
    say(summary_line(pub.stats, release, no_push=no_push))


@operation("domains.recount", summary="Repair drifted release totals in the domains stats.csv from the hub",
           columns=RECOUNT_COLUMNS, writes=True)
def domains_recount(
    repo: Endpoint[str] = DOMAINS_REPO,
    graph: Value[str] = "",
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record per total that changed; the repaired stats.csv and card land in one commit."""
    from ccrawl.datasets.publish_domains import STATS, recount, render_card
    from ccrawl.hub.factory import open_publish_repo
    from ccrawl.hub.repo import Add

    say = context(ctx).notice
    target = open_publish_repo(repo, hub=hub, endpoint=endpoint, no_push=no_push)
    head = target.head()
    old, new = recount(target, releases=[g for g in graph.split(",") if g])
    changed = []
    for rel, row in sorted(new.rows.items()):
        before = old.rows.get(rel, {})
        for key in ("shards", "rows", "bytes", "complete"):
            if before.get(key, 0 if key != "complete" else False) != row[key]:
                changed.append({"release": rel, "field": key, "was": before.get(key), "now": row[key]})
    if not changed:
        say(f"domains recount: {repo}: {STATS} agrees with the hub; nothing to repair")
        return
    yield from changed
    if no_push:
        say(f"domains recount: {len(changed)} total(s) drifted; --no-push: not committed")
        return
    target.commit([Add(STATS, new.render()), Add("README.md", render_card(repo, new).encode())],
                  message=f"domains recount: {len(changed)} total(s) repaired from the hub", parent=head)
    say(f"domains recount: repaired {len(changed)} total(s) in {repo}/{STATS}")


@operation("domains.diff", summary="Domains added, removed and shared between two published releases",
           columns=DIFF_COLUMNS)
def domains_diff(
    from_release: Value[str] = "",
    to_release: Value[str] = "",
    repo: Endpoint[str] = DOMAINS_REPO,
    added_out: WritePath[str] = "",
    workers: Limit[int] = 0,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record: the counts. ``added_out`` gets the domains new in ``to_release``, one a line, in rank order."""
    from ccrawl.datasets.domain_diff import diff_releases, pick_releases
    from ccrawl.hub.factory import open_repo

    say = context(ctx).notice
    target = open_repo(repo, hub=hub or None, endpoint=endpoint or None)
    older, newer = pick_releases(target, from_release, to_release)
    say(f"domains diff: {repo}: {older} -> {newer}")
    yield diff_releases(target, older, newer, workers=workers, added_out=added_out or None).record()
