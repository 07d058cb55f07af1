"""news publish against the fake CC-NEWS: shards, schema, ledgers, card, resume, and every flag's output."""

from __future__ import annotations

import asyncio
import csv
import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.commoncrawl.news.schema import COLUMNS, arrow_schema
from ccrawl.datasets.news_card import news_card_totals
from ccrawl.datasets.publish_news import NewsPublishStats
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.news import NewsSite

from .conftest import MONTH, Published, client_options


def _csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _publish(server: FakeCCServer, tmp: Path, **kw: Any) -> tuple[list[dict[str, Any]], NewsPublishStats]:
    from ccrawl.ops.news import news_publish

    stats = NewsPublishStats()
    kw.setdefault("hub", str(tmp / "hub"))
    kw.setdefault("staging", str(tmp / "staging"))
    kw.setdefault("workers", 1)
    records = list(news_publish(months=kw.pop("months", MONTH), repo=kw.pop("repo", "t/news"),
                                ctx=OpContext.of(client_options(server, tmp), notice=lambda _m: None), stats=stats,
                                **kw))
    return records, stats


def test_one_shard_per_archive_with_the_seed_schema(published: Published, news_site: NewsSite) -> None:
    snap = published.snapshot
    paths = news_site.months[MONTH]
    shards = sorted((snap / "data/2026/07").glob("*.parquet"))
    assert [s.name for s in shards] == sorted(p.rsplit("/", 1)[1].replace(".warc.gz", ".parquet") for p in paths)
    for shard in shards:
        schema = pq.read_schema(shard)
        assert [(f.name, str(f.type)) for f in schema] == [(f.name, str(f.type)) for f in arrow_schema()]
    assert len(COLUMNS) == 22
    assert str(arrow_schema().field("warc_record_offset").type) == "int64"


def test_rows_match_what_the_fake_wrote(published: Published, news_site: NewsSite) -> None:
    import duckdb

    snap = published.snapshot
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT warc_filename, warc_record_offset, warc_record_length, warc_record_id, fetch_status, "
        f"fetch_redirect, content_digest, content_mime_type, content_languages, url_host_name, content_truncated, "
        f"content_length FROM '{snap}/data/2026/07/*.parquet'"
    ).fetchall()
    truth = {(r["filename"], r["offset"]): r for r in news_site.responses(MONTH)}
    got = {(r[0], r[1]): r for r in rows}
    assert set(got) == set(truth)  # every whole response indexed, nothing else (the cut record is not)
    for key, r in got.items():
        t = truth[key]
        assert r[2] == t["length"] and r[3] == t["record_id"] and r[4] == t["status"]
        assert r[5] == t["redirect"]
        assert r[6] == t["digest"]  # sha1: trimmed; None for the record written without a digest
        assert r[7] == t["mime"]
        assert r[11] == t["body_length"]
        assert r[9] == t["url"].split("/")[2]
    assert any(r[6] is None for r in rows) or all(t["digest"] for t in truth.values())
    assert {r[4] for r in rows} >= {200} and any(300 <= r[4] < 400 for r in rows)
    html = [r for r in rows if r[7] == "text/html" and r[4] == 200]
    assert sum(1 for r in html if r[8]) >= 0.9 * len(html)  # languages detected for the articles
    assert all(r[8] is None for r in rows if r[7] in ("image/jpeg", "application/pdf"))
    assert any(r[10] == "length" for r in rows)


def test_ledgers_and_card_agree_with_the_shards(published: Published) -> None:
    import duckdb

    snap = published.snapshot
    stats = _csv(snap / "stats.csv")
    langs = _csv(snap / "languages.csv")
    assert [s["month"] for s in stats] == [MONTH]
    s = stats[0]
    con = duckdb.connect()
    total, articles = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE fetch_status = 200 AND "
        "content_mime_detected IN ('text/html', 'application/xhtml+xml')) "
        f"FROM '{snap}/data/2026/07/*.parquet'"
    ).fetchone()  # type: ignore[misc]
    assert int(s["records"]) == total and int(s["articles"]) == articles
    assert int(s["files"]) == int(s["files_total"]) == 24 and s["complete"] == "true"
    assert int(s["truncated_files"]) == 1
    assert sum(int(r["articles"]) for r in langs) == articles
    card = (snap / "README.md").read_text()
    head = card.split("---", 2)[1]
    assert "path: data/*/*/*.parquet" in head and ".csv" not in head and ".json" not in head
    totals = news_card_totals(card)
    assert totals["records"] == total and totals["articles"] == articles and totals["complete_months"] == 1


def test_bytes_read_are_the_archive_sizes(published: Published, news_server: FakeCCServer) -> None:
    snap = published.snapshot
    size = sum(p.stat().st_size for p in (news_server.site.root / "crawl-data/CC-NEWS/2026/07").glob("*.warc.gz"))
    assert int(_csv(snap / "stats.csv")[0]["bytes_read"]) == size


