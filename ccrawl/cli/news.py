"""``ccrawl news list|download|search|publish``: CC-NEWS and the index Common Crawl does not publish.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.news` (and below it
:mod:`ccrawl.commoncrawl.news` and :mod:`ccrawl.datasets.publish_news`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ccrawl.cli.common import Run, command, op_type

_DURATION = "a duration such as 30s, 5m or a number of seconds"


def _seconds(flag: str, value: str) -> float:
    from ccrawl.config import parse_duration
    from ccrawl.errors import UsageError

    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{flag} {value!r}: {exc}; give {_DURATION}") from exc


def _month_options(op_name: str) -> Callable[[Any], Any]:
    """--month and --year, held to the operation's bounds, defaulting to this month (the operation has none)."""

    def decorate(func: Any) -> Any:
        today = dt.datetime.now(dt.UTC).date()
        func = click.option("--month", type=op_type(op_name, "month"), default=today.month, show_default="this month",
                            help="CC-NEWS month (1-12)")(func)
        return click.option("--year", type=op_type(op_name, "year"), default=today.year, show_default="this year",
                            help="CC-NEWS year")(func)

    return decorate


def _repo(run: Run, repo: str) -> str:
    return repo or str(getattr(run.settings, "news_repo", "") or "open-index/ccrawl-news")


@click.group("news", help="Work with the continuous CC-NEWS dataset, and the index Common Crawl does not publish.")
def news() -> None:
    pass


@command("list", help="List CC-NEWS files for --year/--month (from the month's warc.paths.gz).")
@_month_options("news.list")
@click.option("--files", type=op_type("news.list", "files"), default=0,
              help="Only the first N files of the month (0 lists them all)")
def news_list_cmd(run: Run, year: int, month: int, files: int) -> None:
    from ccrawl import ops

    op = ops.get("news.list")
    run.emit(op(year=year, month=month, files=files, ctx=run.context()), columns=op.columns)


@command("download", help="Download CC-NEWS files of --year/--month (resumable, checksummed as they stream).")
@_month_options("news.download")
@click.option("--out-dir", default=".", show_default=True, help="Directory to download into")
@click.option("--files", type=op_type("news.download", "files"), default=0,
              help="Only the first N files of the month (0 downloads them all)")
@click.option("--flat", is_flag=True, help="Keep only the file name, not the bucket's folder tree")
def news_download_cmd(run: Run, year: int, month: int, out_dir: str, files: int, flat: bool) -> None:
    from ccrawl import ops

    op = ops.get("news.download")
    workers = int(run.flags.get("workers") or getattr(run.settings, "workers", 4) or 4)
    run.emit(op(year=year, month=month, out=out_dir, files=files, flat=flat, workers=workers,
                ctx=run.context()), columns=op.columns)


@command("search", help="Find a publisher's articles in a month, from the index or by scanning the archives.")
@click.argument("host")
@_month_options("news.search")
@click.option("--repo", default="", help="Dataset repo to read the index from (default open-index/ccrawl-news, "
                                         "or CCRAWL_NEWS_REPO)")
@click.option("--hub", default="", help="A directory to read a local hub from (default $CCRAWL_HUB, else the Hub)")
@click.option("--no-index", is_flag=True, help="Skip the index and scan the archives (the old behaviour)")
@click.option("--limit", type=op_type("news.search", "limit"), default=0, help="Stop after this many matches (0: all)")
@click.option("--workers", type=int, default=0, help="Concurrent readers (0 picks a default from the CPU count)")
def news_search_cmd(run: Run, host: str, year: int, month: int, repo: str, hub: str, no_index: bool, limit: int,
                    workers: int) -> None:
    from ccrawl import ops

    op = ops.get("news.search")
    batches = op.batches(host=host, year=year, month=month, repo=_repo(run, repo), hub=hub,
                         endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""), no_index=no_index,
                         limit=limit, workers=workers, ctx=run.context())
    run.emit_batches(batches, columns=op.columns)


@command("publish", help="Build the missing CC-NEWS index and mirror it to a HuggingFace dataset.")
@click.option("--months", required=True, help="Comma list of months to index, as YYYY/MM")
@click.option("--repo", default="", help="HuggingFace dataset repo (default open-index/ccrawl-news, or "
                                         "CCRAWL_NEWS_REPO)")
@click.option("--files", type=op_type("news.publish", "files"), default=0,
              help="Index only the first N WARC files of each month (0: the month)")
@click.option("--commit-every", type=int, default=8, show_default=True, help="Shards per HuggingFace commit")
@click.option("--workers", type=int, default=0, help="Stream-and-index workers (0 picks a default from CPU count)")
@click.option("--private", is_flag=True, help="Create the dataset repo private")
@click.option("--keep", is_flag=True, help="Keep local shards after commit instead of deleting them")
@click.option("--min-free-gb", type=float, default=0.0, help="Pause new work when free disk is under this many GB")
@click.option("--max-stall", default="10m", show_default=True,
              help="Restart the run (exit 75) after this long with no progress")
@click.option("--no-push", is_flag=True, help="Index and stage but skip the upload")
@click.option("--hub", default="", help="A directory to publish to a local hub instead (default $CCRAWL_HUB, "
                                        "else the Hub)")
@click.option("--staging", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where shards are sealed before commit (default <data-dir>/news-staging/<repo>)")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where archives are indexed: here, or a Ray task per WARC file (pip install 'ccrawl[ray]')")
@click.option("--ray-address", default="", help="Ray cluster to join [$RAY_ADDRESS, else a local one sized to "
                                               "this machine]")
def news_publish_cmd(run: Run, months: str, repo: str, files: int, commit_every: int, workers: int, private: bool,
                     keep: bool, min_free_gb: float, max_stall: str, no_push: bool, hub: str,
                     staging: Path | None, executor: str, ray_address: str) -> None:
    from ccrawl import ops

    repo = _repo(run, repo)
    if staging is None:
        data_dir = Path(str(getattr(run.settings, "data_dir", "") or "~/data/ccrawl")).expanduser()
        staging = data_dir / "news-staging" / repo.replace("/", "__")
    op = ops.get("news.publish")
    rows = op(months=months, repo=repo, files=files, commit_every=commit_every, workers=workers, private=private,
              keep=keep, min_free_gb=min_free_gb, max_stall=_seconds("--max-stall", max_stall), no_push=no_push,
              hub=hub, endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""), staging=str(staging),
              ctx=run.context(), executor=executor, ray_address=ray_address)
    run.emit(rows, columns=op.columns)


for _cmd in (news_list_cmd, news_download_cmd, news_search_cmd, news_publish_cmd):
    news.add_command(_cmd)
