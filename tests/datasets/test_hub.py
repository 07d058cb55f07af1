"""The hub layer's contract, held by both implementations: the local directory and the Hub (fake)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.errors import EXIT_CREDENTIAL, CredentialMissing, InputError, NothingMatched, UsageError
from ccrawl.hub.factory import open_repo
from ccrawl.hub.hfhub import HfRepo
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, CommitConflict, DatasetRepo, HubBusy, token_from_env
from ccrawl.testing.fakehub import FakeHub


def _seed(repo: DatasetRepo, tmp_path: Path) -> str:
    repo.create()
    big = tmp_path / "big.parquet"
    big.write_bytes(bytes(range(256)) * 40)
    return repo.commit(
        [Add("data/a.parquet", big), Add("ledger/s1-shard0of1.csv", b"x,y\n1,2\n"), Add("README.md", b"# card\n")],
        message="seed",
    )


def test_a_repo_that_was_never_created_does_not_exist(any_repo: DatasetRepo) -> None:
    assert not any_repo.exists_repo()
    any_repo.create()
    assert any_repo.exists_repo()
    any_repo.create()  # idempotent


def test_list_files_gives_every_file_with_its_size(any_repo: DatasetRepo, tmp_path: Path) -> None:
    _seed(any_repo, tmp_path)
    assert [(f.path, f.size) for f in any_repo.list_files()] == [
        ("README.md", 7), ("data/a.parquet", 10240), ("ledger/s1-shard0of1.csv", 8)
    ]
    assert [f.path for f in any_repo.list_files("ledger")] == ["ledger/s1-shard0of1.csv"]
    assert any_repo.list_files("nothing-here") == []


def test_read_range_returns_exactly_the_bytes_asked_for(any_repo: DatasetRepo, tmp_path: Path) -> None:
    _seed(any_repo, tmp_path)
    data = bytes(range(256)) * 40
    assert any_repo.read_range("data/a.parquet", 0, 4) == data[:4]
    assert any_repo.read_range("data/a.parquet", 1000, 300) == data[1000:1300]
    assert any_repo.read_range("data/a.parquet", 10230, 100) == data[10230:]  # short only at the end
    assert any_repo.read_text("ledger/s1-shard0of1.csv") == "x,y\n1,2\n"
    assert any_repo.read_text("ledger/other.csv") is None


def test_exists_checks_many_paths_at_once(any_repo: DatasetRepo, tmp_path: Path) -> None:
    _seed(any_repo, tmp_path)
    got = any_repo.exists(["data/a.parquet", "data/b.parquet", "README.md", "ledger"])
    assert got == {"data/a.parquet": True, "data/b.parquet": False, "README.md": True, "ledger": False}


def test_commit_applies_adds_and_deletes_together(any_repo: DatasetRepo, tmp_path: Path) -> None:
    first = _seed(any_repo, tmp_path)
    second = any_repo.commit([Add("data/b.parquet", b"PAR1b")], ["ledger/s1-shard0of1.csv"], message="swap")
    assert second != first
    assert any_repo.head() == second
    assert [f.path for f in any_repo.list_files()] == ["README.md", "data/a.parquet", "data/b.parquet"]


def test_commit_on_a_stale_parent_is_a_conflict_and_changes_nothing(any_repo: DatasetRepo, tmp_path: Path) -> None:
    first = _seed(any_repo, tmp_path)
    second = any_repo.commit([Add("x.txt", b"1")], message="move on", parent=first)
    with pytest.raises(CommitConflict):
        any_repo.commit([Add("y.txt", b"2")], message="late", parent=first)
    assert any_repo.head() == second
    assert not any_repo.exists(["y.txt"])["y.txt"]


def test_download_writes_the_whole_file(any_repo: DatasetRepo, tmp_path: Path) -> None:
    _seed(any_repo, tmp_path)
    got = any_repo.download("data/a.parquet", tmp_path / "out" / "a.parquet")
    assert got.read_bytes() == bytes(range(256)) * 40
    assert sorted(p.name for p in got.parent.iterdir()) == ["a.parquet"]  # no scratch left behind


def test_paths_with_dot_dot_are_refused(any_repo: DatasetRepo) -> None:
    any_repo.create()
    with pytest.raises(UsageError):
        any_repo.commit([Add("../escape.txt", b"x")], message="bad")


def test_local_commit_that_fails_midway_leaves_the_head_alone(local_repo: LocalRepo, tmp_path: Path) -> None:
    head = _seed(local_repo, tmp_path)
    with pytest.raises(FileNotFoundError):
        local_repo.commit([Add("ok.txt", b"1"), Add("gone.parquet", tmp_path / "missing.parquet")], message="x")
    assert local_repo.head() == head
    assert [p.name for p in (local_repo.meta / "snapshots").iterdir() if p.name.startswith(".tmp")] == []


def test_a_local_committer_killed_before_the_link_swap_leaves_no_commit_in_the_history(
        local_repo: LocalRepo, tmp_path: Path) -> None:
    head = _seed(local_repo, tmp_path)
    # The committer dies at the commit point: its snapshot and record are written, the link is not swapped.
    script = (
        "import os, signal, sys\n"
        "from ccrawl.hub.repo import Add\n"
        "from ccrawl.hub.localhub import LocalRepo\n"
        "os.symlink = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "LocalRepo(sys.argv[1], sys.argv[2]).commit([Add('data/b.parquet', b'b')], message='killed')\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(local_repo.root), local_repo.repo_id],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    records = {p.stem for p in (local_repo.meta / "commits").glob("*.json")}
    assert len(records) == 3  # the initial commit, the seed, and the orphan the killed committer wrote
    assert local_repo.head() == head
    assert [r["message"] for r in local_repo.history()] == ["initial commit", "seed"]
    assert local_repo.exists(["data/b.parquet"]) == {"data/b.parquet": False}
    again = local_repo.commit([Add("data/b.parquet", b"b")], message="again")
    assert [r["id"] for r in local_repo.history()][-2:] == [head, again]
    assert local_repo.history(head)[-1]["id"] == head


def test_local_hub_repo_path_is_a_plain_directory_of_the_head(local_repo: LocalRepo, tmp_path: Path) -> None:
    _seed(local_repo, tmp_path)
    assert (local_repo.link / "README.md").read_text() == "# card\n"
    local_repo.commit([Add("README.md", b"# new\n")], message="edit")
    assert (local_repo.link / "README.md").read_text() == "# new\n"


def test_local_delete_of_a_missing_path_is_an_input_error(local_repo: LocalRepo) -> None:
    local_repo.create()
    with pytest.raises(InputError):
        local_repo.commit([], ["nope.txt"], message="x")


def test_push_without_a_token_exits_4_before_any_request(fakehub: FakeHub) -> None:
    repo = HfRepo("fleet/recrawl", endpoint=fakehub.url, token=None, xet=False)
    with pytest.raises(CredentialMissing) as err:
        repo.commit([Add("a.txt", b"1")], message="x")
    assert err.value.exit_code == EXIT_CREDENTIAL == 4
    assert "HF_TOKEN" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(CredentialMissing):
        repo.create()
    assert sum(fakehub.faults.requests.values()) == 0


def test_busy_hub_surfaces_as_hub_busy(fakehub: FakeHub, hf_repo: HfRepo) -> None:
    hf_repo.create()
    fakehub.faults.add(commit_errors=[429, 503])
    for _ in range(2):
        with pytest.raises(HubBusy):
            hf_repo.commit([Add("a.txt", b"1")], message="x")
    hf_repo.commit([Add("a.txt", b"1")], message="x")
    assert hf_repo.exists(["a.txt"]) == {"a.txt": True}


def test_reading_a_missing_repo_is_nothing_matched(hf_repo: HfRepo) -> None:
    with pytest.raises(NothingMatched):
        hf_repo.list_files()


def test_token_comes_from_hf_token_then_huggingface_token() -> None:
    assert token_from_env({"HF_TOKEN": "a", "HUGGINGFACE_TOKEN": "b"}) == "a"
    assert token_from_env({"HF_TOKEN": " ", "HUGGINGFACE_TOKEN": "b"}) == "b"
    assert token_from_env({}) is None


def test_open_repo_picks_a_local_hub_for_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(open_repo("a/b", hub=str(tmp_path)), LocalRepo)
    monkeypatch.setenv("CCRAWL_HUB", str(tmp_path))
    assert isinstance(open_repo("a/b"), LocalRepo)
    assert isinstance(open_repo("a/b", hub="hf", endpoint="http://127.0.0.1:9"), HfRepo)
    with pytest.raises(UsageError):
        open_repo("not-a-repo-id")


def test_local_hub_keeps_only_the_newest_snapshots(tmp_path: Path) -> None:
    repo = LocalRepo(tmp_path / "hub", "a/b", keep_snapshots=2)
    repo.create()
    commits = [repo.commit([Add("x.txt", str(i).encode())], message=str(i)) for i in range(4)]
    kept = {p.name for p in (repo.meta / "snapshots").iterdir()}
    assert kept == set(commits[-2:])
    assert repo.commit_record(commits[0])["message"] == "0"  # the record outlives its snapshot
    with pytest.raises(NothingMatched):
        repo.snapshot_dir(commits[0])


def test_a_same_size_rewrite_changes_the_listed_etag(any_repo: DatasetRepo) -> None:
    any_repo.create()
    any_repo.commit([Add("ledger/x.csv", b"done=false")], message="1")
    (before,) = any_repo.list_files("ledger")
    any_repo.commit([Add("ledger/x.csv", b"done=true!")], message="2")
    (after,) = any_repo.list_files("ledger")
    assert before.size == after.size and before.etag and after.etag and before.etag != after.etag
