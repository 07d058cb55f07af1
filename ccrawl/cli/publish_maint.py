"""``ccrawl publish verify|delete-obsolete``: upkeep of the published Common Crawl datasets.

Parsing and rendering only: the work is in :mod:`ccrawl.ops.mirrors` and :mod:`ccrawl.datasets.verify`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ccrawl.cli.common import Run, command, op_option
from ccrawl.cli.urls import staging_for, urls_repo


@click.group("publish", help="Maintenance for the published Common Crawl datasets.")
def publish() -> None:
    pass


@command("verify", help="Check that the published shards are readable, complete, and the schema they claim.")
@click.option("--graph", default="", help="Verify a web-graph release of the domains dataset instead of URL crawls")
@click.option("--repo", default="", help="HuggingFace dataset repo (default: the dataset the unit belongs to; with "
                                         "neither -c nor --graph, a news or recrawl repo to verify whole)")
@op_option("publish.verify", "sample",
           help="Rows to decode from each shard's last row group (0 reads the footer alone)")
@op_option("publish.verify", "workers", help="Shards checked at once (0 picks a default from CPU count)")
@op_option("publish.verify", "repair", help="Rebuild and re-upload the shards that fail")
@op_option("publish.verify", "no_push", help="With --repair, rebuild locally but skip the upload")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON")
@op_option("publish.verify", "hub", help="A directory holding a local hub instead (default $CCRAWL_HUB, else the Hub)")
@click.option("--staging", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where --repair rebuilds shards (default <data-dir>/urls-staging/<repo>)")
def verify_cmd(run: Run, graph: str, repo: str, sample: int, workers: int, repair: bool, no_push: bool,
               as_json: bool, hub: str, staging: Path | None) -> None:
    from ccrawl import ops
    from ccrawl.errors import InputError

    # -c names a URL crawl; without it, --graph names a domain release, and a bare --repo is verified whole
    # (a news or recrawl dataset, told apart by its ledgers); with none of the three, the default crawl.
    crawl = str(run.flags.get("crawl") or "")
    if not crawl and not graph and not repo:
        crawl = str(run.settings.crawl or "")
    if not repo and graph:
        from ccrawl.cli.domains import domains_repo

        repo = domains_repo(run, repo)
    repo = urls_repo(run, repo)
    op = ops.get("publish.verify")
    reports: list[object] = []
    rows = op(crawl=crawl, graph=graph, repo=repo, sample=sample, workers=workers, repair=repair,
              no_push=no_push, hub=hub, endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""),
              staging=str(staging_for(run, repo, staging)), ctx=run.context(),
              report=reports)
    if not as_json:
        run.emit(rows, columns=op.columns)
        return
    records: list[Any] = []
    failure: InputError | None = None
    try:
        records.extend(rows)
    except InputError as exc:
        failure = exc
    read = sum(getattr(r, "bytes_read", 0) for r in reports)
    total = sum(getattr(r, "dataset_bytes", 0) for r in reports)
    verdicts: dict[str, int] = {}
    for rec in records:
        verdicts[str(rec["verdict"])] = verdicts.get(str(rec["verdict"]), 0) + 1
    doc = {"repo": repo, "crawl": crawl or None, "graph": graph or None, "ok": failure is None, "verdicts": verdicts,
           "bytes_read": read, "dataset_bytes": total, "shards": records}
    click.echo(json.dumps(doc, indent=1, default=str))
    if failure is not None:
        raise failure


@command("delete-obsolete", help="Delete the superseded first-generation dataset repos.")
@op_option("publish.delete_obsolete", "yes", help="Delete without prompting")
@op_option("publish.delete_obsolete", "hub",
           help="A directory holding a local hub instead (default $CCRAWL_HUB, else the Hub)")
def delete_obsolete_cmd(run: Run, yes: bool, hub: str) -> None:
    from ccrawl import ops

    def ask(question: str) -> bool:
        return bool(click.confirm(question, default=False, err=True))

    confirm = ask if sys.stdin.isatty() else None
    op = ops.get("publish.delete_obsolete")
    rows = op(yes=yes, hub=hub, endpoint=str(getattr(run.settings, "hf_endpoint", "") or ""), confirm=confirm,
              ctx=run.context())
    run.emit(rows, columns=op.columns)


for _cmd in (verify_cmd, delete_obsolete_cmd):
    publish.add_command(_cmd)
