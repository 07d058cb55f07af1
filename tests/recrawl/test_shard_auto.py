"""``recrawl run --shard auto`` on the loopback synthetic web: the engine's task fetches exactly its shard's URLs
(the ones ``url shard`` assigns it), and the summary names the shard and where it came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from ccrawl.testing.synthweb import SynthWeb

ENGINE_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
               "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE")


def ccrawl(args: list[str], **engine: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    env.update(engine)
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize(("engine", "extra", "source"), [
    ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3",
      "SLURM_ARRAY_TASK_COUNT": "3"}, [], "slurm: SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1"),
    ({"JOB_COMPLETION_INDEX": "1"}, ["--shards", "3"], "kubernetes: JOB_COMPLETION_INDEX=1"),
])
def test_the_task_fetches_exactly_the_urls_url_shard_gives_it(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Callable[[Path], pa.Table],
    engine: dict[str, str], extra: list[str], source: str,
) -> None:
    urls = web.page_urls()[:60]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    owned = ccrawl(["url", "shard", "--shards", "3", "--shard", "1", "-o", "jsonl", *urls])
    assert owned.returncode == 0, owned.stderr
    expected = sorted(json.loads(line)["url"] for line in owned.stdout.splitlines())
    assert 0 < len(expected) < len(urls)
    out = tmp_path / "out"
    proc = ccrawl(["recrawl", "run", "--from", str(wl), "--column", "url", "--delay", "0", "--workers", "8",
                   "--resolve", "*.test=127.0.0.1", "--out", str(out), "--shard-size", "1MB", "--progress", "none",
                   "--shard", "auto", *extra, "-o", "json"], **engine)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["shard"], summary["shards"], summary["shard_source"]) == (1, 3, source.split(":")[0])
    assert summary["fetched"] == len(expected)
    assert f"recrawl: this run was shard 1 of 3 (from {source}" in proc.stderr
    assert sorted(read_captures(out).column("url").to_pylist()) == expected


def test_a_disagreeing_count_stops_before_any_fetch(web: SynthWeb, tmp_path: Path, write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:5], parts=1)
    out = tmp_path / "out"
    proc = ccrawl(["recrawl", "run", "--from", str(wl), "--column", "url", "--out", str(out), "--progress", "none",
                   "--shard", "auto", "--shards", "4"], RANK="0", WORLD_SIZE="2")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("ccrawl: --shard auto: --shards 4 disagrees with WORLD_SIZE=2 from rank; "
                                   "drop --shards or make them equal")
    assert not out.exists() or not any(out.iterdir())
