"""markdown export to a dataset repo: the fake Hub, a local hub, SIGKILL and rerun, disk, errors, locking."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main
from ccrawl.errors import TemporaryFailure
from ccrawl.hub.localhub import LocalRepo
from ccrawl.markdown.export import Exporter, ExportOptions
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakehub import FakeHub
from tests.markdown.conftest import CRAWL, ENG, SHARDS, Page, html, warc_path

REPO = Path(__file__).resolve().parents[2]
TOKEN = "hf_test_token"


def _added_by_commit(repo: LocalRepo) -> dict[str, list[str]]:
    """For each path ever in the repo, the commits of the history (head back to the root) that added or changed it."""
    out: dict[str, list[str]] = {}
    before: dict[str, object] = {}
    for rec in repo.history():
        for path, meta in rec["files"].items():
            if before.get(path) != meta:
                out.setdefault(path, []).append(rec["id"])
        before = rec["files"]
    return out


def test_push_to_the_fake_hub_in_commit_batches_with_a_card(cc_env: dict[str, str], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with FakeHub(tmp_path / "hub", tokens=frozenset({TOKEN})) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        hub.faults.add(commit_errors=[503])  # the first commit attempt is refused: retried
        out = tmp_path / "md"
        code = main(["-c", CRAWL, "markdown", "export", "--shards", "all", "--repo", "org/md", "--out", str(out),
                     "--commit-batch", "1"])
        assert code == 0, capsys.readouterr().err
        repo = hub.local_repo("org/md")
        files = sorted(repo.manifest())
        assert files == ["README.md", f"data/crawl={CRAWL}/000000.parquet", f"data/crawl={CRAWL}/000001.parquet"]
        card = (repo.snapshot_dir() / "README.md").read_text()
        assert "path: data/*/*.parquet" in card and "| `simhash` | BIGINT |" in card
        added = _added_by_commit(repo)
        assert all(len(added[f]) == 1 for f in files if f.startswith("data/"))
        assert added[files[1]] != added[files[2]]  # --commit-batch 1: one commit per shard
        assert not list((out / "data").rglob("*.parquet"))  # committed shards are deleted locally
        entries = [json.loads(line) for line in (out / ".committed").read_text().splitlines()]
        assert [e["pushed"] for e in entries] == [True, True]
        err = capsys.readouterr().err
        assert "2 committed in 2 commit(s), 0 already on the hub" in err
        events = [json.loads(line)["event"] for line in (out / "run.jsonl").read_text().splitlines()]
        assert events.count("commit") == 2
        # The datasets library reads what was published, straight from the hub snapshot.
        from datasets import load_dataset

        ds = load_dataset(str(repo.snapshot_dir()), split="train", cache_dir=str(tmp_path / "hf-cache"))
        assert ds.num_rows == 7 and "markdown" in ds.column_names


def test_keep_parquet_and_no_token(cc_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    with FakeHub(tmp_path / "hub", tokens=frozenset({TOKEN})) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HUGGINGFACE_TOKEN", raising=False)
        out = tmp_path / "md"
        args = ["-c", CRAWL, "markdown", "export", "--shards", "0", "--repo", "org/md", "--out", str(out)]
        assert main(args) == 4
        assert "HF_TOKEN" in capsys.readouterr().err and not out.exists()
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert main([*args, "--keep"]) == 0
        assert (out / "data" / f"crawl={CRAWL}" / "000000.parquet").exists()
        assert "deleted" not in capsys.readouterr().err


def test_keep_is_the_one_name_and_keep_parquet_a_hidden_deprecated_alias(
    cc_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `recrawl publish --keep` and `markdown export --keep-parquet` were two names for one thing.
    monkeypatch.setenv("CCRAWL_HUB", str(tmp_path / "hub"))
    shard = Path("data") / f"crawl={CRAWL}" / "000000.parquet"
    args = ["-c", CRAWL, "markdown", "export", "--shards", "0", "--repo", "org/md"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "markdown export: deleted 1 local file(s) after upload; --keep keeps them" in err.splitlines()
    assert not (tmp_path / "a" / shard).exists()
    assert main([*args, "--out", str(tmp_path / "b"), "--keep-parquet"]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "b" / shard).exists() and "deleted" not in err
    assert [line for line in err.splitlines() if "deprecated" in line] == [
        "ccrawl: warning: markdown export: --keep-parquet is deprecated; use --keep (the same flag as every "
        "publish command)"]
    for command in (["markdown", "export"], ["markdown", "refetch"], ["recrawl", "publish"]):
        assert main([*command, "--help"]) == 0
        shown = capsys.readouterr().out
        assert "--keep " in shown and "--keep-parquet" not in shown, command
        assert "deleted once its commit lands" in " ".join(shown.split()), command


def test_a_unit_committed_but_not_ledgered_is_not_uploaded_again(cc_env: dict[str, str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CCRAWL_HUB", str(tmp_path / "hub"))
    out = tmp_path / "md"
    args = ["-c", CRAWL, "markdown", "export", "--shards", "all", "--repo", "org/md", "--out", str(out)]
    assert main(args) == 0
    (out / ".committed").unlink()  # as if killed after the commit landed, before the ledger line
    assert main(args) == 0
    assert "0 committed in 0 commit(s), 2 already on the hub" in capsys.readouterr().err
    added = _added_by_commit(LocalRepo(tmp_path / "hub", "org/md"))
    assert [len(v) for k, v in sorted(added.items()) if k.startswith("data/")] == [1, 1]


def _big_crawl(root: Path, crawl: str, shards: int) -> None:
    pages = [[Page(f"https://s{i}.example.com/{j}", html(f"P{i}-{j}", ENG + f" Page {i} {j}.")) for j in range(3)]
             for i in range(shards)]
    paths = []
    for i, shard in enumerate(pages):
        from tests.markdown.conftest import _warc

        rel = f"crawl-data/{crawl}/segments/1/warc/CC-MAIN-x-{i:05d}.warc.gz"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(_warc(shard, "warc"))
        paths.append(rel)
    (root / f"crawl-data/{crawl}/warc.paths.gz").write_bytes(gzip.compress("\n".join(paths).encode()))


def test_sigkilled_export_rerun_commits_every_shard_exactly_once(cc_env: dict[str, str], tmp_path: Path,
                                                                  fakecc: FakeCCServer) -> None:
    crawl, shards = "CC-MAIN-2099-02", 8
    _big_crawl(Path(fakecc.site.root), crawl, shards)
    hub = tmp_path / "hub"
    env = {**cc_env, "CCRAWL_HUB": str(hub)}
    out = tmp_path / "md"
    cmd = [sys.executable, "-m", "ccrawl", "-c", crawl, "markdown", "export", "--shards", "all", "--repo", "org/md",
           "--out", str(out), "--commit-batch", "1"]
    fakecc.faults.latency = 0.15  # every GET takes a while, so the kill lands mid-run
    repo = LocalRepo(hub, "org/md")
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            commits = list((repo.meta / "commits").glob("*.json")) if repo.meta.exists() else []
            if len(commits) >= 3:  # the initial commit and two shards
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    first = _added_by_commit(repo)
    assert 0 < len([p for p in first if p.startswith("data/")]) < shards  # really killed mid-run
    fakecc.faults.latency = 0.0
    done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    added = _added_by_commit(repo)
    data = sorted(p for p in added if p.startswith("data/"))
    assert data == [f"data/crawl={crawl}/{i:06d}.parquet" for i in range(shards)]
    assert all(len(added[p]) == 1 for p in data), {p: added[p] for p in data}
    keys = [json.loads(line)["key"] for line in (out / ".committed").read_text().splitlines()]
    assert sorted(keys) == [f"crawl={crawl}/{i:06d}" for i in range(shards)]  # each once


def _opts(tmp_path: Path, fakecc: FakeCCServer, **kw: Any) -> ExportOptions:
    base: dict[str, Any] = {"out": tmp_path / "md", "crawl": CRAWL, "shards": "all", "push": False,
                            "client_options": fakecc.client_options()}
    base.update(kw)
    return ExportOptions(**base)


def test_min_free_gb_pauses_then_exits_75(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer) -> None:
    exporter = Exporter(_opts(tmp_path, fakecc, min_free_gb=1e9, pause_limit=0.2), sleep=lambda s: time.sleep(0.01))
    with pytest.raises(TemporaryFailure, match="--min-free-gb"):
        list(exporter.run())
    events = [json.loads(line)["event"] for line in (tmp_path / "md" / "run.jsonl").read_text().splitlines()]
    assert "disk_low" in events and "unit_written" not in events
    ok = Exporter(_opts(tmp_path, fakecc, min_free_gb=0.001))
    assert len(list(ok.run())) == 2


def test_a_failing_shard_stops_the_run_or_is_skipped(cc_env: dict[str, str], tmp_path: Path,
                                                     fakecc: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(fakecc.site.root)
    crawl = "CC-MAIN-2099-03"
    # Shard 1 of this crawl is listed but not in the bucket (404), shards 0 and 2 are fine.
    real = [warc_path(0), f"crawl-data/{crawl}/segments/1/warc/gone.warc.gz", warc_path(1)]
    (root / f"crawl-data/{crawl}").mkdir(parents=True, exist_ok=True)
    (root / f"crawl-data/{crawl}/warc.paths.gz").write_bytes(gzip.compress("\n".join(real).encode()))
    out = tmp_path / "md"
    base = ["-c", crawl, "markdown", "export", "--shards", "all", "--push=false", "--out", str(out)]
    assert main(base) == 1
    err = capsys.readouterr().err
    assert "crawl=CC-MAIN-2099-03/000001 failed" in err
    keys = [json.loads(line)["key"] for line in (out / ".committed").read_text().splitlines()]
    assert f"crawl={crawl}/000001" not in keys and f"crawl={crawl}/000000" in keys
    out2 = tmp_path / "md2"
    assert main([*base[:-1], str(out2), "--skip-errors"]) == 0
    err = capsys.readouterr().err
    assert "2 of 3 shards written, 0 already done, 1 failed" in err and "tries it again" in err
    keys = [json.loads(line)["key"] for line in (out2 / ".committed").read_text().splitlines()]
    assert sorted(keys) == [f"crawl={crawl}/000000", f"crawl={crawl}/000002"]


def test_two_runs_on_one_out_dir(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer) -> None:
    import fcntl

    out = tmp_path / "md"
    out.mkdir()
    with (out / ".export.lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(TemporaryFailure, match="another markdown export"):
            list(Exporter(_opts(tmp_path, fakecc)).run())
    assert not (out / ".committed").exists()


def test_a_torn_ledger_line_means_the_unit_is_done_again(cc_env: dict[str, str], tmp_path: Path,
                                                         fakecc: FakeCCServer) -> None:
    assert len(list(Exporter(_opts(tmp_path, fakecc)).run())) == 2
    ledger = tmp_path / "md" / ".committed"
    lines = ledger.read_text().splitlines()
    ledger.write_text(lines[0] + "\n" + lines[1][:20])  # the last line cut mid-write
    again = Exporter(_opts(tmp_path, fakecc))
    assert [r["unit"] for r in again.run()] == [f"crawl={CRAWL}/000001"]
    assert again.stats.already == 1


def test_corrupt_record_in_a_shard(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer) -> None:
    root = Path(fakecc.site.root)
    crawl = "CC-MAIN-2099-04"
    data = (root / warc_path(0)).read_bytes()
    rel = f"crawl-data/{crawl}/segments/1/warc/cut.warc.gz"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data[: len(data) - 40])  # the last record's member is cut short
    (root / f"crawl-data/{crawl}/warc.paths.gz").write_bytes(gzip.compress(rel.encode()))
    failing = Exporter(_opts(tmp_path, fakecc, crawl=crawl))
    with pytest.raises(Exception, match=r"cut\.warc\.gz"):
        list(failing.run())
    skipping = Exporter(_opts(tmp_path / "b", fakecc, crawl=crawl, skip_errors=True))
    records = list(skipping.run())
    # the cut record is the last one (the PDF): every HTML page before it is kept
    assert len(records) == 1 and records[0]["rows"] == len([p for p in SHARDS[0] if p.html])
    assert skipping.stats.bad_records >= 1

