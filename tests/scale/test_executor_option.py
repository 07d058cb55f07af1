"""``--executor``: without Ray installed, ``--executor ray`` is one line naming the extra (exit 2), on each command
that takes it; the flag's other values and the fleet's own checks are usage errors too. No cluster is started here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.scale.rayexec import MISSING

REPO = Path(__file__).resolve().parents[2]
#: Python that cannot import ray (as on a machine without the extra), then runs the CLI.
WITHOUT_RAY = "import sys; sys.modules['ray'] = None; from ccrawl.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _without_ray(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CCRAWL_CONFIG_DIR": str(tmp / "config"),
           "CCRAWL_DATA_DIR": str(tmp / "data"), "CCRAWL_DATA_ENDPOINT": "http://127.0.0.1:9",
           "CCRAWL_COLLINFO_ENDPOINT": "http://127.0.0.1:9/collinfo.json"}
    return subprocess.run([sys.executable, "-c", WITHOUT_RAY, *args], capture_output=True, text=True, env=env,
                          timeout=60, cwd=tmp)


@pytest.mark.parametrize("args", [
    ["-c", "CC-MAIN-2099-01", "markdown", "export", "--push=false", "--shards", "0", "--executor", "ray"],
    ["news", "publish", "--months", "2026/07", "--no-push", "--executor", "ray"],
    ["recrawl", "fleet", "--from", "wl", "--repo", "me/x", "--shards", "2", "--executor", "ray"],
], ids=["markdown-export", "news-publish", "recrawl-fleet"])
def test_executor_ray_without_ray_is_one_line_naming_the_extra(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "wl").mkdir()
    proc = _without_ray(args, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"ccrawl: {MISSING}"]
    assert "ccrawl[ray]" in MISSING
    assert proc.stdout == ""
    assert not (tmp_path / "fleet").exists() and not (tmp_path / "md").exists()  # refused before any work


@pytest.mark.parametrize(("args", "message"), [
    (["--shards", "0"], "--shards must be at least 1, not 0"),
    (["--shards", "2", "--run-args", "--shard 1"], "recrawl fleet sets --shard for each shard"),
    (["--shards", "2", "--publish-args", "--repo=other/x"], "recrawl fleet sets --repo for each shard"),
    (["--shards", "2", "--cpus-per-shard", "0"], "--cpus-per-shard must be more than 0"),
    (["--shards", "2", "--watch", "0"], "--watch must be more than 0"),
])
def test_fleet_flags_that_cannot_work_are_usage_errors(args: list[str], message: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from ccrawl.cli.main import main

    code = main(["recrawl", "fleet", "--from", str(tmp_path), "--repo", "me/x", "--work", str(tmp_path / "w"),
                 *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "w").exists()
