"""``publish verify`` finds every planted fault with the right verdict; ``--repair`` rebuilds; delete-obsolete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.datasets.publish_urls import shard_path, url_schema
from ccrawl.errors import InputError, UsageError
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.columnar import part_paths
from ccrawl.testing.fakehub import planted

from .conftest import CRAWL, cli_env, client_options, run_cli

QUIET = OpContext(notice=lambda _m: None)  # the operations' lines, unwanted here

REPO = "mirror/urls"
OTHER = "CC-MAIN-2025-13"


def _publish(server: FakeCCServer, tmp: Path) -> LocalRepo:
    list(ops.get("urls.publish")(crawl=f"{CRAWL},{OTHER}", repo=REPO, hub=str(tmp / "hub"),
                                 staging=str(tmp / "staging"), commit_every=4,
                                 ctx=OpContext.of(client_options(server, tmp), notice=lambda _m: None)))
    return LocalRepo(tmp / "hub", REPO)


def _verify(server: FakeCCServer, tmp: Path, crawl: str = CRAWL, **kw: Any) -> tuple[list[dict[str, Any]], Any]:
    out: list[dict[str, Any]] = []
    reports: list[Any] = []
    err = None
    try:
        for rec in ops.get("publish.verify")(crawl=crawl, repo=REPO, hub=str(tmp / "hub"),
                                             ctx=OpContext.of(client_options(server, tmp), notice=lambda _m: None),
                                             staging=str(tmp / "repair"), report=reports, **kw):
            out.append(rec)
    except InputError as exc:
        err = exc
    return out, (err, reports)


def _shards(server: FakeCCServer, crawl: str) -> list[str]:
    return sorted(shard_path(crawl, str(p)) for p in part_paths(server.site.root)
                  if f"crawl={crawl}/subset=warc/" in str(p))


@pytest.fixture
def mirror(mirrorcc: FakeCCServer, tmp_path: Path) -> LocalRepo:
    return _publish(mirrorcc, tmp_path)


def test_a_clean_mirror_verifies_ok(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    out, (err, reports) = _verify(mirrorcc, tmp_path)
    assert err is None
    assert [r["shard"] for r in out] == _shards(mirrorcc, CRAWL)
    assert {r["verdict"] for r in out} == {"ok"}
    ledger = {line.split(",")[0]: line.split(",") for line in (mirror.read_text("stats.csv") or "").splitlines()}
    assert sum(r["rows"] for r in out) == int(ledger[CRAWL][3])
    rep = reports[0]
    assert 0 < rep.bytes_read < rep.dataset_bytes
    sampled, (err2, reps2) = _verify(mirrorcc, tmp_path, sample=5)
    assert err2 is None and {r["verdict"] for r in sampled} == {"ok"}
    assert reps2[0].bytes_read > rep.bytes_read  # --sample reads pages, not only footers


def test_every_planted_fault_gets_its_verdict(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    a, b = _shards(mirrorcc, CRAWL)[:2]
    c, d = _shards(mirrorcc, OTHER)[:2]
    planted.truncate(mirror, a)
    planted.wrong_schema(mirror, b)
    planted.empty(mirror, c, url_schema())
    planted.remove(mirror, d)
    out, (err, _) = _verify(mirrorcc, tmp_path)
    assert isinstance(err, InputError) and "--repair" in str(err)
    verdicts = {r["shard"]: r["verdict"] for r in out}
    assert verdicts[a] == "truncated" and verdicts[b] == "schema"
    assert any(r["verdict"] == "ledger" for r in out)  # the shards changed under the ledger
    out2, (err2, _) = _verify(mirrorcc, tmp_path, crawl=OTHER)
    verdicts2 = {r["shard"]: r["verdict"] for r in out2}
    assert verdicts2[c] == "empty" and verdicts2[d] == "missing" and err2 is not None


def test_garbage_is_unreadable(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    a = _shards(mirrorcc, CRAWL)[0]
    planted.garbage(mirror, a)
    out, (err, _) = _verify(mirrorcc, tmp_path)
    assert {r["shard"]: r["verdict"] for r in out}[a] == "unreadable" and err is not None


def test_bad_pages_need_sample_and_drift_fails_even_when_shards_pass(mirrorcc: FakeCCServer, mirror: LocalRepo,
                                                                     tmp_path: Path) -> None:
    planted.ledger_drift(mirror, CRAWL, rows=5)
    out, (err, _) = _verify(mirrorcc, tmp_path)
    assert {r["verdict"] for r in out if r["verdict"] != "ledger"} == {"ok"}
    ledger = [r for r in out if r["verdict"] == "ledger"]
    assert len(ledger) == 1 and "rows" in ledger[0]["detail"] and err is not None
    b = _shards(mirrorcc, CRAWL)[1]
    planted.bad_page(mirror, b)
    footer_only, _ = _verify(mirrorcc, tmp_path)
    assert {r["shard"]: r["verdict"] for r in footer_only}[b] == "ok"
    sampled, _ = _verify(mirrorcc, tmp_path, sample=3)
    assert {r["shard"]: r["verdict"] for r in sampled}[b] == "corrupt"


def test_repair_rebuilds_from_the_source_part(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    before = {f.path: f.etag for f in mirror.list_files("data")}
    a, b = _shards(mirrorcc, CRAWL)[:2]
    planted.truncate(mirror, a)
    planted.remove(mirror, b)
    _out, (err, reports) = _verify(mirrorcc, tmp_path, repair=True)
    assert err is None and sorted(reports[0].repaired) == [a, b]
    after, (err2, _) = _verify(mirrorcc, tmp_path)
    assert err2 is None and {r["verdict"] for r in after} == {"ok"}
    now = {f.path: f.etag for f in mirror.list_files("data")}
    assert now[a] == before[a] and now[b] == before[b]  # rebuilt byte for byte


def test_no_access_on_a_private_repo_read_without_token(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    from ccrawl.testing.fakehub import FakeHub

    with FakeHub(tmp_path / "fakehub", page_size=3) as hub:
        env = cli_env(mirrorcc, tmp_path) | {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token"}
        done = run_cli(["urls", "publish", "-c", CRAWL, "--repo", REPO, "--hub", "hf", "--private",
                        "--staging", str(tmp_path / "st")], env)
        assert done.returncode == 0, done.stderr.decode()
        ok = run_cli(["publish", "verify", "-c", CRAWL, "--repo", REPO, "--hub", "hf", "--json"], env)
        assert ok.returncode == 0, ok.stderr.decode()
        doc = json.loads(ok.stdout)
        assert doc["ok"] and doc["verdicts"] == {"ok": len(_shards(mirrorcc, CRAWL))}
        assert 0 < doc["bytes_read"] < doc["dataset_bytes"]
        del env["HF_TOKEN"]
        denied = run_cli(["publish", "verify", "-c", CRAWL, "--repo", REPO, "--hub", "hf", "--json"], env)
        assert denied.returncode != 0
        doc = json.loads(denied.stdout)
        assert not doc["ok"] and set(doc["verdicts"]) == {"no-access"}


def test_cli_verify_exit_codes_and_table(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    env = cli_env(mirrorcc, tmp_path)
    args = ["publish", "verify", "-c", CRAWL, "--repo", REPO, "--hub", str(tmp_path / "hub"), "-o", "csv"]
    ok = run_cli(args, env)
    assert ok.returncode == 0, ok.stderr.decode()
    assert ok.stdout.decode().splitlines()[0].startswith("shard,verdict") and b"% )" not in ok.stderr
    assert b"publish verify: read" in ok.stderr
    planted.truncate(mirror, _shards(mirrorcc, CRAWL)[0])
    bad = run_cli(args, env)
    assert bad.returncode == 1 and b"truncated" in bad.stdout and b"Traceback" not in bad.stderr
    graph = run_cli(["publish", "verify", "--graph", "cc-main-2026-mar-apr-may", "--hub", str(tmp_path / "hub")], env)
    assert graph.returncode == 1 and b"no-access" in graph.stdout  # no domain mirror on this hub


def test_delete_obsolete(tmp_path: Path) -> None:
    from ccrawl.ops.mirrors import OBSOLETE_REPOS

    hub = tmp_path / "hub"
    for r in OBSOLETE_REPOS[:1]:
        LocalRepo(hub, r).create()
    with pytest.raises(UsageError, match="--yes"):
        list(ops.get("publish.delete_obsolete")(hub=str(hub), ctx=QUIET))
    kept = list(ops.get("publish.delete_obsolete")(hub=str(hub), confirm=lambda _q: False, ctx=QUIET))
    assert {r["action"] for r in kept} == {"kept"} and LocalRepo(hub, OBSOLETE_REPOS[0]).exists_repo()
    refused = run_cli(["publish", "delete-obsolete", "--hub", str(hub)], {})
    assert refused.returncode == 2 and b"--yes" in refused.stderr
    assert LocalRepo(hub, OBSOLETE_REPOS[0]).exists_repo()
    done = run_cli(["publish", "delete-obsolete", "--yes", "--hub", str(hub), "-o", "jsonl"], {})
    assert done.returncode == 0, done.stderr.decode()
    rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert rows == [{"repo": OBSOLETE_REPOS[0], "action": "deleted"}, {"repo": OBSOLETE_REPOS[1], "action": "absent"}]
    assert not LocalRepo(hub, OBSOLETE_REPOS[0]).exists_repo()


def test_repair_no_push_rebuilds_locally_only(mirrorcc: FakeCCServer, mirror: LocalRepo, tmp_path: Path) -> None:
    a = _shards(mirrorcc, CRAWL)[0]
    planted.truncate(mirror, a)
    head = mirror.head()
    _out, (err, reports) = _verify(mirrorcc, tmp_path, repair=True, no_push=True, workers=1)
    assert err is None and reports[0].repaired == [a]
    assert mirror.head() == head  # nothing uploaded
    rebuilt = tmp_path / "repair" / "repair" / a
    import pyarrow.parquet as pq

    assert pq.read_metadata(rebuilt).num_rows > 0
    still, (err2, _) = _verify(mirrorcc, tmp_path)
    assert {r["shard"]: r["verdict"] for r in still}[a] == "truncated" and err2 is not None


def test_verify_without_the_source_checks_what_the_hub_lists(mirror: LocalRepo, tmp_path: Path) -> None:
    notes: list[str] = []
    opts = {"data_endpoint": "http://127.0.0.1:9", "collinfo_endpoint": "http://127.0.0.1:9/collinfo.json",
            "cdx_endpoint": "http://127.0.0.1:9", "retries": 0, "data_dir": str(tmp_path / "cc"), "no_cache": True}
    out = list(ops.get("publish.verify")(crawl=CRAWL, repo=REPO, hub=str(tmp_path / "hub"), ctx=OpContext.of(opts,
                                                                                                             notice=notes.append)))
    assert out and {r["verdict"] for r in out} == {"ok"}
    assert any("cannot read the source manifest" in n for n in notes)
