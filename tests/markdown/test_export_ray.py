"""markdown export --executor ray on a real local Ray cluster: the same files and rows as a local run.

One 2-CPU cluster for the module (the ``ray_cluster`` fixture of tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.markdown.schema import provenance_of
from tests.markdown.conftest import CRAWL

pytestmark = pytest.mark.timeout(120)


def _files(out: Path) -> dict[str, Path]:
    return {p.relative_to(out).as_posix(): p for p in sorted((out / "data").rglob("*.parquet"))}


def test_ray_writes_the_files_and_rows_a_local_run_writes(ray_cluster: Any, cc_env: dict[str, str],
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    base = ["-c", CRAWL, "markdown", "export", "--push=false", "--shards", "all"]
    assert main([*base, "--out", str(local)]) == 0
    assert main([*base, "--out", str(on_ray), "--executor", "ray"]) == 0
    err = capsys.readouterr().err
    assert "ray: 2 of 2 units done, 0 failed" in err
    assert "markdown export: 2 of 2 shards written, 0 already done, 0 failed; 7 rows" in err
    want, got = _files(local), _files(on_ray)
    assert list(got) == list(want) == [f"data/crawl={CRAWL}/000000.parquet", f"data/crawl={CRAWL}/000001.parquet"]
    for name in want:
        assert pq.read_table(got[name]).equals(pq.read_table(want[name])), name
        a, b = provenance_of(want[name]), provenance_of(got[name])
        assert "--executor ray" in b.pop("ccrawl.command") and "--executor" not in a.pop("ccrawl.command")
        assert a == b
    # the ledger of the driver says both shards are done: a rerun on Ray builds nothing
    assert main([*base, "--out", str(on_ray), "--executor", "ray"]) == 0
    assert "0 of 2 shards written, 2 already done" in capsys.readouterr().err


def test_same_command_line_gives_byte_identical_parquet(ray_cluster: Any, cc_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    from ccrawl.markdown.export import Exporter, ExportOptions
    from ccrawl.net.client import client_options

    opts = {"crawl": CRAWL, "shards": "all", "push": False, "command_line": "ccrawl markdown export",
            "client_options": client_options({"data_endpoint": cc_env["CCRAWL_DATA_ENDPOINT"],
                                              "collinfo_endpoint": cc_env["CCRAWL_COLLINFO_ENDPOINT"],
                                              "global_rate": 0.0, "data_dir": str(tmp_path / "data")})}
    for executor in ("local", "ray"):
        list(Exporter(ExportOptions(out=tmp_path / executor, executor=executor, **opts)).run())
    want, got = _files(tmp_path / "local"), _files(tmp_path / "ray")
    assert list(want) == list(got) and len(want) == 2
    for name in want:
        assert got[name].read_bytes() == want[name].read_bytes(), name


def test_a_shard_that_fails_in_its_task_is_named_and_stays_out_of_the_ledger(
        ray_cluster: Any, cc_env: dict[str, str], fakecc: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.markdown.conftest import warc_path

    fakecc.faults.add("status", path=warc_path(1).split("/")[-1], status=404, times=100)
    out = tmp_path / "md"
    code = main(["-c", CRAWL, "markdown", "export", "--push=false", "--shards", "all", "--out", str(out),
                 "--executor", "ray", "--skip-errors"])
    err = capsys.readouterr().err
    assert code == 0, err
    # the task's error comes back as the unit's one-line failure, the way a local run names it
    assert f"crawl={CRAWL}/000001 failed: " in err and warc_path(1).split("/")[-1] + ": HTTP 404 Not Found" in err
    assert "Traceback" not in err
    assert "1 of 2 shards written, 0 already done, 1 failed" in err
    assert list(_files(out)) == [f"data/crawl={CRAWL}/000000.parquet"]
