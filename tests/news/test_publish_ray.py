"""news publish --executor ray on a real local Ray cluster: the same shards and rows as the local run.

The local reference is the session's ``published`` month (a process pool of 2); one 2-CPU cluster serves
the module and is shut down in its fixture's teardown.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.hub.localhub import LocalRepo
from ccrawl.testing.fakecc import FakeCCServer

from .conftest import MONTH, REPO, Published, cli_env

pytestmark = pytest.mark.timeout(120)


def _ledger(snap: Path, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((snap / name).read_text())))


def test_ray_publishes_the_shards_and_rows_the_local_run_does(
        ray_cluster: Any, published: Published, news_server: FakeCCServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for k, v in cli_env(news_server, tmp_path).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CCRAWL_HUB", raising=False)
    hub = tmp_path / "hub"
    args = ["news", "publish", "--months", MONTH, "--repo", REPO, "--hub", str(hub), "--staging",
            str(tmp_path / "staging"), "--commit-every", "10", "--executor", "ray", "-o", "jsonl"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "ray: " in err and " archives done, 0 failed" in err
    want = published.snapshot
    got = LocalRepo(hub, REPO).snapshot_dir()
    names = sorted(p.relative_to(want).as_posix() for p in want.rglob("data/**/*.parquet"))
    assert names and sorted(p.relative_to(got).as_posix() for p in got.rglob("data/**/*.parquet")) == names
    assert out.count('"action": "committed"') == len(names)
    for name in names:
        assert pq.read_table(got / name).equals(pq.read_table(want / name)), name
    # the ledgers count every archive once, with the same rows (commit times aside)
    keep = ("month", "files", "rows", "articles")
    for ledger in sorted(p.relative_to(want).as_posix() for p in want.rglob("*.csv")):
        a = [{k: v for k, v in r.items() if k in keep} for r in _ledger(want, ledger)]
        b = [{k: v for k, v in r.items() if k in keep} for r in _ledger(got, ledger)]
        assert a == b, ledger
    # a rerun on Ray finds everything on the hub: nothing indexed, nothing committed
    assert main(args) == 0
    again = capsys.readouterr().out
    assert again.count('"action": "exists"') == len(names)
