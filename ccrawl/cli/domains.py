"""``ccrawl domains publish|recount|diff``: the web-graph domain ranks mirrored to a dataset repo, in rank order.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.domains`, :mod:`ccrawl.datasets.publish_domains`
and :mod:`ccrawl.datasets.domain_diff`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.cli.urls import seconds, upkeep_options


def domains_repo(run: Run, repo: str) -> str:
    return repo or str(getattr(run.settings, "domains_repo", "") or "open-index/ccrawl-domains")


def _endpoint(run: Run) -> str:
    return str(getattr(run.settings, "hf_endpoint", "") or "")


@click.group("domains", help="Mirror the Common Crawl domain ranks to a HuggingFace dataset.")
def domains() -> None:
    pass


@command("publish", help="Mirror the domain ranks to a HuggingFace dataset, in rank order.")
@op_option("domains.publish", "graph", metavar="RELEASE",
           help="Web-graph release id (default: the newest release with a domain table)")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-domains, or "
                                         "CCRAWL_DOMAINS_REPO)")
@op_option("domains.publish", "commit_every", show_default=True, help="Shards per HuggingFace commit")
@op_option("domains.publish", "workers", help="Shards encoded at once (0 picks a default from CPU count)")
@op_option("domains.publish", "shard_rows", show_default=True,
           help="Domains per shard (a release keeps the value it was started with)")
@upkeep_options("work")
@click.option("--staging", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where shards are sealed before commit (default <data-dir>/domains-staging/<repo>)")
def domains_publish_cmd(run: Run, graph: str, repo: str, commit_every: int, workers: int, shard_rows: int,
                        private: bool, keep: bool, min_free_gb: float, max_stall: str, no_push: bool, hub: str,
                        staging: Path | None) -> None:
    from ccrawl import ops

    repo = domains_repo(run, repo)
    if staging is None:
        data_dir = Path(str(getattr(run.settings, "data_dir", "") or "~/data/ccrawl")).expanduser()
        staging = data_dir / "domains-staging" / repo.replace("/", "__")
    op = ops.get("domains.publish")
    rows = op(graph=graph, repo=repo, commit_every=commit_every, workers=workers, shard_rows=shard_rows,
              private=private, keep=keep, min_free_gb=min_free_gb, max_stall=seconds("--max-stall", max_stall),
              no_push=no_push, hub=hub, endpoint=_endpoint(run), staging=str(staging), ctx=run.context())
    run.emit(rows, columns=op.columns)


@command("recount", help="Repair drifted release totals in stats.csv from the hub.")
@op_option("domains.recount", "graph", metavar="RELEASE", help="Only these releases (comma-separated; default all)")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-domains, or "
                                         "CCRAWL_DOMAINS_REPO)")
@op_option("domains.recount", "no_push", help="Report the drift but commit nothing")
@op_option("domains.recount", "hub", help="A directory holding a local hub instead (default $CCRAWL_HUB, else the Hub)")
def domains_recount_cmd(run: Run, graph: str, repo: str, no_push: bool, hub: str) -> None:
    from ccrawl import ops

    op = ops.get("domains.recount")
    rows = op(repo=domains_repo(run, repo), graph=graph, no_push=no_push, hub=hub, endpoint=_endpoint(run),
              ctx=run.context())
    run.emit(rows, columns=op.columns)


@command("diff", help="Count domains added, removed, and shared between two published releases.")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-domains, or "
                                         "CCRAWL_DOMAINS_REPO)")
@op_option("domains.diff", "from_release", "--from",
           help="Older web-graph release id (default: second-newest complete release published)")
@op_option("domains.diff", "to_release", "--to", help="Newer web-graph release id (default: newest complete)")
@op_option("domains.diff", "added_out", type=click.Path(dir_okay=False),
           help="Write the domains new in the later release to this file, one per line")
@op_option("domains.diff", "workers", help="Concurrent shard readers (0 picks a default from CPU count)")
@op_option("domains.diff", "hub", help="A directory holding a local hub instead (default $CCRAWL_HUB, else the Hub)")
def domains_diff_cmd(run: Run, repo: str, from_release: str, to_release: str, added_out: str, workers: int,
                     hub: str) -> None:
    from ccrawl import ops

    op = ops.get("domains.diff")
    rows = op(from_release=from_release, to_release=to_release, repo=domains_repo(run, repo), added_out=added_out,
              workers=workers, hub=hub, endpoint=_endpoint(run), ctx=run.context())
    run.emit(rows, columns=op.columns, single=True)


for _cmd in (domains_publish_cmd, domains_recount_cmd, domains_diff_cmd):
    domains.add_command(_cmd)