def test_every_triple_fetches_its_record(published: Published, news_server: FakeCCServer, tmp_path: Path) -> None:
    """Each (filename, offset, length) of the published month is a ranged GET holding that WARC-Record-ID."""
    import duckdb

    from ccrawl.net.client import CCClient
    from ccrawl.warc.reader import iter_records

    snap = published.snapshot
    rows = duckdb.connect().execute(
        f"SELECT warc_filename, warc_record_offset, warc_record_length, warc_record_id "
        f"FROM '{snap}/data/2026/07/*.parquet'"
    ).fetchall()
    assert len(rows) > 100

    async def check() -> list[str]:
        async with CCClient(**client_options(news_server, tmp_path)) as cc:
            async def one(r: tuple[str, int, int, str]) -> str:
                data = await cc.get_range(cc.data_url(r[0]), r[1], r[2])
                recs = list(iter_records(io.BytesIO(data), name=r[0]))
                assert len(recs) == 1 and recs[0].warc_type == "response"
                return str(recs[0].record_id)

            return list(await asyncio.gather(*(one(r) for r in rows)))

    assert asyncio.run(check()) == [r[3] for r in rows]


def test_resume_is_one_existence_call_and_commits_nothing(published: Published, news_server: FakeCCServer,
                                                          tmp_path: Path) -> None:
    repo = LocalRepo(published.hub, published.repo)
    head = repo.head()
    records, stats = _publish(news_server, tmp_path, hub=str(published.hub), repo=published.repo)
    assert {r["action"] for r in records} == {"exists"} and len(records) == 24
    assert stats.commits == 0 and stats.indexed == 0
    assert repo.head() == head


def test_files_commit_every_keep_private(news_server: FakeCCServer, tmp_path: Path) -> None:
    records, stats = _publish(news_server, tmp_path, files=5, commit_every=2, keep=True, private=True,
                              months="2026/05")
    assert [r["action"] for r in records].count("committed") == 5
    assert stats.commits == 3  # 2 + 2 + 1
    repo = LocalRepo(tmp_path / "hub", "t/news")
    assert repo.is_private()
    assert len(list((repo.snapshot_dir() / "data/2026/05").glob("*.parquet"))) == 5
    kept = list((tmp_path / "staging/data/2026/05").glob("*.parquet"))
    assert len(kept) == 5  # --keep
    stats_csv = _csv(repo.snapshot_dir() / "stats.csv")[0]
    assert stats_csv["files"] == "5" and stats_csv["files_total"] == "24" and stats_csv["complete"] == "false"


def test_without_keep_local_shards_go(news_server: FakeCCServer, tmp_path: Path) -> None:
    _publish(news_server, tmp_path, files=2, months="2026/05")
    assert not list((tmp_path / "staging/data").rglob("*.parquet"))


def test_a_local_copy_of_a_shard_the_hub_has_is_dropped_on_the_next_run(news_server: FakeCCServer,
                                                                         tmp_path: Path) -> None:
    """A run killed between a commit and its local delete leaves the shard behind: the next run's
    plan sees it on the hub and removes it (with --keep it stays)."""
    _publish(news_server, tmp_path, files=2, months="2026/05", keep=True)
    left = sorted((tmp_path / "staging/data").rglob("*.parquet"))
    assert len(left) == 2  # what a kill right after the commit leaves
    records, stats = _publish(news_server, tmp_path, files=2, months="2026/05", keep=True)
    assert [r["action"] for r in records] == ["exists", "exists"]
    assert sorted((tmp_path / "staging/data").rglob("*.parquet")) == left  # --keep keeps them
    records, stats = _publish(news_server, tmp_path, files=2, months="2026/05")
    assert [r["action"] for r in records] == ["exists", "exists"] and stats.commits == 0
    assert not list((tmp_path / "staging/data").rglob("*.parquet"))


def test_no_push_stages_and_a_rerun_reuses_the_sealed_shards(news_server: FakeCCServer, tmp_path: Path) -> None:
    records, stats = _publish(news_server, tmp_path, files=3, commit_every=3, no_push=True, months="2026/06")
    assert [r["action"] for r in records] == ["staged"] * 3
    assert not (tmp_path / "hub").exists()
    commits = list((tmp_path / "staging/commits").iterdir())
    assert len(commits) == 1
    staged = commits[0]
    assert len(list((staged / "data/2026/06").glob("*.parquet"))) == 3
    assert (staged / "stats.csv").read_text().splitlines()[1].startswith("2026/06,3,24,")
    # A real push afterwards reuses the sealed shards instead of streaming the archives again.
    before = len(news_server.faults.requests(r"\.warc\.gz$"))
    records, stats = _publish(news_server, tmp_path, files=3, months="2026/06")
    assert stats.reused == 3 and stats.indexed == 0 and stats.committed == 3
    assert len(news_server.faults.requests(r"\.warc\.gz$")) == before


