"""A real ``ccrawl news publish`` process killed with SIGKILL mid-month, then run again to the end.

The month must come out whole: one shard per archive of the manifest, none missing, none twice, and the
ledgers counting each shard exactly once (stats.csv against the rows actually in the shards).
"""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccrawl.hub.localhub import LocalRepo
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.news import NewsSite

from .conftest import cli_env

pytestmark = pytest.mark.slow


def _cmd(hub: Path, staging: Path) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "news", "publish", "--months", "2026/05", "--repo", "kill/news",
            "--hub", str(hub), "--staging", str(staging), "--commit-every", "3", "--workers", "2", "-o", "jsonl"]


def test_sigkill_then_resume_has_no_gap_and_no_double_count(fakecc: FakeCCServer, news_site: NewsSite,
                                                           tmp_path: Path) -> None:
    import duckdb

    env = dict(os.environ)
    env.update(cli_env(fakecc, tmp_path))
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    hub, staging = tmp_path / "hub", tmp_path / "staging"
    repo = LocalRepo(hub, "kill/news")
    fakecc.faults.latency = 0.15  # every archive takes a moment, so the kill lands mid-month
    proc = subprocess.Popen(_cmd(hub, staging), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if repo.exists_repo() and repo.head() and len(repo.list_files("data")) >= 3:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the first commit never landed")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    first = {f.path for f in repo.list_files("data")}
    assert 3 <= len(first) < 24, "the kill must land mid-month for this test to mean anything"
    fakecc.faults.latency = 0.0
    done = subprocess.run(_cmd(hub, staging), env=env, capture_output=True, timeout=180)
    assert done.returncode == 0, done.stderr.decode()
    assert b"resuming kill/news" in done.stderr
    snap = repo.snapshot_dir()
    names = sorted(p.name for p in (snap / "data/2026/05").glob("*.parquet"))
    want = sorted(p.rsplit("/", 1)[1].replace(".warc.gz", ".parquet") for p in news_site.months["2026/05"])
    assert names == want  # none missing, none extra
    stats = list(csv.DictReader(io.StringIO((snap / "stats.csv").read_text())))
    assert len(stats) == 1
    rows, articles = duckdb.connect().execute(
        "SELECT count(*), count(*) FILTER (WHERE fetch_status = 200 AND "
        "content_mime_detected IN ('text/html', 'application/xhtml+xml')) "
        f"FROM '{snap}/data/2026/05/*.parquet'"
    ).fetchone()  # type: ignore[misc]
    assert int(stats[0]["files"]) == 24 and stats[0]["complete"] == "true"
    assert int(stats[0]["records"]) == rows and int(stats[0]["articles"]) == articles
    langs = list(csv.DictReader(io.StringIO((snap / "languages.csv").read_text())))
    assert sum(int(r["articles"]) for r in langs) == articles
    ids = duckdb.connect().execute(
        f"SELECT count(*), count(DISTINCT warc_record_id) FROM '{snap}/data/2026/05/*.parquet'"
    ).fetchone()
    assert ids is not None and ids[0] == ids[1]
    assert not list(staging.rglob("*.parquet")) and not list(staging.rglob("*.tmp"))
