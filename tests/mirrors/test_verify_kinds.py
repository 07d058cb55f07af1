"""``publish verify --graph`` (the domain mirror) and ``publish verify --repo`` of a recrawl dataset: every
planted fault gets its verdict, the ledgers are reconciled, and the exit status says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.datasets.domain_table import domain_schema
from ccrawl.datasets.publish_domains import shard_path
from ccrawl.errors import InputError, UsageError
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakehub import planted

from .conftest import cli_env, client_options, run_cli

QUIET = OpContext(notice=lambda _m: None)  # the operations' lines, unwanted here

REPO = "verify/domains"
RELEASE = "cc-main-2025-sep-oct-nov"


def _publish(server: FakeCCServer, tmp: Path) -> list[dict[str, Any]]:
    return list(ops.get("domains.publish")(graph=RELEASE, repo=REPO, hub=str(tmp / "hub"), staging=str(tmp / "st"),
                                           shard_rows=7, commit_every=8, ctx=OpContext.of(client_options(server, tmp),
                                                                                          notice=lambda _m: None)))


def _verify(tmp: Path, **kw: Any) -> tuple[list[dict[str, Any]], InputError | None, list[Any]]:
    out: list[dict[str, Any]] = []
    reports: list[Any] = []
    err = None
    args: dict[str, Any] = {"graph": RELEASE, "repo": REPO, "hub": str(tmp / "hub"), "ctx": QUIET,
                            "check_source": False, "report": reports}
    args.update(kw)
    try:
        out.extend(ops.get("publish.verify")(**args))
    except InputError as exc:
        err = exc
    return out, err, reports


@pytest.fixture
def mirror(mirrorcc: FakeCCServer, tmp_path: Path) -> LocalRepo:
    _publish(mirrorcc, tmp_path)
    return LocalRepo(tmp_path / "hub", REPO)


def test_a_clean_release_verifies_ok_reading_a_fraction(mirror: LocalRepo, tmp_path: Path) -> None:
    out, err, reports = _verify(tmp_path)
    assert err is None and [r["shard"] for r in out] == [shard_path(RELEASE, i) for i in range(5)]
    assert {r["verdict"] for r in out} == {"ok"} and sum(r["rows"] for r in out) == 33
    assert 0 < reports[0].bytes_read < reports[0].dataset_bytes


def test_every_planted_fault_in_a_release_gets_its_verdict(mirror: LocalRepo, tmp_path: Path) -> None:
    s = [shard_path(RELEASE, i) for i in range(5)]
    planted.truncate(mirror, s[0])
    planted.wrong_schema(mirror, s[1])
    planted.empty(mirror, s[2], domain_schema())
    planted.garbage(mirror, s[3])
    planted.remove(mirror, s[4])  # the last: only the ledger's count says it should be there
    out, err, _ = _verify(tmp_path)
    verdicts = {r["shard"]: r["verdict"] for r in out}
    assert [verdicts[p] for p in s] == ["truncated", "schema", "empty", "unreadable", "missing"]
    assert isinstance(err, InputError) and "domains publish" in str(err)
    assert any(r["verdict"] == "ledger" and r["shard"] == f"{RELEASE}/stats.csv" for r in out)


def test_drift_and_bad_pages(mirror: LocalRepo, tmp_path: Path) -> None:
    planted.ledger_drift(mirror, RELEASE, rows=3, key="release")
    out, err, _ = _verify(tmp_path)
    assert {r["verdict"] for r in out if r["verdict"] != "ledger"} == {"ok"} and err is not None
    assert [r["detail"] for r in out if r["verdict"] == "ledger"] == [
        f"{RELEASE}: stats.csv says rows=36, the hub holds 33"]
    ops_recount = list(ops.get("domains.recount")(repo=REPO, hub=str(tmp_path / "hub"), ctx=QUIET))
    assert ops_recount == [{"release": RELEASE, "field": "rows", "was": 36, "now": 33}]
    planted.bad_page(mirror, shard_path(RELEASE, 2))
    footer_only, err2, _ = _verify(tmp_path)
    assert err2 is None and {r["verdict"] for r in footer_only} == {"ok"}  # a bad page needs --sample
    sampled, err3, _ = _verify(tmp_path, sample=2)
    assert {r["shard"]: r["verdict"] for r in sampled}[shard_path(RELEASE, 2)] == "corrupt" and err3 is not None


def test_repair_drops_the_bad_shards_and_domains_publish_rebuilds_them(mirrorcc: FakeCCServer, mirror: LocalRepo,
                                                                       tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    before = {f.path: f.etag for f in mirror.list_files("data")}
    bad = shard_path(RELEASE, 1)
    planted.truncate(mirror, bad)
    head = mirror.head()
    _, err, reports = _verify(tmp_path, repair=True, no_push=True)
    assert err is not None and reports[0].repaired == [] and mirror.head() == head  # --no-push: only said
    _, err, reports = _verify(tmp_path, repair=True)
    assert err is None and reports[0].repaired == [bad]
    assert bad not in {f.path for f in mirror.list_files("data")}
    assert "false" in (mirror.read_text("stats.csv") or "")  # no longer complete
    records = _publish(mirrorcc, tmp_path)
    assert [r["shard"] for r in records if r["action"] == "committed"] == [bad]
    assert {f.path: f.etag for f in mirror.list_files("data")} == before  # rebuilt byte for byte
    out, err, _ = _verify(tmp_path)
    assert err is None and {r["verdict"] for r in out} == {"ok"}
    assert pq.read_table(mirror.snapshot_dir() / bad).num_rows == 7


def test_cli_graph_exit_codes_json_and_no_access(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.testing.fakehub import FakeHub

    with FakeHub(tmp_path / "fakehub", page_size=3) as hub:
        env = cli_env(mirrorcc, tmp_path) | {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token"}
        done = run_cli(["domains", "publish", "--graph", RELEASE, "--repo", REPO, "--hub", "hf", "--private",
                        "--shard-rows", "10", "--staging", str(tmp_path / "st")], env)
        assert done.returncode == 0, done.stderr.decode()
        args = ["publish", "verify", "--graph", RELEASE, "--repo", REPO, "--hub", "hf", "--json"]
        ok = run_cli(args, env)
        assert ok.returncode == 0, ok.stderr.decode()
        doc = json.loads(ok.stdout)
        assert doc["ok"] and doc["graph"] == RELEASE and doc["verdicts"] == {"ok": 4}
        from ccrawl.hub.hfhub import HfRepo

        planted.truncate(HfRepo(REPO, endpoint=hub.url, token="hf_test_token"), shard_path(RELEASE, 3))
        bad = run_cli(args, env)
        assert bad.returncode == 1 and json.loads(bad.stdout)["verdicts"]["truncated"] == 1
        del env["HF_TOKEN"]
        denied = run_cli(args, env)
        assert denied.returncode != 0 and set(json.loads(denied.stdout)["verdicts"]) == {"no-access"}
        both = run_cli(["publish", "verify", "--graph", RELEASE, "-c", "CC-MAIN-2025-26", "--hub", "hf"], env)
        assert both.returncode == 2 and b"give one" in both.stderr


# -- recrawl datasets ----------------------------------------------------------------------------------


def _recrawl(tmp: Path) -> tuple[LocalRepo, list[str]]:
    from ccrawl.datasets.publish_recrawl import PublishOptions, publish
    from tests.datasets.capture_shards import capture_rows, write_shard

    cap = tmp / "cap"
    for i in range(4):
        write_shard(cap, f"part-{i:05d}", capture_rows(i * 10, 10))
    repo = LocalRepo(tmp / "hub", "verify/recrawl")
    publish(PublishOptions(cap, repo_id=repo.repo_id, server="s1", shard=0, shards=1, commit_every=2), repo)
    return repo, sorted(f.path for f in repo.list_files("data"))


def _verify_repo(repo: LocalRepo, **kw: Any) -> tuple[list[dict[str, Any]], InputError | None]:
    out: list[dict[str, Any]] = []
    try:
        out.extend(ops.get("publish.verify")(repo=repo.repo_id, hub=str(repo.root), check_source=False,
                                             ctx=QUIET, **kw))
    except InputError as exc:
        return out, exc
    return out, None


def test_a_recrawl_dataset_is_recognised_and_verified_against_its_ledgers(tmp_path: Path) -> None:
    repo, shards = _recrawl(tmp_path)
    out, err = _verify_repo(repo)
    assert err is None and [r["shard"] for r in out] == shards and {r["verdict"] for r in out} == {"ok"}
    assert sum(r["rows"] for r in out) == 40
    a, b, c, _ = shards
    planted.truncate(repo, a)
    planted.remove(repo, b)
    planted.wrong_schema(repo, c)
    stray = repo.read_range(shards[3], 0, {f.path: f.size for f in repo.list_files("data")}[shards[3]])
    repo.commit([Add("data/s9-shard0of1-000000000000.parquet", stray)], message="plant: a shard no ledger counts")
    out, err = _verify_repo(repo)
    verdicts = {r["shard"]: r["verdict"] for r in out if r["verdict"] != "ledger"}
    assert (verdicts[a], verdicts[b], verdicts[c]) == ("truncated", "missing", "schema") and err is not None
    problems = [r["detail"] for r in out if r["verdict"] == "ledger"]
    assert any(a in p and "sha256" in p for p in problems)  # the content changed after its commit
    assert any("counted by no ledger" in p for p in problems)
    with pytest.raises(UsageError, match="recrawl publish"):
        _verify_repo(repo, repair=True)


def test_the_older_capture_shape_is_accepted_and_an_unknown_repo_refused(tmp_path: Path) -> None:
    import pyarrow as pa

    from ccrawl.datasets.verify import check_shard
    from ccrawl.datasets.verify_kinds import capture_schemas

    repo, shards = _recrawl(tmp_path)
    files = {f.path: f for f in repo.list_files("data")}
    table = pa.table({n: pa.array([], t) for n, t in zip(capture_schemas()[1].names, capture_schemas()[1].types,
                                                         strict=True)})
    planted.empty(repo, shards[0], table.schema)
    got = check_shard(repo, next(f for f in repo.list_files("data") if f.path == shards[0]), capture_schemas())
    assert got.verdict == "empty"  # not "schema": the shape before the text columns is still the dataset's
    assert check_shard(repo, files[shards[1]], capture_schemas()).verdict == "ok"
    other = LocalRepo(tmp_path / "hub", "verify/other")
    other.create()
    other.commit([Add("notes.txt", b"hi")], message="not a mirror")
    with pytest.raises(UsageError, match="not a ccrawl mirror"):
        _verify_repo(other)
