"""The dataset mirrors and their upkeep: ``urls publish|recount``, ``publish verify|delete-obsolete``.

Same conventions as :mod:`ccrawl.ops.news`: ``ctx`` (the :class:`~ccrawl.ops.context.OpContext`) carries the
:class:`~ccrawl.net.client.CCClient` keywords (where the cc-index-table is read from), ``hub`` picks
where the dataset repo lives (``""`` for ``$CCRAWL_HUB`` or the Hub, ``"hf"``, or a directory), and the
context's ``notice`` is where stderr lines go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated

from ccrawl.jsontypes import Record
from ccrawl.ops import operation
from ccrawl.ops.caps import Bounds, Cap, Endpoint, Injected, Limit, Value, WritePath
from ccrawl.ops.context import OpContext, context

if TYPE_CHECKING:
    from pathlib import Path

    from ccrawl.commoncrawl.columnar.source import RangeSource
    from ccrawl.datasets.publish_urls import UrlsPublishStats
    from ccrawl.datasets.verify import VerifyReport
    from ccrawl.hub.repo import DatasetRepo

Notice = Callable[[str], None]

URLS_REPO = "open-index/ccrawl-urls"
#: The first-generation repos ``publish delete-obsolete`` removes.
OBSOLETE_REPOS = ("open-index/cc-host-dataset", "open-index/commoncrawl-urls")
PUBLISH_COLUMNS = ("crawl", "shard", "source", "rows", "bytes", "action", "commit")
RECOUNT_COLUMNS = ("crawl", "field", "was", "now")
VERIFY_COLUMNS = ("shard", "verdict", "rows", "row_groups", "size", "bytes_read", "detail")
DELETE_COLUMNS = ("repo", "action")


def source_parts(crawl: str, ctx: OpContext | None, *,
                 connections: int = 8) -> tuple[RangeSource, dict[str, list[str]]]:
    """(a RangeSource over the bucket, {crawl id: its subset=warc part paths}) for a crawl reference."""
    from ccrawl.commoncrawl.columnar.parts import open_http

    index = open_http(context(ctx).client_kwargs(), crawl, connections=connections)
    crawls: dict[str, list[str]] = {c: [] for c in index.crawls}
    for p in index.parts:
        if p.subset == "warc":
            crawls.setdefault(p.crawl, []).append(p.path)
    return index.source, crawls


def _open(repo: str, hub: str, endpoint: str, no_push: bool) -> DatasetRepo:
    from ccrawl.hub.factory import open_publish_repo

    return open_publish_repo(repo, hub=hub, endpoint=endpoint, no_push=no_push)


@operation("urls.publish", summary="Mirror the cc-index-table to a dataset repo, one shard per source part",
           columns=PUBLISH_COLUMNS, writes=True)
def urls_publish(
    crawl: Value[str],
    repo: Endpoint[str] = URLS_REPO,
    commit_every: Limit[int] = 16,
    workers: Limit[int] = 0,
    whole: Value[bool] = False,
    private: Value[bool] = False,
    keep: Value[bool] = False,
    min_free_gb: Limit[float] = 0.0,
    max_stall: Limit[float] = 600.0,
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    staging: WritePath[str] = "",
    ctx: Injected[OpContext | None] = None,
    stats: Injected[UrlsPublishStats | None] = None,
) -> Iterator[Record]:
    """One record per source part: committed, staged (``no_push``), exists (on the hub already) or failed;
    ``stats``, when given, is the run's tally as it goes (the publisher counts into it)."""
    from pathlib import Path

    from ccrawl.datasets.publish_urls import UrlsPublisher, UrlsPublishOptions, summary_line

    say = context(ctx).notice
    opts = UrlsPublishOptions(repo_id=repo, commit_every=commit_every, workers=workers, whole=whole,
                              private=private, keep=keep, min_free_gb=min_free_gb, max_stall=max_stall,
                              no_push=no_push,
                              staging=Path(staging) if staging else Path("urls-staging") / repo.replace("/", "__"))
    target = _open(repo, hub, endpoint, no_push)
    source, crawls = source_parts(crawl, ctx, connections=max(2, opts.workers * 2))
    try:
        pub = UrlsPublisher(opts, target, source, crawls, log=say, stats=stats)
        yield from pub.run()
        say(summary_line(pub.stats, no_push=no_push))
    finally:
        source.close()


@operation("urls.recount", summary="Repair drifted URL and byte totals in stats.csv from the hub",
           columns=RECOUNT_COLUMNS, writes=True)
