"""The one commit loop every publisher runs on (``ccrawl.hub.staged.commit_loop``), on a real local hub."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, CommitConflict
from ccrawl.hub.staged import commit_loop, commit_once
from ccrawl.hub.stall import StallClock


def _repo(tmp_path: Path) -> LocalRepo:
    repo = LocalRepo(tmp_path / "hub", "me/data")
    repo.create()
    repo.commit([Add("ledger.csv", b"v0\n")], message="start")
    return repo


def test_a_conflict_is_reported_and_the_commit_is_built_again_against_the_new_head(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    heads: list[str | None] = []
    conflicts: list[CommitConflict] = []

    def build(head: str | None) -> tuple[list[Add], str]:
        heads.append(head)
        if len(heads) == 1:  # another machine commits between our read of the head and our commit
            repo.commit([Add("other.csv", b"x\n")], message="someone else")
        return [Add("ledger.csv", f"v{len(heads)}\n".encode())], "mine"

    commit_id = commit_once(StallClock(30.0), repo, build, on_conflict=conflicts.append)
    assert commit_id is not None and commit_id == repo.head()
    assert len(conflicts) == 1 and len(heads) == 2 and heads[0] != heads[1]
    assert repo.read_text("ledger.csv") == "v2\n" and repo.read_text("other.csv") == "x\n"


def test_without_a_conflict_handler_a_conflict_is_raised(tmp_path: Path) -> None:
    repo = _repo(tmp_path)

    def build(head: str | None) -> tuple[list[Add], str]:
        repo.commit([Add("other.csv", b"x\n")], message="someone else")
        return [Add("ledger.csv", b"v1\n")], "mine"

    with pytest.raises(CommitConflict):
        commit_once(StallClock(30.0), repo, build)
    assert repo.read_text("ledger.csv") == "v0\n"


def test_records_of_a_generator_builder_pass_through_and_nothing_left_commits_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = repo.head()

    def build(head: str | None) -> Generator[dict[str, str], None, None]:
        yield {"file": "a", "action": "exists"}
        return None

    loop = commit_loop(StallClock(30.0), repo, build)
    records = []
    with pytest.raises(StopIteration) as done:
        while True:
            records.append(next(loop))
    assert records == [{"file": "a", "action": "exists"}] and done.value.value is None
    assert repo.head() == head


def test_without_a_hub_the_commit_is_staged(tmp_path: Path) -> None:
    staged: list[tuple[list[str], str]] = []

    def stage(adds: list[Add], message: str) -> str:
        staged.append(([a.path_in_repo for a in adds], message))
        return "commit-0001"

    got = commit_once(StallClock(30.0), None, lambda head: ([Add("a.parquet", b"1")], "m"), stage=stage)
    assert got == "commit-0001" and staged == [(["a.parquet"], "m")]
