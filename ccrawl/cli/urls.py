"""``ccrawl urls publish|recount``: the cc-index-table mirrored to a dataset repo, shard for shard.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.mirrors` and
:mod:`ccrawl.datasets.publish_urls`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ccrawl.cli.common import Run, command, op_option

F = TypeVar("F", bound=Callable[..., Any])


def seconds(flag: str, value: str) -> float:
    from ccrawl.config import parse_duration
    from ccrawl.errors import UsageError

    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{flag} {value!r}: {exc}; give a duration such as 30s, 5m or a number of seconds") from exc


def urls_repo(run: Run, repo: str) -> str:
    return repo or str(getattr(run.settings, "urls_repo", "") or "open-index/ccrawl-urls")


def staging_for(run: Run, repo: str, staging: Path | None) -> Path:
    if staging is not None:
        return staging
    data_dir = Path(str(getattr(run.settings, "data_dir", "") or "~/data/ccrawl")).expanduser()
    return data_dir / "urls-staging" / repo.replace("/", "__")


def upkeep_options(paused: str) -> Callable[[F], F]:
    """The flags every mirror publisher shares (``urls publish``, ``domains publish``; generated from
    ``urls.publish``, whose parameters ``domains.publish`` shares); ``paused`` names what ``--min-free-gb``
    holds back (the seed's words: downloads, work)."""
    def apply(func: F) -> F:
        return _upkeep_options(func, paused)
    return apply


def _upkeep_options(func: F, paused: str) -> F:
    for option in reversed((
        op_option("urls.publish", "private", help="Create the dataset repo private"),
        op_option("urls.publish", "keep", help="Keep local shards after commit instead of deleting them"),
        op_option("urls.publish", "min_free_gb", help=f"Pause new {paused} when free disk is under this many GB"),
        click.option("--max-stall", default="10m", show_default=True,
                     help="Restart the run (exit 75) after this long with no progress"),
        op_option("urls.publish", "no_push", help="Scan and stage but skip the upload"),
        op_option("urls.publish", "hub",
                  help="A directory to publish to a local hub instead (default $CCRAWL_HUB, else the Hub)"),
    )):
        func = option(func)
    return func


@click.group("urls", help="Mirror the Common Crawl URL index to a HuggingFace dataset.")
def urls() -> None:
    pass


@command("publish", help="Mirror the URL index to a HuggingFace dataset, shard for shard (-c picks the crawls).")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-urls, or "
                                         "CCRAWL_URLS_REPO)")
@op_option("urls.publish", "commit_every", show_default=True, help="Shards per HuggingFace commit")
@op_option("urls.publish", "workers", help="Download-and-convert workers (0 picks a default from CPU count)")
@op_option("urls.publish", "whole", help="Download each part whole before reading (for range-hostile mirrors)")
@upkeep_options("downloads")
@click.option("--staging", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where shards are sealed before commit (default <data-dir>/urls-staging/<repo>)")
def urls_publish_cmd(run: Run, repo: str, commit_every: int, workers: int, whole: bool, private: bool, keep: bool,
                     min_free_gb: float, max_stall: str, no_push: bool, hub: str, staging: Path | None) -> None:
    from ccrawl import ops

    repo = urls_repo(run, repo)
    op = ops.get("urls.publish")
    rows = op(crawl=run.settings.crawl or "latest", repo=repo, commit_every=commit_every, workers=workers,
              whole=whole, private=private, keep=keep, min_free_gb=min_free_gb,
              max_stall=seconds("--max-stall", max_stall), no_push=no_push, hub=hub,
              endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""),
              staging=str(staging_for(run, repo, staging)), ctx=run.context())
    run.emit(rows, columns=op.columns)


@command("recount", help="Repair drifted URL and byte totals in stats.csv from the hub (-c narrows the crawls).")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-urls, or "
                                         "CCRAWL_URLS_REPO)")
@op_option("urls.recount", "no_push", help="Report the drift but commit nothing")
@op_option("urls.recount", "hub", help="A directory holding a local hub instead (default $CCRAWL_HUB, else the Hub)")
def urls_recount_cmd(run: Run, repo: str, no_push: bool, hub: str) -> None:
    from ccrawl import ops

    repo = urls_repo(run, repo)
    op = ops.get("urls.recount")
    rows = op(repo=repo, crawl=run.settings.crawl or "", no_push=no_push, hub=hub,
              endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""), ctx=run.context())
    run.emit(rows, columns=op.columns)


for _cmd in (urls_publish_cmd, urls_recount_cmd):
    urls.add_command(_cmd)