def urls_recount(
    repo: Endpoint[str] = URLS_REPO,
    crawl: Value[str] = "",
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    ctx: Injected[OpContext | None] = None,
) -> Iterator[Record]:
    """One record per total that changed; the repaired stats.csv and card land in one commit."""
    from ccrawl.datasets.publish_urls import STATS, recount, render_card
    from ccrawl.hub.repo import Add

    say = context(ctx).notice
    target = _open(repo, hub, endpoint, no_push)
    crawls = [c for c in crawl.split(",") if c] if crawl else []
    head = target.head()
    old, new = recount(target, crawls=crawls)
    changed: list[Record] = []
    for c, row in sorted(new.rows.items()):
        before = old.rows.get(c, {})
        for key in ("shards", "rows", "bytes"):
            if int(before.get(key, 0)) != int(row[key]):
                changed.append({"crawl": c, "field": key, "was": int(before.get(key, 0)), "now": int(row[key])})
    if not changed:
        say(f"urls recount: {repo}: {STATS} agrees with the hub; nothing to repair")
        return
    yield from changed
    if no_push:
        say(f"urls recount: {len(changed)} total(s) drifted; --no-push: not committed")
        return
    target.commit([Add(STATS, new.render()), Add("README.md", render_card(repo, new).encode())],
                  message=f"urls recount: {len(changed)} total(s) repaired from the hub", parent=head)
    say(f"urls recount: repaired {len(changed)} total(s) in {repo}/{STATS}")


@operation("publish.verify", summary="Check the published shards: readable, complete, the schema they claim",
           columns=VERIFY_COLUMNS, writes=True)
def publish_verify(
    crawl: Value[str] = "",
    graph: Value[str] = "",
    repo: Endpoint[str] = "",
    sample: Annotated[int, Cap.VALUE, Bounds(0, 10**9)] = 0,
    workers: Limit[int] = 0,
    repair: Value[bool] = False,
    no_push: Value[bool] = False,
    hub: Endpoint[str] = "",
    endpoint: Endpoint[str] = "",
    staging: WritePath[str] = "",
    check_source: Value[bool] = True,
    ctx: Injected[OpContext | None] = None,
    report: Injected[list[VerifyReport] | None] = None,
) -> Iterator[Record]:
    """One record per shard with its verdict, then one ``ledger`` record per disagreement with stats.csv.

    The source's manifests are read (to name a shard never uploaded; the context's client options say where
    Common Crawl is) unless ``check_source`` is False: then only what the hub lists is checked.

    Raises :class:`~ccrawl.errors.InputError` (non-zero exit) at the end when a shard failed or the
    ledger disagrees and ``repair`` was not asked for.
    """
    import os
    from pathlib import Path

    from ccrawl.datasets.publish_urls import read_ledger, shard_path, url_schema
    from ccrawl.datasets.verify import verify
    from ccrawl.errors import (
        CredentialMissing,
        InputError,
        NothingMatched,
        TemporaryFailure,
        Unreachable,
        UsageError,
    )
    from ccrawl.hub.factory import open_repo

    say = context(ctx).notice
    if graph and crawl:
        raise UsageError("publish verify: -c names a crawl of the URL mirror and --graph a release of the domain "
                         "mirror: give one")
    repo = repo or ("open-index/ccrawl-domains" if graph else URLS_REPO)
    workers = workers or max(1, min(8, (os.cpu_count() or 1) * 2))
    target = open_repo(repo, hub=hub or None, endpoint=endpoint or None)
    if graph or not crawl:
        from ccrawl.datasets.verify_kinds import verify_other

        yield from verify_other(target, graph=graph, sample=sample, workers=workers, repair=repair, no_push=no_push,
                                ctx=context(ctx) if check_source else None, say=say, report=report)
        return
    source: RangeSource | None = None
    expected: dict[str, str] = {}
    crawls = [crawl]
    try:
        if check_source:
            try:
                source, by_crawl = source_parts(crawl, ctx, connections=workers)
            except (Unreachable, TemporaryFailure, NothingMatched) as exc:
                if repair:
                    raise
                say(f"publish verify: cannot read the source manifest ({exc}); checking the shards the hub lists, "
                    "so a shard never uploaded cannot be named as missing")
            else:
                crawls = list(by_crawl)
                for c, parts in by_crawl.items():
                    for p in parts:
                        expected[shard_path(c, p)] = p
        try:
            ledger = read_ledger(target)
        except CredentialMissing:
            ledger = None
        failed = False
        total_read = total_bytes = 0
        for c in crawls:
            row = ledger.rows.get(c, {"crawl": c, "shards": 0, "rows": 0, "bytes": 0}) if ledger else None
            rep = verify(target, f"data/{c}", schema=url_schema(),
                         expected=[s for s in expected if s.startswith(f"data/{c}/")], sample=sample,
                         workers=workers, ledger_row=row)
            total_read += rep.bytes_read
            total_bytes += rep.dataset_bytes
            for chk in rep.checks:
                yield chk.record()
            for problem in rep.ledger_problems:
                yield {"shard": f"{c}/stats.csv", "verdict": "ledger", "rows": None, "row_groups": None,
                       "size": None, "bytes_read": None, "detail": problem}
            if report is not None:
                report.append(rep)
            bad = [chk for chk in rep.failed if chk.verdict != "no-access" and chk.path in expected]
            if repair and bad and source is not None:
                _repair(target, source, c, [(chk.path, expected[chk.path]) for chk in bad], no_push=no_push,
                        staging=Path(staging) if staging else Path("urls-staging") / repo.replace("/", "__"),
                        repo_id=repo, say=say)
                rep.repaired = [chk.path for chk in bad]
            if rep.failed and not (repair and {chk.path for chk in rep.failed} <= set(rep.repaired)):
                failed = True
            if rep.ledger_problems and not repair:
                failed = True
        pct = 100.0 * total_read / total_bytes if total_bytes else 0.0
        say(f"publish verify: read {total_read:,} of {total_bytes:,} bytes ({pct:.3f}%)")
        if failed:
            raise InputError(f"publish verify: {repo}: shards failed or the ledger disagrees (see the report)"
                             + ("" if repair else "; --repair rebuilds URL shards from their source part"))
    finally:
        if source is not None:
            source.close()


