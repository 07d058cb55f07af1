"""deploy/kubernetes and deploy/slurm: the Job manifest's structure, and every flag the recipes pass exists.

Running their command lines with the engine's variables: tests/recrawl/test_k8s_recipe.py (the Job's two
containers) and tests/markdown/test_slurm_recipe.py (the array script).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFEST = DEPLOY / "kubernetes" / "recrawl-fleet.yaml"
SBATCH = DEPLOY / "slurm" / "markdown-export.sbatch"
COMMANDS = {
    ("recrawl", "run"): "ccrawl.cli.recrawl_run:run",
    ("recrawl", "publish"): "ccrawl.cli.publish:publish",
    ("markdown", "export"): "ccrawl.cli.markdown:export",
}


def job() -> dict[str, Any]:
    docs = list(yaml.safe_load_all(MANIFEST.read_text()))
    assert len(docs) == 1 and isinstance(docs[0], dict)
    return docs[0]


def click_command(words: tuple[str, str]) -> click.Command:
    module, attr = COMMANDS[words].split(":")
    cmd = getattr(importlib.import_module(module), attr)
    assert isinstance(cmd, click.Command)
    return cmd


def flags_of(cmd: click.Command) -> set[str]:
    return {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}


def option_value(argv: list[str], flag: str) -> str:
    i = argv.index(flag)
    return argv[i + 1]


def test_the_job_is_an_indexed_batch_v1_job_with_a_consistent_size() -> None:
    doc = job()
    assert doc["apiVersion"] == "batch/v1" and doc["kind"] == "Job"
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])  # a DNS-1123 label
    spec = doc["spec"]
    assert spec["completionMode"] == "Indexed"
    assert isinstance(spec["completions"], int) and spec["completions"] >= 1
    assert isinstance(spec["parallelism"], int) and 1 <= spec["parallelism"] <= spec["completions"]
    pod = spec["template"]["spec"]
    # in-place restarts keep the emptyDir (captures, checkpoint) across an exit 75
    assert pod["restartPolicy"] == "OnFailure"
    # the API server refuses backoffLimitPerIndex and podFailurePolicy unless restartPolicy is Never
    assert "backoffLimitPerIndex" not in spec and "podFailurePolicy" not in spec
    assert isinstance(spec["backoffLimit"], int) and spec["backoffLimit"] > 0
    assert pod["terminationGracePeriodSeconds"] >= 120  # time for a seal on SIGTERM
    # the template's labels must not carry the Job controller's own selector keys
    assert not any(k.startswith("batch.kubernetes.io/") for k in spec["template"]["metadata"].get("labels", {}))


def test_run_and_publish_share_a_volume_and_take_shard_auto_with_the_jobs_count() -> None:
    spec = job()["spec"]
    pod = spec["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    assert set(containers) == {"run", "publish"}
    volumes = {v["name"] for v in pod["volumes"]}
    mounts = [{(m["name"], m["mountPath"]) for m in c["volumeMounts"]} for c in containers.values()]
    shared = mounts[0] & mounts[1]
    assert shared and {name for name, _ in shared} <= volumes
    mount = next(iter(shared))[1]
    for name, words in (("run", ("recrawl", "run")), ("publish", ("recrawl", "publish"))):
        c = containers[name]
        assert c["image"] and all(isinstance(a, str) for a in c["command"]), "command must be a list of strings"
        argv = c["command"]
        assert tuple(argv[:3]) == ("ccrawl", *words)
        assert option_value(argv, "--shard") == "auto"
        # a Job does not export its completions: --shards carries them and must match
        assert int(option_value(argv, "--shards")) == spec["completions"]
        unknown = {a for a in argv[3:] if a.startswith("--")} - flags_of(click_command(words))
        assert not unknown, f"{name}: flags the command does not take: {unknown}"
        declared = {e["name"] for e in c.get("env", [])}
        used = set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", " ".join(argv)))
        assert used <= declared, f"{name}: $(VAR) without an env entry: {used - declared}"
    run, pub = containers["run"]["command"], containers["publish"]["command"]
    assert option_value(run, "--out") == option_value(pub, "--dir")
    assert option_value(run, "--out").startswith(mount + "/")
    assert option_value(run, "--state") == option_value(pub, "--state")
    assert option_value(pub, "--watch") not in ("0", "0s")  # publish as shards close, stop when the crawl is done
    assert any(e["name"] == "HF_TOKEN" and "secretKeyRef" in e.get("valueFrom", {})
               for e in containers["publish"]["env"])


def test_the_slurm_script_passes_only_flags_markdown_export_takes() -> None:
    text = SBATCH.read_text()
    assert text.startswith("#!/bin/bash\n") and "#SBATCH --array" not in text.split("set -euo")[1]
    exec_line = text[text.index("exec $CCRAWL"):].split("\n\n")[0]
    flags = {f.split("=")[0] for f in re.findall(r"(--[a-z][a-z-]*(?:=)?)", exec_line)}
    flags.discard("--repo")  # passed through repo_args, checked below with the rest
    assert "--shard" in flags and "--shards" in flags
    assert not flags - flags_of(click_command(("markdown", "export"))) - {"-c"}
    assert "--repo" in flags_of(click_command(("markdown", "export")))


@pytest.mark.parametrize("path", [MANIFEST, SBATCH])
def test_the_recipes_are_listed_in_the_deploy_readme(path: Path) -> None:
    assert path.relative_to(DEPLOY).as_posix() in (DEPLOY / "README.md").read_text()
