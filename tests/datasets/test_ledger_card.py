"""Ledgers round-trip, the card sums every ledger, and its configs keep auxiliary files out of the data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ccrawl.datasets.card import DATA_GLOB, Progress, card_totals, render_card
from ccrawl.errors import InputError
from ccrawl.hub.ledger import LedgerRow, MachineKey, parse_ledger, parse_ledger_path, render_ledger, shard_stats
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add
from tests.datasets.capture_shards import capture_rows, write_shard


def _row(name: str, rows: int, **kw: int) -> LedgerRow:
    base = dict(file=f"data/{name}.parquet", sha256="0" * 64, rows=rows, bytes=rows * 10, ok=rows - 1, failed=1,
                unchanged=0, first_fetched_at=1, last_fetched_at=2, committed_at=3)
    base.update(kw)
    return LedgerRow(**base)  # type: ignore[arg-type]


def test_ledger_round_trips_through_csv() -> None:
    rows = [_row("a", 10), _row("b", 5, done=True, part=3, row=99)]  # type: ignore[arg-type]
    assert parse_ledger(render_ledger(rows)) == rows


def test_ledger_with_a_missing_column_or_bad_number_is_an_input_error() -> None:
    with pytest.raises(InputError, match="missing columns"):
        parse_ledger("file,rows\nx,1\n")
    text = render_ledger([_row("a", 1)]).replace(",1,10,", ",one,10,", 1)
    with pytest.raises(InputError, match="line 2"):
        parse_ledger(text)


def test_ledger_paths_name_the_machine_and_its_slice() -> None:
    key = MachineKey("server1", 0, 3)
    assert key.ledger_path == "ledger/server1-shard0of3.csv"
    assert parse_ledger_path(key.ledger_path) == key
    assert parse_ledger_path("ledger/my-host-2-shard2of16.csv") == MachineKey("my-host-2", 2, 16)
    assert parse_ledger_path("ledger/notes.csv") is None
    assert parse_ledger_path("data/server1-shard0of3.csv") is None


def test_shard_stats_counts_ok_failed_and_unchanged(tmp_path: Path) -> None:
    path = write_shard(tmp_path, "s", capture_rows(1, 35))
    stats = shard_stats(path)
    assert stats.rows == 35
    assert stats.failed == 7  # every 5th
    assert stats.unchanged == 4  # every 7th that is not every 5th: 7, 14, 21, 28
    assert stats.ok == 35 - 7 - 4
    assert (stats.first_fetched_at, stats.last_fetched_at) == (1_700_000_000_001, 1_700_000_000_035)


def test_shard_stats_refuses_a_file_without_a_footer(tmp_path: Path) -> None:
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"PAR1 no footer")
    with pytest.raises(InputError, match="not a readable Parquet shard"):
        shard_stats(bad)


def test_card_totals_are_the_sum_of_every_ledger() -> None:
    ledgers = {
        MachineKey("s1", 0, 2): [_row("a", 10), _row("b", 20)],
        MachineKey("s2", 1, 2): [_row("c", 7, done=True)],  # type: ignore[arg-type]
    }
    card = render_card("fleet/recrawl", "domains", ledgers)
    t = card_totals(card)
    assert (t["rows"], t["shards"], t["machines"], t["done"]) == (37, 3, 2, 1)
    assert t["failed"] == 3 and t["ok"] == 34
    assert "| s2 | 1 of 2 | 1 | 7 |" in card


def test_card_reports_live_progress_for_the_committing_machine() -> None:
    me = MachineKey("s1", 0, 1)
    card = render_card("fleet/recrawl", "urls", {me: [_row("a", 1, part=1, row=5)]},  # type: ignore[arg-type]
                       live={me: Progress(part=4, row=1234, done=False, fetched=99)})
    assert "| s1 | 0 of 1 | 1 | 1 | 4, 1234 | 99 | no |" in card
    assert "open-index/ccrawl-urls" in card


def test_card_front_matter_declares_only_the_parquet_shards_as_data() -> None:
    card = render_card("fleet/recrawl", "domains", {})
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "train", "path": DATA_GLOB}]}]
    assert DATA_GLOB == "data/*.parquet"


def _repo_with_sidecars(tmp_path: Path, readme: bytes) -> LocalRepo:
    """Two capture shards plus what made the umi-meta viewer fail: JSON files of another shape, a ledger CSV."""
    repo = LocalRepo(tmp_path / "hub", "fleet/recrawl")
    repo.create()
    shards = [write_shard(tmp_path / "cap", f"p{i}", capture_rows(i * 10, 10)) for i in range(2)]
    sidecar = [{"repo": "x", "at_ms": 1, "reason": "r", "removed": [{"path": "p", "rows": 1, "bytes": 2,
                                                                       "digest": "d"}], "rewritten": ["a"]}]
    keys = [{"role": "writer", "key": "k", "key_id": "id", "added_ms": 1}]
    adds = [Add(f"data/s1-shard0of1-{i:012x}.parquet", p) for i, p in enumerate(shards)]
    adds += [Add(f"meta/audit-{i}.json", json.dumps(sidecar).encode()) for i in range(3)]
    adds += [Add("meta/keys.json", json.dumps(keys).encode())]
    adds += [Add("ledger/s1-shard0of1.csv", render_ledger([_row("a", 10), _row("b", 10)]).encode())]
    adds += [Add("README.md", readme)]
    repo.commit(adds, message="publish")
    return repo


def test_datasets_library_reads_only_the_parquet_of_a_published_repo(tmp_path: Path) -> None:
    import datasets
    card = render_card("fleet/recrawl", "domains", {MachineKey("s1", 0, 1): [_row("a", 10), _row("b", 10)]})
    repo = _repo_with_sidecars(tmp_path, card.encode())
    ds = datasets.load_dataset(str(repo.link), cache_dir=str(tmp_path / "cache"))
    assert list(ds) == ["train"]
    assert ds["train"].num_rows == 20
    assert ds["train"].features["status"].dtype == "int32"
    assert "role" not in ds["train"].column_names and "file" not in ds["train"].column_names


def test_without_the_configs_the_json_sidecars_are_read_as_data(tmp_path: Path) -> None:
    """The control: the same repo with a card lacking ``configs`` is what broke the umi-meta viewer."""
    import datasets
    repo = _repo_with_sidecars(tmp_path, b"# no front matter\n")
    with pytest.raises(datasets.exceptions.DatasetGenerationError) as err:
        datasets.load_dataset(str(repo.link), cache_dir=str(tmp_path / "cache"))
    causes = []
    exc: BaseException | None = err.value
    while exc is not None:
        causes.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    # The JSON sidecars of two shapes were read as one split (the seed's viewer said CastError; this
    # version of datasets fails one step earlier, unifying the two JSON schemas).
    assert any("CastError" in c or ("ArrowInvalid" in c and "role: string" in c) for c in causes), causes


def test_a_machine_whose_last_commit_held_several_shards_reports_its_last_rows_checkpoint() -> None:
    """Rows of one commit share committed_at; the final checkpoint rewrites the last of them.

    The card used to take the first row of the newest commit, so a machine whose last commit
    carried two shards showed as unfinished after its done checkpoint (a fleet-test flake).
    """
    me = MachineKey("s1", 0, 3)
    rows = [_row("a", 5, committed_at=7), _row("b", 5, committed_at=7, part=2, row=0, done=True)]  # type: ignore[arg-type]
    t = card_totals(render_card("fleet/recrawl", "domains", {me: rows}))
    assert (t["machines"], t["done"]) == (1, 1)
