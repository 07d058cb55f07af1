"""deploy/slurm/markdown-export.sbatch, run here with bash and the variables a Slurm array sets (no cluster):
the array's tasks together convert every manifest shard once, each task its round-robin share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.testing.fakecc import FakeCCServer

SBATCH = Path(__file__).resolve().parents[2] / "deploy" / "slurm" / "markdown-export.sbatch"
CRAWL = "CC-MAIN-2099-01"
ENGINE_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
               "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE")


def sbatch_task(cc_env: dict[str, str], out: Path, task: int, low: int, count: int,
                **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in cc_env.items() if k not in ENGINE_VARS}
    env.update(CCRAWL=f"{sys.executable} -m ccrawl", CCRAWL_CRAWL=CRAWL, CCRAWL_SHARDS="0-1", CCRAWL_PUSH="false",
               CCRAWL_OUT=str(out), SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN=str(low),
               SLURM_ARRAY_TASK_MAX=str(low + count - 1), SLURM_ARRAY_TASK_COUNT=str(count),
               SLURM_CPUS_PER_TASK="1", PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    env.update(extra)
    return subprocess.run(["bash", str(SBATCH)], capture_output=True, text=True, env=env, timeout=180)


def test_an_array_of_two_converts_each_manifest_shard_exactly_once(cc_env: dict[str, str], tmp_path: Path,
                                                                   fakecc: FakeCCServer) -> None:
    out = tmp_path / "md"
    done: dict[str, list[str]] = {}
    for task in (3, 4):  # sbatch --array=3-4
        proc = sbatch_task(cc_env, out, task, 3, 2)
        assert proc.returncode == 0, proc.stderr
        assert f"task {task - 3} of 2 (from slurm: SLURM_ARRAY_TASK_ID={task}" in proc.stderr
        files = sorted(p.name for p in (out / f"task-{task}").rglob("*.parquet"))
        done[f"task-{task}"] = files
    assert done == {"task-3": ["000000.parquet"], "task-4": ["000001.parquet"]}


@pytest.mark.parametrize(("extra", "needle"), [
    ({"SLURM_ARRAY_TASK_STEP": "2"}, "stepped array"),
    ({"CCRAWL_SHARDS": "all"}, "--shard auto needs an explicit --shards N-M"),
])
def test_a_misconfigured_array_is_a_usage_error(cc_env: dict[str, str], tmp_path: Path, extra: dict[str, str],
                                                needle: str) -> None:
    proc = sbatch_task(cc_env, tmp_path / "md", 0, 0, 2, **extra)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr


def test_outside_an_array_the_script_says_how_to_submit(cc_env: dict[str, str], tmp_path: Path) -> None:
    env = {k: v for k, v in cc_env.items() if k not in ENGINE_VARS}
    env.update(CCRAWL_CRAWL=CRAWL, CCRAWL_SHARDS="0-1", CCRAWL_OUT=str(tmp_path))
    proc = subprocess.run(["bash", str(SBATCH)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0 and "submit with sbatch --array=LOW-HIGH" in proc.stderr
