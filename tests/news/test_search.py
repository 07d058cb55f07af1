"""news search: the index path and the archive scan agree, say which path they took, and pipe into fetch."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.news.search import SearchReport
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.news import NewsSite

from .conftest import MONTH, Published, cli_env, client_options, run_cli


def _search(server: FakeCCServer, tmp: Path, host: str, published: Published | None, **kw: Any
            ) -> tuple[list[dict[str, Any]], SearchReport, list[str]]:
    from ccrawl.ops.news import news_search

    said: list[str] = []
    report = SearchReport()
    hub = str(published.hub) if published else str(tmp / "nohub")
    repo = published.repo if published else "none/none"
    rows = list(news_search(host=host, year=2026, month=7, repo=repo, hub=hub, report=report,
                            ctx=OpContext.of(client_options(server, tmp), notice=said.append), **kw))
    return rows, report, said


def _hosts(site: NewsSite) -> Counter[str]:
    return Counter(r["url"].split("/")[2] for r in site.responses(MONTH))


def test_index_and_scan_give_the_same_rows(published: Published, news_server: FakeCCServer, news_site: NewsSite,
                                           tmp_path: Path) -> None:
    host, _ = _hosts(news_site).most_common(1)[0]
    from_index, rep_i, said_i = _search(news_server, tmp_path, host, published)
    from_scan, rep_s, said_s = _search(news_server, tmp_path, host, published, no_index=True)
    assert from_index and from_index == from_scan
    assert rep_i.path == "index" and rep_s.path == "scan"
    assert any("reading the index" in s for s in said_i)
    assert any("scanning 24 archive(s)" in s and "--no-index" in s for s in said_s)
    assert {r["url"].split("/")[2] for r in from_index} == {host}
    truth = {(r["filename"], r["offset"]) for r in news_site.responses(MONTH) if r["url"].split("/")[2] == host}
    assert {(r["filename"], int(r["offset"])) for r in from_index} == truth


def test_a_registered_domain_matches_its_subdomains(published: Published, news_server: FakeCCServer,
                                                    news_site: NewsSite, tmp_path: Path) -> None:
    hosts = _hosts(news_site)
    sub = next(h for h in hosts if h.count(".") >= 2 and h.startswith("www."))
    rows, _, _ = _search(news_server, tmp_path, sub[4:], published)
    assert {r["url"].split("/")[2] for r in rows} >= {sub}


def test_a_host_in_no_shard_reads_only_the_host_column(published: Published, news_server: FakeCCServer,
                                                       tmp_path: Path) -> None:
    rows, rep, said = _search(news_server, tmp_path, "no-such-publisher.example", published)
    assert rows == [] and rep.shards == 24 and rep.shards_opened == 0
    assert any("0 match(es)" in s for s in said)


def test_limit(published: Published, news_server: FakeCCServer, news_site: NewsSite, tmp_path: Path) -> None:
    host, n = _hosts(news_site).most_common(1)[0]
    assert n >= 2
    rows, _, _ = _search(news_server, tmp_path, host, published, limit=1)
    assert len(rows) == 1
    rows, _, _ = _search(news_server, tmp_path, host, published, limit=1, no_index=True)
    assert len(rows) == 1


def test_an_unindexed_month_is_scanned_and_says_so(news_server: FakeCCServer, news_site: NewsSite,
                                                   tmp_path: Path) -> None:
    host, _ = _hosts(news_site).most_common(1)[0]
    rows, rep, said = _search(news_server, tmp_path, host, None)
    assert rep.path == "scan" and rows
    assert any("not indexed" in s or "cannot read the index" in s for s in said)


def test_a_partly_published_month_reports_the_shortfall(published: Published, news_server: FakeCCServer,
                                                        news_site: NewsSite, tmp_path: Path) -> None:
    # A hub holding only some of the month's shards: copy 10 of them into a fresh local repo.
    src = published.snapshot
    part = LocalRepo(tmp_path / "parthub", published.repo)
    part.create()
    from ccrawl.hub.repo import Add

    shards = sorted((src / "data/2026/07").glob("*.parquet"))[:10]
    part.commit([Add(f"data/2026/07/{p.name}", p) for p in shards], message="part")
    partial = Published(tmp_path / "parthub", published.repo, MONTH, [], {})
    host = "no-such-publisher.example"
    _rows, rep, said = _search(news_server, tmp_path, host, partial)
    assert rep.path == "index" and rep.shards == 10 and len(rep.missing) == 14
    assert any("partly indexed: 14 of 24" in s for s in said)


def test_search_then_fetch_pipeline(published: Published, news_server: FakeCCServer, news_site: NewsSite,
                                    tmp_path: Path) -> None:
    """``news search HOST -o jsonl | ccrawl fetch -`` fetches the articles the index points at."""
    host, _ = _hosts(news_site).most_common(1)[0]
    env = cli_env(news_server, tmp_path)
    found = run_cli(["news", "search", host, "--year", "2026", "--month", "7", "--repo", published.repo,
                     "--hub", str(published.hub), "-o", "jsonl"], env)
    assert found.returncode == 0, found.stderr.decode()
    assert b"reading the index" in found.stderr
    lines = found.stdout.decode().splitlines()
    assert lines
    fetched = run_cli(["fetch", "-", "-o", "jsonl"], env, stdin=found.stdout)
    assert fetched.returncode == 0, fetched.stderr.decode()
    out = [json.loads(x) for x in fetched.stdout.decode().splitlines()]
    assert len(out) == len(lines)
    assert all(host in json.dumps(o) for o in out)


def test_cli_errors(news_server: FakeCCServer, tmp_path: Path) -> None:
    env = cli_env(news_server, tmp_path)
    bad = run_cli(["news", "search", "example.com", "--year", "2026", "--month", "13"], env)
    assert bad.returncode == 2 and b"month" in bad.stderr and b"Traceback" not in bad.stderr
    missing = run_cli(["news", "list", "--year", "2020", "--month", "1"], env)
    assert missing.returncode == 3 and b"no manifest for 2020/01" in missing.stderr


def test_list_and_download(news_server: FakeCCServer, news_site: NewsSite, tmp_path: Path) -> None:
    env = cli_env(news_server, tmp_path)
    listed = run_cli(["news", "list", "--year", "2026", "--month", "6", "-o", "jsonl"], env)
    assert listed.returncode == 0
    assert [json.loads(x)["path"] for x in listed.stdout.decode().splitlines()] == news_site.months["2026/06"]
    out = tmp_path / "dl"
    got = run_cli(["news", "download", "--year", "2026", "--month", "6", "--files", "2", "--out-dir", str(out),
                   "-o", "jsonl"], env)
    assert got.returncode == 0, got.stderr.decode()
    rows = [json.loads(x) for x in got.stdout.decode().splitlines()]
    assert len(rows) == 2 and all(r["status"] == "downloaded" and len(r["sha256"]) == 64 for r in rows)
    for r in rows:
        assert Path(r["file"]).read_bytes() == (news_server.site.root / r["path"]).read_bytes()


@pytest.mark.parametrize("bad", ["", "http://", "a b"])
def test_bad_host(bad: str) -> None:
    from ccrawl.commoncrawl.news.search import normalize_host
    from ccrawl.errors import UsageError

    with pytest.raises(UsageError):
        normalize_host(bad)


def test_a_broken_shard_is_skipped_and_reported(published: Published, news_server: FakeCCServer,
                                                 news_site: NewsSite, tmp_path: Path) -> None:
    from ccrawl.hub.repo import Add

    src = published.snapshot
    repo = LocalRepo(tmp_path / "badhub", published.repo)
    repo.create()
    shards = sorted((src / "data/2026/07").glob("*.parquet"))
    adds = [Add(f"data/2026/07/{p.name}", p) for p in shards[1:]]
    adds.append(Add(f"data/2026/07/{shards[0].name}", b"this is not parquet at all" * 100))
    repo.commit(adds, message="one broken shard")
    bad = Published(tmp_path / "badhub", published.repo, MONTH, [], {})
    host, _ = _hosts(news_site).most_common(1)[0]
    rows, rep, said = _search(news_server, tmp_path, host, bad)
    assert len(rep.unreadable) == 1 and shards[0].name in rep.unreadable[0]
    assert any("unreadable shard" in s and "partial" in s for s in said)
    broken = news_site.months[MONTH][0]
    assert {r["filename"] for r in rows} <= set(news_site.months[MONTH]) - {broken}
