"""A real ``ccrawl urls publish`` killed with SIGKILL after its first commit, then run again to the end.

No shard missing, none uploaded twice (each shard's content appears in exactly one commit of the
history), and stats.csv totals equal to the rows on the hub.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from ccrawl.datasets.publish_urls import shard_path
from ccrawl.hub.localhub import LocalRepo
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.columnar import part_paths

from .conftest import CRAWL, cli_env

pytestmark = pytest.mark.slow
OTHER = "CC-MAIN-2025-13"
REPO = "kill/urls"


def _cmd(hub: Path, staging: Path) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "urls", "publish", "-c", f"{CRAWL},{OTHER}", "--repo", REPO,
            "--hub", str(hub), "--staging", str(staging), "--commit-every", "1", "--workers", "1", "-o", "jsonl"]


def _uploads(repo: LocalRepo) -> dict[str, int]:
    """How many commits of the history brought each shard's content in."""
    counts: dict[str, int] = {}
    before: dict[str, list[object]] = {}
    for rec in repo.history():
        for path, meta in rec["files"].items():
            if path.startswith("data/") and before.get(path) != meta:
                counts[path] = counts.get(path, 0) + 1
        before = rec["files"]
    return counts


def test_sigkill_then_resume_no_gap_no_double_upload(mirrorcc: FakeCCServer, tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(cli_env(mirrorcc, tmp_path))
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    hub, staging = tmp_path / "hub", tmp_path / "staging"
    repo = LocalRepo(hub, REPO)
    parts = [p for p in part_paths(mirrorcc.site.root) if "/subset=warc/" in str(p)
             and (f"crawl={CRAWL}/" in str(p) or f"crawl={OTHER}/" in str(p))]
    want = sorted(shard_path(str(p).split("crawl=")[1].split("/")[0], str(p)) for p in parts)
    assert len(want) >= 4
    mirrorcc.faults.latency = 0.3  # every read takes a moment, so the kill lands mid-run
    proc = subprocess.Popen(_cmd(hub, staging), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if repo.exists_repo() and repo.head() and repo.list_files("data"):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the first commit never landed")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        mirrorcc.faults.latency = 0.0
    first = {f.path for f in repo.list_files("data")}
    assert 1 <= len(first) < len(want), "the kill must land mid-run for this test to mean anything"
    done = subprocess.run(_cmd(hub, staging), env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert b"resuming kill/urls" in done.stderr
    actions = [json.loads(line)["action"] for line in done.stdout.decode().splitlines()]
    assert actions.count("exists") == len(first)
    assert sorted(f.path for f in repo.list_files("data")) == want  # none missing, none extra
    assert set(_uploads(repo).values()) == {1}  # none uploaded twice
    snap = repo.snapshot_dir()
    ledger = {r["crawl"]: r for r in csv.DictReader(io.StringIO((snap / "stats.csv").read_text()))}
    for crawl in (CRAWL, OTHER):
        got = duckdb.connect().execute(f"SELECT count(*) FROM '{snap}/data/{crawl}/*.parquet'").fetchone()
        assert got is not None and int(ledger[crawl]["rows"]) == got[0]
        assert ledger[crawl]["complete"] == "true"
    assert not list(staging.rglob("*.parquet")) and not list(staging.rglob("*.tmp"))
