"""recrawl fleet over the loopback synthetic web and the fake Hub: local threads and a real local Ray cluster.

Each test checks what a fleet must publish: every work-list URL in exactly one published row, each shard's
rows exactly the URLs ``url shard`` assigns to it, one ledger per shard whose rows name each data file once.
The Ray tests kill a shard task with SIGKILL mid-run (Ray retries it; it resumes) and stop a driver with
Ctrl-C (the tasks stop cleanly; a rerun finishes). One 2-CPU cluster serves the module.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.testing.fakehub import FakeHub
from ccrawl.testing.nginx import free_port
from ccrawl.testing.synthweb import SynthWeb

pytestmark = pytest.mark.timeout(150)

REPO_ID = "test/fleet"
SHARDS = 3
TOKEN = "hf_test_token"
ENGINE_VARS = ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "RANK", "WORLD_SIZE", "CCRAWL_HUB")
#: Loopback, paced so a kill lands while the shard still works, light on processes (3 shards on 2 CPUs).
RUN_ARGS = ("--column url --resolve *.test=127.0.0.1 --delay 100ms --timeout 5s --shard-size 24KB --workers 8 "
            "--fetchers 1 --writers 1 --no-extract")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    for name in ENGINE_VARS:
        monkeypatch.delenv(name, raising=False)
    with FakeHub(tmp_path / "fakehub") as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
        yield fake


def worklist_urls(web: SynthWeb) -> list[str]:
    """Half the synthetic web's pages (every host, every other page): enough for seals and commits to
    interleave with a kill, few enough that three shards of processes finish quickly on two cores."""
    return web.page_urls()[::2]


def owners(urls: list[str]) -> dict[int, list[str]]:
    """``url shard --shards 3``: the assignment every published shard must match."""
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    out = subprocess.run([sys.executable, "-m", "ccrawl", "url", "shard", "--shards", str(SHARDS), "-o", "jsonl",
                          *urls], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    by: dict[int, list[str]] = {}
    for row in map(json.loads, out.stdout.splitlines()):
        by.setdefault(row["shard"], []).append(row["url"])
    return by


def fleet_argv(wl: Path, work: Path, *extra: str) -> list[str]:
    return ["recrawl", "fleet", "--from", str(wl), "--repo", REPO_ID, "--shards", str(SHARDS), "--work", str(work),
            "--watch", "300ms", "--commit-every", "2", "--cpus-per-shard", "0.5", "--run-args", RUN_ARGS,
            "--progress", "none", *extra]


def assert_published_exactly_once(hub: FakeHub, urls: list[str]) -> None:
    repo = hub.local_repo(REPO_ID)
    want = owners(urls)
    seen: Counter[str] = Counter()
    for i in range(SHARDS):
        files = [f.path for f in repo.list_files("data/") if f.path.startswith(f"data/fleet-shard{i}of{SHARDS}-")]
        got = [u for f in files for u in pq.read_table(repo.local_path(f), columns=["url"]).column("url").to_pylist()]
        seen.update(got)
        assert sorted(got) == sorted(want.get(i, [])), f"shard {i}"
        # its ledger names each of its data files once, with the rows the file holds
        ledger = list(csv.DictReader(io.StringIO(repo.local_path(f"ledger/fleet-shard{i}of{SHARDS}.csv").read_text())))
        named = [r["file"] for r in ledger if r["file"]]
        assert sorted(named) == sorted(files) and len(set(named)) == len(named), f"shard {i} ledger"
        assert sum(int(r["rows"]) for r in ledger) == len(got)
        assert ledger[-1]["done"] in ("1", "true", "True")
    ledgers = sorted(f.path for f in repo.list_files("ledger/"))
    assert ledgers == [f"ledger/fleet-shard{i}of{SHARDS}.csv" for i in range(SHARDS)]
    assert sorted(seen) == sorted(urls) and set(seen.values()) == {1}, "a URL lost or published twice"


def test_local_fleet_crawls_and_publishes_every_shard_once(web: SynthWeb, hub: FakeHub, tmp_path: Path,
                                                           write_worklist: Any,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    urls = worklist_urls(web)
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    port = free_port()
    seen: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:  # the fleet's one page, read as a dashboard would while the shards work
        while not done.is_set():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=5) as r:
                    seen.append(json.loads(r.read())["latest"])
            except OSError:
                pass
            time.sleep(0.3)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert main(fleet_argv(wl, tmp_path / "work", "-o", "jsonl", "--status-addr", f"127.0.0.1:{port}")) == 0
    finally:
        done.set()
        watcher.join(10)
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert sorted(r["shard"] for r in rows) == [0, 1, 2] and {r["attempt"] for r in rows} == {1}
    assert "recrawl fleet: 3 shard(s)" in err and "(3 of 3 done)" in err and "status page on" in err
    # the shards' progress, summed, said as shards end: fetched, failed and where the shards are
    progress = re.findall(r"recrawl fleet: ([\d,]+) fetched, ([\d,]+) failed.*; shards (.*)", err)
    assert progress and int(progress[-1][0].replace(",", "")) > 0, err
    assert_published_exactly_once(hub, urls)
    # one page for every shard: each shard has a row, and the sums are the shards' own counts
    # (the page refreshes every 2 s and these shards take ~5 s: that it shows counts moving is the
    # browser test's job, tests/recrawl/test_status_page.py; the fleet's last line above has the totals)
    ticked = [t for t in seen if t.get("stages")]
    assert ticked and set(ticked[-1]["stages"]) == {"shard 0", "shard 1", "shard 2"}
    for t in ticked:
        assert t["fetched"] == sum(row["fetched"] for row in t["stages"].values())


def _kill_one_task_mid_run(work: Path, killed: list[int]) -> None:
    """SIGKILL the Ray worker running shard 0 once its crawl has sealed something and is not done."""
    d = work / f"shard-0of{SHARDS}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        sealed = list((d / "captures").glob("*.parquet"))
        ledger_done = (d / "recrawl.json").exists() and '"done": true' in (d / "recrawl.json").read_text()
        if (d / "attempts").exists() and sealed and not ledger_done:
            pid = int((d / "attempts").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.05)


def test_ray_fleet_with_a_task_sigkilled_mid_run_publishes_every_url_once(
        ray_cluster: Any, web: SynthWeb, hub: FakeHub, tmp_path: Path, write_worklist: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    urls = worklist_urls(web)
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    work = tmp_path / "work"
    killed: list[int] = []
    killer = threading.Thread(target=_kill_one_task_mid_run, args=(work, killed), daemon=True)
    killer.start()
    code = main(fleet_argv(wl, work, "--executor", "ray", "-o", "jsonl"))
    killer.join(5)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert killed, "the shard finished before it could be killed"
    rows = {r["shard"]: r for r in map(json.loads, out.splitlines())}
    assert sorted(rows) == [0, 1, 2]
    assert rows[0]["attempt"] == 2 and rows[1]["attempt"] == rows[2]["attempt"] == 1  # Ray retried the killed one
    attempts = (work / f"shard-0of{SHARDS}" / "attempts").read_text().split()
    assert int(attempts[0]) == killed[0] and int(attempts[2]) != killed[0]
    assert_published_exactly_once(hub, urls)


def test_ctrl_c_on_the_driver_stops_the_tasks_and_a_rerun_finishes(
        ray_cluster: Any, web: SynthWeb, hub: FakeHub, tmp_path: Path, write_worklist: Any) -> None:
    urls = worklist_urls(web)
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    work = tmp_path / "work"
    argv = [sys.executable, "-m", "ccrawl", *fleet_argv(wl, work, "--executor", "ray", "--ray-address",
                                                        str(ray_cluster.get_runtime_context().gcs_address))]
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    driver = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(work.glob("shard-*/captures/*.parquet")):
        time.sleep(0.05)
    assert driver.poll() is None, "the fleet ended before it could be interrupted"
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    assert "ray: cancelled 3 shards still running; the next run resumes them" in err.decode()
    # no shard process is left running: every crawl and publisher of this fleet has exited
    time.sleep(1)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(work) not in ps, [ln for ln in ps.splitlines() if str(work) in ln]
    # the crawls stopped cleanly: checkpoints written, none done yet for at least one shard
    states = [json.loads(p.read_text()) for p in work.glob("shard-*/recrawl.json")]
    assert states and not all(s.get("done") for s in states)
    rerun = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "(3 of 3 done)" in rerun.stderr and "attempt 2" in rerun.stderr  # each shard's second start resumed
    assert_published_exactly_once(hub, urls)


def test_ctrl_c_on_a_local_fleet_stops_its_processes_sealed(web: SynthWeb, hub: FakeHub, tmp_path: Path,
                                                            write_worklist: Any) -> None:
    wl = write_worklist(tmp_path / "wl", worklist_urls(web), parts=2)
    work = tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if k not in ENGINE_VARS}
    driver = subprocess.Popen([sys.executable, "-m", "ccrawl", *fleet_argv(wl, work)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(work.glob("shard-*/captures/*.parquet")):
        time.sleep(0.05)
    assert driver.poll() is None, "the fleet ended before it could be interrupted"
    driver.send_signal(signal.SIGINT)  # the driver only: its children hear of it from the driver
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err.decode()
    assert err.decode().strip().endswith("ccrawl: interrupted")
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(work) not in ps, [ln for ln in ps.splitlines() if str(work) in ln]
    # nothing restarted after the stop: one start per shard
    assert all(len(p.read_text().splitlines()) == 1 for p in work.glob("shard-*/attempts"))