def test_fake_hub_push(news_server: FakeCCServer, news_site: NewsSite, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The same run through the real huggingface_hub client against the fake Hub, then a search from it."""
    from ccrawl.hub.hfhub import HfRepo
    from ccrawl.testing.fakehub import FakeHub

    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    with FakeHub(tmp_path / "fakehub", page_size=3) as hub:
        records, stats = _publish(news_server, tmp_path, hub="hf", endpoint=hub.url, files=4, commit_every=3,
                                  repo="org/news")
        assert stats.committed == 4 and stats.commits == 2
        repo = HfRepo("org/news", endpoint=hub.url, token="hf_test_token", xet=False)
        names = {f.path for f in repo.list_files("data/2026/07")}
        assert names == {r["file"] for r in records}
        before = hub.faults.requests["paths-info"]
        again, stats2 = _publish(news_server, tmp_path, hub="hf", endpoint=hub.url, files=4, repo="org/news")
        assert {r["action"] for r in again} == {"exists"} and stats2.commits == 0
        assert hub.faults.requests["paths-info"] - before == 1  # the resume is one batched existence call
        # news search over the Hub: one listing, ranged reads of the shards, the partial month reported
        from ccrawl.ops.news import news_search

        first = set(news_site.months[MONTH][:4])
        host = next(r["url"].split("/")[2] for r in news_site.responses(MONTH) if r["filename"] in first)
        said: list[str] = []
        rows = list(news_search(host=host, year=2026, month=7, repo="org/news", hub="hf", endpoint=hub.url,
                                ctx=OpContext.of(client_options(news_server, tmp_path), notice=said.append)))
        want = {(r["filename"], r["offset"]) for r in news_site.responses(MONTH)
                if r["filename"] in first and r["url"].split("/")[2] == host}
        assert {(r["filename"], int(r["offset"])) for r in rows} == want
        assert any("partly indexed: 20 of 24" in s for s in said)


def test_push_without_a_token_exits_4(news_server: FakeCCServer, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from ccrawl.errors import CredentialMissing

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGINGFACE_TOKEN", raising=False)
    with pytest.raises(CredentialMissing):
        _publish(news_server, tmp_path, hub="hf", endpoint="http://127.0.0.1:9", files=1)


def test_low_disk_pauses_then_exits_75(news_server: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.errors import TemporaryFailure

    with pytest.raises(TemporaryFailure, match="free disk"):
        _publish(news_server, tmp_path, files=2, min_free_gb=1e9, max_stall=0.5)
    assert not (tmp_path / "hub/datasets/t/news/data").exists()


def test_a_stall_exits_75(news_server: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.errors import TemporaryFailure

    news_server.faults.latency = 3.0
    try:
        with pytest.raises(TemporaryFailure, match="no archive finished"):
            _publish(news_server, tmp_path, files=1, max_stall=1.0)
    finally:
        news_server.faults.clear()


def test_bad_flags_are_usage_errors(news_server: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.errors import UsageError

    for kw in ({"months": "2026-13"}, {"months": "july"}, {"commit_every": 0}, {"files": -1}, {"months": "2015/01"}):
        with pytest.raises(UsageError):
            _publish(news_server, tmp_path, **kw)


def test_two_publishers_on_one_staging_directory(news_server: FakeCCServer, tmp_path: Path) -> None:
    """The second publisher on a staging directory exits 75 instead of indexing the same shards."""
    import fcntl

    from ccrawl.errors import TemporaryFailure

    (tmp_path / "staging").mkdir()
    with (tmp_path / "staging" / ".news-publish.lock").open("a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(TemporaryFailure, match="one publisher per staging directory"):
            _publish(news_server, tmp_path, files=1)
    assert not (tmp_path / "hub").exists()


def test_an_archive_that_fails_is_named_and_the_run_exits_1(news_server: FakeCCServer, news_site: NewsSite,
                                                            tmp_path: Path) -> None:
    from ccrawl.errors import CcrawlError
    from ccrawl.ops.news import news_publish

    bad = news_site.months["2026/05"][1].rsplit("/", 1)[1]
    news_server.faults.add("status", path=bad + "$", times=-1, status=404)
    records: list[dict[str, Any]] = []
    try:
        with pytest.raises(CcrawlError, match="1 archive"):
            for r in news_publish(months="2026/05", repo="t/news", files=3, hub=str(tmp_path / "hub"),
                                  staging=str(tmp_path / "st"), workers=1,
                                  ctx=OpContext.of(client_options(news_server, tmp_path), notice=lambda _m: None)):
                records.append(r)
    finally:
        news_server.faults.clear()
    actions = {r["source"].rsplit("/", 1)[1]: r["action"] for r in records}
    assert actions[bad].startswith("failed") and "404" in actions[bad]
    assert sorted(a for n, a in actions.items() if n != bad) == ["committed", "committed"]
    snap = LocalRepo(tmp_path / "hub", "t/news").snapshot_dir()
    assert _csv(snap / "stats.csv")[0]["files"] == "2"


def test_publishing_says_how_far_it_got_as_archives_end(published: Published, news_site: NewsSite) -> None:
    import re

    lines = [n for n in published.notices if re.match(r"news publish: \d+/\d+ archives", n)]
    assert lines, published.notices
    total = len(news_site.months[MONTH])  # one archive a job: the month's WARC files
    assert re.fullmatch(rf"news publish: {total}/{total} archives \(100\.0%\), [0-9.]+/min, ETA 0s, \S+ elapsed",
                        lines[-1]), lines[-1]