def _repair(repo: DatasetRepo, source: RangeSource, crawl: str, bad: list[tuple[str, str]], *, no_push: bool,
            staging: Path,
            repo_id: str, say: Notice) -> None:
    """Rebuild ``bad`` shards from their source parts and commit them with a recounted ledger and card."""
    from ccrawl.datasets.publish_urls import STATS, convert_part, read_ledger, render_card
    from ccrawl.hub.repo import Add

    adds = []
    made: dict[str, tuple[int, int]] = {}
    for shard, part in bad:
        local = staging / "repair" / shard
        made[shard] = convert_part(source, part, local)
        adds.append(Add(shard, local))
    if no_push:
        say(f"publish verify: rebuilt {len(adds)} shard(s) under {staging / 'repair'}; --no-push: not uploaded")
        return
    head = repo.head()
    files = {f.path: f for f in repo.list_files(f"data/{crawl}") if f.path.endswith(".parquet")}
    ledger = read_ledger(repo)
    from ccrawl.datasets.verify import footer_rows

    row = ledger.row(crawl)
    rows = sizes = 0
    for path in sorted(set(files) | set(made)):
        if path in made:
            rows += made[path][0]
            sizes += made[path][1]
        else:
            rows += footer_rows(repo, path, files[path].size)
            sizes += files[path].size
    row["shards"], row["rows"], row["bytes"] = len(set(files) | set(made)), rows, sizes
    adds += [Add(STATS, ledger.render()), Add("README.md", render_card(repo_id, ledger).encode())]
    repo.commit(adds, message=f"publish verify --repair: {len(made)} shard(s) of {crawl} rebuilt", parent=head)
    for shard in made:
        (staging / "repair" / shard).unlink(missing_ok=True)
    say(f"publish verify: rebuilt and committed {len(made)} shard(s) of {crawl}; ledger recounted")


@operation("publish.delete_obsolete", summary="Delete the superseded first-generation dataset repos",
           columns=DELETE_COLUMNS, writes=True)
def publish_delete_obsolete(yes: Value[bool] = False, hub: Endpoint[str] = "", endpoint: Endpoint[str] = "",
                            confirm: Injected[Callable[[str], bool] | None] = None,
                            ctx: Injected[OpContext | None] = None) -> Iterator[Record]:
    """One record per obsolete repo: deleted, absent, or kept (not confirmed)."""
    from ccrawl.errors import UsageError

    say = context(ctx).notice
    if not yes:
        if confirm is None:
            raise UsageError("publish delete-obsolete deletes " + ", ".join(OBSOLETE_REPOS)
                             + ": pass --yes, or run it on a terminal to be asked")
        if not confirm("Delete " + " and ".join(OBSOLETE_REPOS) + "? This cannot be undone."):
            for r in OBSOLETE_REPOS:
                yield {"repo": r, "action": "kept"}
            say("publish delete-obsolete: nothing deleted")
            return
    for r in OBSOLETE_REPOS:
        target = _open(r, hub, endpoint, False)
        if not target.exists_repo():
            yield {"repo": r, "action": "absent"}
            continue
        target.delete_repo()
        yield {"repo": r, "action": "deleted"}
