"""deploy/kubernetes/recrawl-fleet.yaml, run here: both containers' command lines, with the variables the Job
sets (JOB_COMPLETION_INDEX, each container's env), over the loopback synthetic web and a local hub.

What a pod of the Job does: the run container crawls shard i, the publish container commits it; the rows
on the hub are exactly the work-list URLs ``url shard`` assigns to shard i, under shard i's ledger.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from ccrawl.testing.synthweb import SynthWeb

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "recrawl-fleet.yaml"
ENGINE_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
               "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE", "CCRAWL_HUB")
#: Loopback only: the synthetic web's hosts resolve to 127.0.0.1, no politeness delay.
LOOPBACK = ["--column", "url", "--delay", "0", "--resolve", "*.test=127.0.0.1", "--progress", "none"]


def container_argv(container: dict[str, Any], env: dict[str, str], work: Path) -> list[str]:
    """The container's command as the kubelet would run it: $(VAR) from its env, /work on ``work``."""
    values = {e["name"]: e.get("value", "") for e in container.get("env", [])} | env

    def expand(arg: str) -> str:
        arg = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: values[m.group(1)], arg)
        return str(work) + arg[len("/work"):] if arg == "/work" or arg.startswith("/work/") else arg

    argv = [expand(a) for a in container["command"]]
    assert argv[0] == "ccrawl"
    return [sys.executable, "-m", "ccrawl", *argv[1:]]


def test_a_pod_of_the_job_crawls_and_publishes_exactly_its_shard(web: SynthWeb, tmp_path: Path,
                                                                 write_worklist: Any) -> None:
    doc = yaml.safe_load(MANIFEST.read_text())
    count = doc["spec"]["completions"]
    containers = {c["name"]: c for c in doc["spec"]["template"]["spec"]["containers"]}
    urls = web.page_urls()
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    base = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    owners = subprocess.run([sys.executable, "-m", "ccrawl", "url", "shard", "--shards", str(count), "-o", "jsonl",
                             *urls], capture_output=True, text=True, env=base, timeout=60)
    assert owners.returncode == 0, owners.stderr
    by_shard: dict[int, list[str]] = {}
    for row in map(json.loads, owners.stdout.splitlines()):
        by_shard.setdefault(row["shard"], []).append(row["url"])
    index = max(by_shard, key=lambda s: len(by_shard[s]))  # the index with the most to do
    expected = sorted(by_shard[index])
    assert 0 < len(expected) < len(urls)

    work, hub = tmp_path / "work", tmp_path / "hub"
    work.mkdir()
    env = {**base, "JOB_COMPLETION_INDEX": str(index), "CCRAWL_HUB": str(hub), "HF_TOKEN": "unused-by-a-local-hub"}
    run = subprocess.run([*container_argv(containers["run"], {"CCRAWL_FROM": str(wl)}, work), *LOOPBACK],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"recrawl: this run was shard {index} of {count} (from kubernetes: JOB_COMPLETION_INDEX={index})" \
        in run.stderr
    assert f"{len(expected)} fetched" in run.stderr
    pub = subprocess.run([*container_argv(containers["publish"], {}, work), "--progress", "none"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert pub.returncode == 0, pub.stderr
    assert "the crawl is done and the directory is drained; stopping" in pub.stderr  # --watch ends by itself
    repo = doc["spec"]["template"]["spec"]["containers"][1]["env"][0]["value"]
    ledgers = sorted(p.name for p in hub.rglob("ledger/*.csv"))
    assert ledgers == [f"k8s-shard{index}of{count}.csv"], (ledgers, repo)
    data = sorted(hub.rglob(f"data/k8s-shard{index}of{count}-*.parquet"))
    assert data
    published = sorted(u for f in data for u in pq.read_table(f, columns=["url"]).column("url").to_pylist())
    assert published == expected
