"""``recrawl publish``: content-addressed shards, ledger and card in one commit, resume, faults, watch."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import pytest

from ccrawl.datasets.card import card_totals
from ccrawl.datasets.publish_recrawl import Publisher, PublishOptions, publish
from ccrawl.errors import EXIT_TEMPORARY, CredentialMissing, TemporaryFailure, UsageError
from ccrawl.hub.factory import open_publish_repo
from ccrawl.hub.hfhub import HfRepo
from ccrawl.hub.ledger import parse_ledger
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, DatasetRepo
from ccrawl.testing.fakehub import FakeHub
from tests.datasets.capture_shards import TOKEN, capture_rows, write_shard, write_state

SHARD_NAME = re.compile(r"^data/s1-shard0of1-[0-9a-f]{12}\.parquet$")


def _opts(cap: Path, **kw: object) -> PublishOptions:
    base: dict[str, object] = {"repo_id": "fleet/recrawl", "server": "s1", "shard": 0, "shards": 1,
                               "backoff": 0.01, "backoff_max": 0.05}
    base.update(kw)
    return PublishOptions(cap, **base)  # type: ignore[arg-type]


def _shards(cap: Path, n: int, start: int = 0, rows: int = 10) -> list[Path]:
    return [write_shard(cap, f"part-{start + i:05d}", capture_rows((start + i) * rows, rows)) for i in range(n)]


def _ledger(repo: DatasetRepo, stem: str = "s1-shard0of1") -> list:
    text = repo.read_text(f"ledger/{stem}.csv")
    return parse_ledger(text) if text else []


def _data_rows(repo: LocalRepo) -> int:
    import pyarrow.parquet as pq

    snap = repo.snapshot_dir()
    return sum(pq.ParquetFile(p).metadata.num_rows for p in (snap / "data").glob("*.parquet"))


def test_sealed_shards_are_committed_by_content_hash_with_ledger_and_card(local_repo: LocalRepo,
                                                                          tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    paths = _shards(cap, 3)
    digests = {hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in paths}
    (cap / "part-00003.parquet.tmp").write_bytes(b"still being written")
    records, stats = publish(_opts(cap), local_repo)
    assert [r["action"] for r in records] == ["committed"] * 3
    data = [f.path for f in local_repo.list_files("data")]
    assert all(SHARD_NAME.match(p) for p in data)
    assert {p[-20:-8] for p in data} == digests
    record = local_repo.commit_record()
    assert {"README.md", "ledger/s1-shard0of1.csv", *data} <= set(record["files"])
    assert record["parent"] is not None and stats.commits == 1  # one commit carried all three and the card
    assert sorted(p.name for p in cap.iterdir() if not p.name.startswith(".")) == ["part-00003.parquet.tmp"]
    ledger = _ledger(local_repo)
    assert sorted(r.file for r in ledger) == sorted(data)
    assert card_totals(local_repo.read_text("README.md") or "")["rows"] == 30 == _data_rows(local_repo)


def test_commit_every_bounds_the_shards_per_commit(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 5)
    _, stats = publish(_opts(cap, commit_every=2), local_repo)
    assert (stats.commits, stats.committed) == (3, 5)


def test_keep_leaves_local_shards_and_a_republish_moves_no_bytes(fakehub: FakeHub, hf_repo: HfRepo,
                                                                  tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 2)
    publish(_opts(cap, keep=True), hf_repo)
    assert len(list(cap.glob("*.parquet"))) == 2
    puts, commits = fakehub.faults.requests["lfs-put"], fakehub.faults.requests["commit"]
    paths_info = fakehub.faults.requests["paths-info"]
    records, stats = publish(_opts(cap, keep=True), hf_repo)  # a restarted publisher, same files
    assert [r["action"] for r in records] == ["exists", "exists"]
    assert fakehub.faults.requests["lfs-put"] == puts and fakehub.faults.requests["commit"] == commits
    assert fakehub.faults.requests["paths-info"] == paths_info + 1  # one batched existence check
    assert stats.existing == 2 and len(_ledger(hf_repo)) == 2


def test_identical_local_files_are_uploaded_once(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    (first,) = _shards(cap, 1)
    (cap / "copy.parquet").write_bytes(first.read_bytes())
    records, _ = publish(_opts(cap), local_repo)
    assert sorted(r["action"] for r in records) == ["committed", "exists"]
    assert len(local_repo.list_files("data")) == 1 and len(_ledger(local_repo)) == 1


def test_resume_carries_the_ledger_on_after_the_capture_dir_is_wiped(fakehub: FakeHub, hf_repo: HfRepo,
                                                                     tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 2)
    publish(_opts(cap), hf_repo)
    cap2 = tmp_path / "new-disk"
    _shards(cap2, 1, start=10)
    publish(_opts(cap2), hf_repo)
    ledger = _ledger(hf_repo)
    assert len(ledger) == 3 and sum(r.rows for r in ledger) == 30
    card = hf_repo.read_text("README.md") or ""
    assert card_totals(card)["shards"] == 3 and card_totals(card)["rows"] == 30
    assert _data_rows(fakehub.local_repo("fleet/recrawl")) == 30


def test_the_card_is_the_union_of_every_machines_ledger(local_repo: LocalRepo, tmp_path: Path) -> None:
    _shards(tmp_path / "a", 2)
    _shards(tmp_path / "b", 3, start=20)
    publish(_opts(tmp_path / "a", server="alpha", shard=0, shards=2), local_repo)
    publish(_opts(tmp_path / "b", server="beta", shard=1, shards=2), local_repo)
    t = card_totals(local_repo.read_text("README.md") or "")
    assert (t["machines"], t["shards"], t["rows"]) == (2, 5, 50)
    assert sorted(f.path for f in local_repo.list_files("ledger")) == [
        "ledger/alpha-shard0of2.csv", "ledger/beta-shard1of2.csv"]


def test_no_push_stages_the_would_be_commit_and_uploads_nothing(fakehub: FakeHub, hf_repo: HfRepo,
                                                                tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 2)
    hf_repo.create()
    before = dict(fakehub.faults.requests)
    records, _ = publish(_opts(cap, no_push=True, state=write_state(tmp_path / "s.json", part=2, row=7)),
                             hf_repo)
    assert [r["action"] for r in records] == ["staged", "staged"]
    assert fakehub.faults.requests["commit"] == before.get("commit", 0)
    assert fakehub.faults.requests["lfs-put"] == before.get("lfs-put", 0)
    assert len(list(cap.glob("*.parquet"))) == 2  # nothing was uploaded, so nothing is deleted
    (staged,) = (cap / ".publish-staging").iterdir()
    assert sorted(p.name for p in (staged / "data").iterdir()) == sorted(r["file"][5:] for r in records)
    assert card_totals((staged / "README.md").read_text())["rows"] == 20
    assert "| s1 | 0 of 1 | 2 | 20 | 2, 7 |" in (staged / "README.md").read_text()
    assert len(parse_ledger((staged / "ledger/s1-shard0of1.csv").read_text())) == 2


def test_no_push_works_without_any_hub(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    records, _ = publish(_opts(cap, no_push=True), None)
    assert [r["action"] for r in records] == ["staged"]


def test_commits_back_off_through_429_and_503(fakehub: FakeHub, hf_repo: HfRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 2)
    fakehub.faults.add(commit_errors=[429, 503, 429])
    slept: list[float] = []
    records, stats = publish(_opts(cap), hf_repo, sleep=slept.append)
    assert [r["action"] for r in records] == ["committed", "committed"]
    assert stats.retries == 3 and len(slept) == 3
    assert slept[1] > slept[0] * 0.5 * 2 * 0.5  # exponential, with jitter in [0.5, 1.5)
    assert len(_ledger(hf_repo)) == 2


def test_a_conflict_rebuilds_the_card_and_commits_again(fakehub: FakeHub, hf_repo: HfRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    fakehub.faults.add(conflicts=2)
    _, stats = publish(_opts(cap), hf_repo)
    assert stats.conflicts == 2 and stats.committed == 1


def test_a_stalled_hub_exits_75_within_the_stall_budget(fakehub: FakeHub, hf_repo: HfRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    hf_repo.create()
    fakehub.faults.add(stalls={"commit": [30.0]})
    started = time.monotonic()
    with pytest.raises(TemporaryFailure) as err:
        publish(_opts(cap, max_stall=1.5), hf_repo)
    assert err.value.exit_code == EXIT_TEMPORARY == 75
    assert time.monotonic() - started < 10
    assert "no commit landed" in str(err.value)
    assert len(list(cap.glob("*.parquet"))) == 1  # not committed, so not deleted


def test_a_429_storm_longer_than_the_stall_budget_exits_75(fakehub: FakeHub, hf_repo: HfRepo,
                                                           tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    fakehub.faults.add(storm={"status": 429, "p": 1.0, "seconds": 60})
    with pytest.raises(TemporaryFailure):
        publish(_opts(cap, max_stall=1.0, backoff=0.2), hf_repo)
    assert fakehub.faults.injected["storm:429"] >= 2


def test_watch_stops_by_itself_once_the_crawl_is_done_and_drained(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    state = write_state(tmp_path / "state.json", part=0, row=10, fetched=10)
    _shards(cap, 1)
    polls: list[float] = []

    def crawl_moves_on(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 1:
            _shards(cap, 1, start=1)  # the crawl seals another shard...
        elif len(polls) == 2:
            _shards(cap, 1, start=2)  # ...and its last one, then says it is done
            write_state(state, part=1, row=0, done=True, fetched=30)

    _, stats = publish(_opts(cap, watch=0.01, state=state), local_repo, sleep=crawl_moves_on)
    assert len(polls) == 2 and stats.committed == 3
    assert card_totals(local_repo.read_text("README.md") or "")["done"] == 1


def test_watch_with_keep_stops_when_every_kept_shard_is_published(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 2)
    state = write_state(tmp_path / "state.json", done=True)
    _, stats = publish(_opts(cap, watch=5, keep=True, state=state), local_repo, sleep=lambda s: pytest.fail("slept"))
    assert stats.committed == 2


def test_an_unreadable_shard_is_skipped_and_left_in_place(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    (cap / "broken.parquet").write_bytes(b"PAR1 but no footer")
    records, stats = publish(_opts(cap), local_repo)
    assert [r["local"] for r in records] == ["part-00000.parquet"]
    assert stats.unreadable == 1 and (cap / "broken.parquet").exists()


def test_a_checkpoint_of_another_shard_is_refused(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    state = write_state(tmp_path / "state.json", shard=1, shards=3)
    with pytest.raises(UsageError, match="--shard 1 --shards 3"):
        publish(_opts(cap, state=state, shard=0, shards=3), local_repo)


def test_push_without_a_token_is_credential_missing_before_any_request(fakehub: FakeHub,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGINGFACE_TOKEN", raising=False)
    monkeypatch.delenv("CCRAWL_HUB", raising=False)
    with pytest.raises(CredentialMissing):
        open_publish_repo("fleet/recrawl", hub="hf", endpoint=fakehub.url)
    assert sum(fakehub.faults.requests.values()) == 0
    # --no-push needs no token: it only reads
    assert open_publish_repo("fleet/recrawl", hub="hf", endpoint=fakehub.url, no_push=True) is not None


def test_two_publishers_cannot_share_one_capture_directory(local_repo: LocalRepo, tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    first = Publisher(_opts(cap), local_repo).run()
    next(first)  # holds the directory lock while it is running
    with pytest.raises(TemporaryFailure, match="one publisher per capture directory"):
        list(Publisher(_opts(cap), local_repo).run())
    list(first)


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--kind"):
        _opts(tmp_path, kind="pages")
    with pytest.raises(UsageError, match="--shard"):
        _opts(tmp_path, shard=3, shards=3)
    with pytest.raises(UsageError, match="--commit-every"):
        _opts(tmp_path, commit_every=0)
    with pytest.raises(UsageError, match="--dir"):
        _opts(tmp_path / "missing")
    assert _opts(tmp_path, repo_id="", kind="urls").repo_id == "open-index/ccrawl-recrawl-urls"


def test_local_hub_commit_survives_a_stale_parent_from_another_publisher(local_repo: LocalRepo,
                                                                         tmp_path: Path) -> None:
    """A commit by someone else between the head read and the commit: the card still sums both."""
    cap = tmp_path / "cap"
    _shards(cap, 1)
    local_repo.create()
    publisher = Publisher(_opts(cap), local_repo)
    real_head = local_repo.head

    def head_then_someone_commits() -> str | None:
        h = real_head()
        if publisher.stats.conflicts == 0:
            other = LocalRepo(local_repo.root, local_repo.repo_id)
            other.commit([Add("ledger/other-shard0of1.csv", (tmp_path / "ledger.csv").read_bytes())],
                         message="other machine")
        return h

    from ccrawl.hub.ledger import LedgerRow, render_ledger

    (tmp_path / "ledger.csv").write_text(render_ledger([LedgerRow("data/x.parquet", "0" * 64, 5, 1, 5, 0, 0, 0, 0,
                                                                  0)]))
    local_repo.head = head_then_someone_commits  # type: ignore[method-assign]
    list(publisher.run())
    assert publisher.stats.conflicts == 1
    assert card_totals(local_repo.read_text("README.md") or "")["rows"] == 15  # 10 of ours + 5 of theirs
    assert TOKEN  # the shared token constant is used by the fake-Hub fixtures


def test_watch_records_a_done_checkpoint_that_came_after_the_last_shard(local_repo: LocalRepo,
                                                                        tmp_path: Path) -> None:
    """The crawl seals its last shard, then checkpoints done: the card must still end up done."""
    cap = tmp_path / "cap"
    state = write_state(tmp_path / "state.json", part=0, row=10, fetched=10)
    _shards(cap, 1)

    def crawl_finishes(_seconds: float) -> None:
        write_state(state, part=1, row=0, done=True, fetched=10)

    _, stats = publish(_opts(cap, watch=0.01, state=state), local_repo, sleep=crawl_finishes)
    assert stats.commits == 2  # the shard, then the checkpoint alone
    (row,) = _ledger(local_repo)
    assert (row.done, row.part, row.row) == (True, 1, 0)
    assert card_totals(local_repo.read_text("README.md") or "")["done"] == 1


def test_a_broken_ledger_of_another_machine_is_left_out_not_fatal(local_repo: LocalRepo, tmp_path: Path) -> None:
    local_repo.create()
    local_repo.commit([Add("ledger/other-shard1of2.csv", b"not,a,ledger\n1,2,3\n")], message="someone's bug")
    cap = tmp_path / "cap"
    _shards(cap, 1)
    logs: list[str] = []
    _, stats = publish(_opts(cap, shards=2), local_repo, log=logs.append)
    assert stats.committed == 1
    assert any("leaving ledger/other-shard1of2.csv out of the card" in m for m in logs)
    assert card_totals(local_repo.read_text("README.md") or "")["rows"] == 10


def test_the_operation_is_registered_as_a_write_and_publishes_to_a_local_hub(tmp_path: Path) -> None:
    from ccrawl.ops import load_all

    cap = tmp_path / "cap"
    _shards(cap, 2)
    op = load_all()["recrawl.publish"]
    assert op.writes and op.columns[:2] == ("file", "local")
    records = list(op(dir=str(cap), repo="fleet/recrawl", server="s1", hub=str(tmp_path / "hub")))
    assert [r["action"] for r in records] == ["committed", "committed"]
    assert len(LocalRepo(tmp_path / "hub", "fleet/recrawl").list_files("data")) == 2


def test_no_push_rehearses_offline_when_the_hub_cannot_be_reached(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    _shards(cap, 1)
    unreachable = HfRepo("fleet/recrawl", endpoint="http://127.0.0.1:9", token=None, xet=False)
    logs: list[str] = []
    started = time.monotonic()
    records, _ = publish(_opts(cap, no_push=True), unreachable, log=logs.append)
    assert [r["action"] for r in records] == ["staged"]
    assert any("rehearsing without it" in m for m in logs)
    assert time.monotonic() - started < 20


def test_cli_says_on_stderr_how_many_local_files_it_deleted_and_how_to_keep_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccrawl.cli.main import main

    cap = tmp_path / "cap"
    _shards(cap, 2)
    args = ["recrawl", "publish", "--dir", str(cap), "--repo", "fleet/recrawl", "--server", "s1",
            "--hub", str(tmp_path / "hub"), "-o", "jsonl"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "recrawl publish: deleted 2 local file(s) after upload; --keep keeps them" in err.splitlines()
    assert not list(cap.glob("*.parquet"))
    _shards(cap, 1, start=5)
    assert main([*args, "--keep"]) == 0
    assert "deleted" not in capsys.readouterr().err and len(list(cap.glob("*.parquet"))) == 1
    # the default deletion is said in --help too
    assert main(["recrawl", "publish", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "deleted once its commit lands" in help_text and "--keep" in help_text
