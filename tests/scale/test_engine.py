"""``--shard auto``: each engine's variables, a disagreement and no engine, through the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.errors import UsageError
from ccrawl.scale.engine import ShardAssignment, resolve_shard, take

ENGINE_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
               "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE")
URLS = [f"http://www.site{i}.{'com' if i % 2 else 'org'}/p{i}" for i in range(40)]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    env.update(extra)
    return env


def ccrawl(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def owners(shards: int) -> dict[str, int]:
    proc = ccrawl(["url", "shard", "--shards", str(shards), "-o", "jsonl", *URLS], clean_env())
    assert proc.returncode == 0, proc.stderr
    return {row["url"]: row["shard"] for row in map(json.loads, proc.stdout.splitlines())}


@pytest.mark.parametrize(("env", "args", "index", "count", "source"), [
    # Slurm --array=1-4: task id 3 is the third task, shard 2 of 4
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4",
      "SLURM_ARRAY_TASK_COUNT": "4"}, [], 2, 4, "slurm"),
    ({"JOB_COMPLETION_INDEX": "1"}, ["--shards", "3"], 1, 3, "kubernetes"),
    ({"RANK": "4", "WORLD_SIZE": "5"}, [], 4, 5, "rank"),
    ({"RANK": "0", "WORLD_SIZE": "5"}, ["--shards", "5"], 0, 5, "rank"),
])
def test_url_shard_auto_prints_what_the_explicit_shard_prints(
    env: dict[str, str], args: list[str], index: int, count: int, source: str
) -> None:
    expected = sorted(u for u, s in owners(count).items() if s == index)
    assert expected, "the URL sample must give this shard something to print"
    proc = ccrawl(["url", "shard", "--shard", "auto", *args, "-o", "jsonl", *URLS], clean_env(**env))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sorted(r["url"] for r in rows) == expected
    assert {r["shard"] for r in rows} == {index}
    assert resolve_shard("auto", int(args[1]) if args else None, env).source == source


@pytest.mark.parametrize(("env", "args", "needle"), [
    ({}, [], "looked for SLURM_ARRAY_TASK_ID"),
    ({"RANK": "1", "WORLD_SIZE": "3"}, ["--shards", "4"], "--shards 4 disagrees with WORLD_SIZE=3"),
    ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3"}, ["--shards", "2"],
     "--shards 2 disagrees with SLURM_ARRAY_TASK_COUNT=3"),
    ({"JOB_COMPLETION_INDEX": "1"}, [], "give --shards equal to the Job's spec.completions"),
    ({"JOB_COMPLETION_INDEX": "3"}, ["--shards", "3"], "shard 3 is outside 0..2"),
    ({"RANK": "x", "WORLD_SIZE": "3"}, [], "RANK='x' is not a whole number"),
    ({"RANK": "1"}, [], "WORLD_SIZE is not"),
    ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2",
      "SLURM_ARRAY_TASK_COUNT": "3"}, [], "stepped array"),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "7",
      "SLURM_ARRAY_TASK_COUNT": "3"}, [], "not consecutive"),
])
@pytest.mark.parametrize("command", [["url", "shard", "http://a.com/"], ["recrawl", "publish", "--no-push"]])
def test_no_engine_or_a_disagreement_is_a_one_line_usage_error(
    tmp_path: Path, env: dict[str, str], args: list[str], needle: str, command: list[str]
) -> None:
    if command[0] == "recrawl":
        command = [*command, "--dir", str(tmp_path), "--hub", str(tmp_path / "hub"), "--repo", "a/b"]
    proc = ccrawl([*command, "--shard", "auto", *args], clean_env(**env))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccrawl: --shard auto") and needle in lines[0], lines
    assert "Traceback" not in proc.stderr


def test_publish_names_the_shard_and_its_source_in_the_ledger_path_and_summary(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    cap.mkdir()
    env = clean_env(SLURM_ARRAY_TASK_ID="6", SLURM_ARRAY_TASK_MIN="5", SLURM_ARRAY_TASK_MAX="8",
                    SLURM_ARRAY_TASK_COUNT="4")
    proc = ccrawl(["recrawl", "publish", "--dir", str(cap), "--shard", "auto", "--no-push", "--server", "node7",
                   "--hub", str(tmp_path / "hub"), "--repo", "me/rc"], env)
    assert proc.returncode == 0, proc.stderr
    assert "ledger ledger/node7-shard1of4.csv is shard 1 of 4 (from slurm: SLURM_ARRAY_TASK_ID=6" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "shard 1 of 4 (from slurm: SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=4)")


def test_an_explicit_index_keeps_its_old_meaning_and_ignores_the_environment() -> None:
    env = {"RANK": "2", "WORLD_SIZE": "9"}
    assert resolve_shard("3", 4, env) == ShardAssignment(3, 4, "flag")
    assert resolve_shard("0", None, env) == ShardAssignment(0, 1, "flag")
    with pytest.raises(UsageError, match=r"outside 0\.\.3"):
        resolve_shard("4", 4, env)
    with pytest.raises(UsageError, match="give a 0-based index or auto"):
        resolve_shard("first", 4, env)


def test_slurm_wins_over_a_rank_a_wrapper_also_set() -> None:
    env = {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2", "RANK": "5", "WORLD_SIZE": "8"}
    assert resolve_shard("auto", None, env) == ShardAssignment(
        0, 2, "slurm", "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2")


def test_take_splits_a_list_into_equal_disjoint_covering_shares() -> None:
    items = list(range(10))
    shares = [take(items, ShardAssignment(i, 3, "rank")) for i in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(x for s in shares for x in s) == items
