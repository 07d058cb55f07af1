"""``urls publish|recount`` against the fake Common Crawl's cc-index-table, on a local hub and the fake Hub."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.datasets.publish_urls import URL_COLUMNS, UrlsPublishStats, shard_path
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.columnar import part_paths
from ccrawl.testing.fakehub import planted

from .conftest import CRAWL, cli_env, client_options, run_cli

QUIET = OpContext(notice=lambda _m: None)  # the operations' lines, unwanted here

REPO = "mirror/urls"


def publish(server: FakeCCServer, tmp: Path, **kw: Any) -> tuple[list[dict[str, Any]], UrlsPublishStats]:
    stats = UrlsPublishStats()
    args: dict[str, Any] = {"crawl": CRAWL, "repo": REPO, "hub": str(tmp / "hub"), "staging": str(tmp / "staging"),
                            "commit_every": 1}
    args.update(kw)
    args["ctx"] = OpContext.of(client_options(server, tmp), notice=args.pop("notice", lambda _m: None))
    rows = list(ops.get("urls.publish")(stats=stats, **args))
    return rows, stats


def source_parts(server: FakeCCServer, crawl: str = CRAWL) -> list[Path]:
    return [p for p in part_paths(server.site.root) if f"crawl={crawl}/subset=warc/" in str(p)]


def test_one_shard_per_source_part_rows_and_order_unchanged(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    import duckdb
    import pyarrow.parquet as pq

    records, stats = publish(mirrorcc, tmp_path)
    parts = source_parts(mirrorcc)
    assert len(parts) >= 2
    assert sorted(r["shard"] for r in records) == sorted(shard_path(CRAWL, str(p)) for p in parts)
    assert all(r["action"] == "committed" for r in records)
    repo = LocalRepo(tmp_path / "hub", REPO)
    snap = repo.snapshot_dir()
    total = 0
    for p in parts:
        shard = snap / shard_path(CRAWL, str(p))
        got = pq.read_table(shard)
        want = pq.read_table(p, columns=list(URL_COLUMNS))
        assert got.column_names == list(URL_COLUMNS)
        assert got.to_pylist() == want.to_pylist()  # same rows, same order
        assert pq.ParquetFile(shard).num_row_groups == pq.ParquetFile(p).num_row_groups
        total += want.num_rows
    ledger = list(csv.DictReader(io.StringIO((snap / "stats.csv").read_text())))
    assert ledger == [{"crawl": CRAWL, "parts": str(len(parts)), "shards": str(len(parts)), "rows": str(total),
                       "bytes": str(sum(f.size for f in repo.list_files("data"))), "complete": "true"}]
    card = (snap / "README.md").read_text()
    front = card.split("---")[1]
    assert "data/*/*.parquet" in front and f"data/{CRAWL}/*.parquet" in front
    assert ".csv" not in front and "README" not in front  # only Parquet is declared as data
    assert f"| {CRAWL} | {len(parts)} |" in card
    n = duckdb.connect().execute(f"SELECT count(*) FROM '{snap}/data/{CRAWL}/*.parquet'").fetchone()
    assert n is not None and n[0] == total == stats.rows
    assert not list((tmp_path / "staging").rglob("*.parquet"))  # deleted once committed


def test_the_mirror_loads_with_datasets(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="the datasets library is an optional extra")
    publish(mirrorcc, tmp_path)
    snap = LocalRepo(tmp_path / "hub", REPO).snapshot_dir()
    ds = datasets.load_dataset("parquet", data_files=str(snap / f"data/{CRAWL}/*.parquet"), split="train",
                               cache_dir=str(tmp_path / "hfcache"))
    assert ds.column_names == list(URL_COLUMNS)
    assert len(ds) == sum(1 for p in source_parts(mirrorcc) for _ in range(__import__("pyarrow.parquet").parquet
                                                                             .read_metadata(p).num_rows))


def test_rerun_is_idempotent_from_the_hub(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    publish(mirrorcc, tmp_path, commit_every=16)
    repo = LocalRepo(tmp_path / "hub", REPO)
    head = repo.head()
    records, stats = publish(mirrorcc, tmp_path)
    assert {r["action"] for r in records} == {"exists"}
    assert stats.converted == 0 and stats.commits == 0
    assert repo.head() == head


def test_ranged_reads_move_fewer_bytes_than_whole_and_give_the_same_shards(mirrorcc: FakeCCServer,
                                                                          tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    _, ranged = publish(mirrorcc, tmp_path / "a", keep=True)
    _, whole = publish(mirrorcc, tmp_path / "b", whole=True, keep=True)
    part_bytes = sum(p.stat().st_size for p in source_parts(mirrorcc))
    assert whole.source_bytes_read >= part_bytes
    assert ranged.source_bytes_read < whole.source_bytes_read
    for p in source_parts(mirrorcc):
        rel = shard_path(CRAWL, str(p))
        a = pq.read_table(LocalRepo(tmp_path / "a/hub", REPO).snapshot_dir() / rel)
        b = pq.read_table(LocalRepo(tmp_path / "b/hub", REPO).snapshot_dir() / rel)
        assert a.equals(b)
    assert list((tmp_path / "a/staging").rglob("*.parquet"))  # --keep kept them


def test_no_push_stages_the_commit_and_leaves_the_hub_alone(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    records, _ = publish(mirrorcc, tmp_path, no_push=True, commit_every=16)
    assert {r["action"] for r in records} == {"staged"}
    assert not LocalRepo(tmp_path / "hub", REPO).exists_repo()
    commits = list((tmp_path / "staging/commits").iterdir())
    assert len(commits) == 1
    manifest = json.loads((commits[0] / "commit.json").read_text())
    assert "stats.csv" in manifest["adds"] and "README.md" in manifest["adds"]
    assert sum(a.endswith(".parquet") for a in manifest["adds"]) == len(source_parts(mirrorcc))


def test_a_shard_sealed_by_a_killed_run_is_reused(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    publish(mirrorcc, tmp_path, no_push=True)  # leaves sealed shards in staging
    records, stats = publish(mirrorcc, tmp_path)
    assert stats.reused == len(source_parts(mirrorcc)) and stats.converted == 0
    assert {r["action"] for r in records} == {"committed"}


def test_recount_repairs_drifted_totals(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    publish(mirrorcc, tmp_path)
    repo = LocalRepo(tmp_path / "hub", REPO)
    good = repo.read_text("stats.csv")
    planted.ledger_drift(repo, CRAWL, rows=777)
    assert repo.read_text("stats.csv") != good
    out = list(ops.get("urls.recount")(repo=REPO, hub=str(tmp_path / "hub"), ctx=QUIET))
    assert len(out) == 1 and out[0]["field"] == "rows" and out[0]["was"] - out[0]["now"] == 777
    assert repo.read_text("stats.csv") == good
    assert list(ops.get("urls.recount")(repo=REPO, hub=str(tmp_path / "hub"), ctx=QUIET)) == []


def test_cli_publish_and_recount(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    env = cli_env(mirrorcc, tmp_path)
    hub = str(tmp_path / "hub")
    done = run_cli(["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", hub, "--commit-every", "1",
                    "--workers", "2", "--staging", str(tmp_path / "st"), "-o", "jsonl"], env)
    assert done.returncode == 0, done.stderr.decode()
    rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(rows) == len(source_parts(mirrorcc)) and {r["action"] for r in rows} == {"committed"}
    bad = run_cli(["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", hub, "--commit-every", "0"], env)
    assert bad.returncode == 2 and b"--commit-every" in bad.stderr and b"Traceback" not in bad.stderr
    again = run_cli(["urls", "recount", "--repo", REPO, "--hub", hub, "-o", "jsonl"], env)
    assert again.returncode == 0 and again.stdout == b"" and b"agrees with the hub" in again.stderr


def test_publish_to_the_fake_hub_and_a_push_without_token(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.hub.hfhub import HfRepo
    from ccrawl.testing.fakehub import FakeHub

    with FakeHub(tmp_path / "fakehub", page_size=3) as hub:
        env = cli_env(mirrorcc, tmp_path) | {"HF_ENDPOINT": hub.url, "CCRAWL_HF_ENDPOINT": hub.url}
        no_token = run_cli(["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", "hf"], env)
        assert no_token.returncode == 4 and b"HF_TOKEN" in no_token.stderr
        env["HF_TOKEN"] = "hf_test_token"
        done = run_cli(["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", "hf", "--private",
                        "--staging", str(tmp_path / "st"), "-o", "jsonl"], env)
        assert done.returncode == 0, done.stderr.decode()
        repo = HfRepo(REPO, endpoint=hub.url, token="hf_test_token", xet=False)
        assert sorted(f.path for f in repo.list_files("data")) == sorted(
            shard_path(CRAWL, str(p)) for p in source_parts(mirrorcc))
        assert hub.local_repo(REPO).is_private()


def test_recrawl_work_list_reads_the_mirror_ccrawl_published(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from ccrawl.recrawl.worklist import open_worklist

    publish(mirrorcc, tmp_path, repo="open-index/ccrawl-urls", crawl=f"{CRAWL},CC-MAIN-2025-13", commit_every=8)
    work = open_worklist("urls", hub=str(tmp_path / "hub"))
    assert work.identity()["source"] == f"hub:open-index/ccrawl-urls/data/{CRAWL}"  # the newest crawl
    got = [u for i in range(len(work.parts())) for _, u in work.iter_rows(i)]
    want = [u for p in source_parts(mirrorcc) for u in pq.read_table(p, columns=["url"]).column(0).to_pylist()]
    assert got == want and got


def test_commit_every_batches_shards(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    both = f"{CRAWL},CC-MAIN-2025-13"
    _, one = publish(mirrorcc, tmp_path / "a", crawl=both, commit_every=1)
    _, many = publish(mirrorcc, tmp_path / "b", crawl=both, commit_every=16)
    assert one.committed == many.committed >= 4
    assert one.commits == one.committed and many.commits == 1


def test_min_free_gb_pauses_then_max_stall_exits_75(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    env = cli_env(mirrorcc, tmp_path)
    args = ["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", str(tmp_path / "hub"),
            "--staging", str(tmp_path / "st")]
    low = run_cli([*args, "--min-free-gb", "1000000", "--max-stall", "1s"], env)
    assert low.returncode == 75 and b"free disk under" in low.stderr and b"Traceback" not in low.stderr
    assert not LocalRepo(tmp_path / "hub", REPO).list_files("data")
    mirrorcc.faults.latency = 3.0
    try:
        slow = run_cli([*args, "--max-stall", "1s", "--workers", "1"], env)
    finally:
        mirrorcc.faults.latency = 0.0
    assert slow.returncode == 75 and b"Traceback" not in slow.stderr, slow.stderr.decode()
