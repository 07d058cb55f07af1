"""``publish verify --repo`` of a CC-NEWS mirror: recognised by its ledgers, every shard checked against the news
schema, a complete month against its manifest, and stats.csv / languages.csv reconciled with the shards."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ccrawl import ops
from ccrawl.commoncrawl.news.schema import arrow_schema
from ccrawl.errors import InputError
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakehub import planted

from .conftest import MONTH, Published, cli_env, client_options, run_cli


def _copy(published: Published, tmp: Path) -> LocalRepo:
    shutil.copytree(published.hub, tmp / "hub", symlinks=True)  # the links are relative: the copy stands alone
    return LocalRepo(tmp / "hub", published.repo)


def _verify(repo: LocalRepo, server: FakeCCServer, tmp: Path) -> tuple[list[dict[str, Any]], InputError | None]:
    out: list[dict[str, Any]] = []
    try:
        out.extend(ops.get("publish.verify")(repo=repo.repo_id, hub=str(repo.root),
                                             ctx=OpContext.of(client_options(server, tmp), notice=lambda _m: None)))
    except InputError as exc:
        return out, exc
    return out, None


def test_a_published_month_verifies_ok(published: Published, news_server: FakeCCServer, tmp_path: Path) -> None:
    repo = _copy(published, tmp_path)
    out, err = _verify(repo, news_server, tmp_path)
    shards = sorted(f.path for f in repo.list_files(f"data/{MONTH}"))
    assert err is None and [r["shard"] for r in out] == shards and {r["verdict"] for r in out} == {"ok"}
    assert sum(r["rows"] for r in out) == published.stats.rows


def test_planted_faults_and_ledger_drift_in_a_news_mirror(published: Published, news_server: FakeCCServer,
                                                         tmp_path: Path) -> None:
    repo = _copy(published, tmp_path)
    shards = sorted(f.path for f in repo.list_files(f"data/{MONTH}"))
    assert len(shards) >= 3
    planted.remove(repo, shards[0])  # the month is complete: its manifest names this archive
    planted.empty(repo, shards[1], arrow_schema())
    planted.wrong_schema(repo, shards[2])
    planted.ledger_drift(repo, MONTH, rows=2, key="month", field="articles")
    out, err = _verify(repo, news_server, tmp_path)
    verdicts = {r["shard"]: r["verdict"] for r in out if r["verdict"] != "ledger"}
    assert [verdicts[s] for s in shards[:3]] == ["missing", "empty", "schema"] and err is not None
    problems = " | ".join(r["detail"] for r in out if r["verdict"] == "ledger")
    assert "files=" in problems and "records=" in problems and "languages.csv adds up to" in problems
    env = cli_env(news_server, tmp_path)
    cli = run_cli(["publish", "verify", "--repo", repo.repo_id, "--hub", str(repo.root), "-o", "csv"], env)
    assert cli.returncode == 1 and b"missing" in cli.stdout and b"publish verify: news: read" in cli.stderr
