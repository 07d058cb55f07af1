"""``recrawl publish --watch`` started before ``recrawl run`` made its captures folder (issue #36, item 10).

The Kubernetes recipe starts the crawl and the publisher together, so the publisher may look before the
folder exists: with ``--watch`` it says once that it waits, then publishes what lands there. Without
``--watch`` a missing folder is still a usage error (exit 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from ccrawl.testing.fakehub import FakeHub
from tests.datasets.capture_shards import TOKEN, capture_rows, write_shard, write_state

REPO = "fleet/recrawl-wait"


def _env(hub: FakeHub) -> dict[str, str]:
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HUB_DISABLE_XET": "1",
           "CCRAWL_BACKOFF": "0.2", "CCRAWL_BACKOFF_MAX": "1"}
    env.pop("CCRAWL_HUB", None)
    return env


def _cmd(cap: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "recrawl", "publish", "--dir", str(cap), "--repo", REPO,
            "--server", "s1", "--max-stall", "60", "-o", "jsonl", *extra]


def test_watch_waits_for_the_captures_folder_then_publishes_what_lands_there(tmp_path: Path) -> None:
    cap = tmp_path / "m0" / "captures"  # neither it nor its parent exists yet
    state = tmp_path / "recrawl.json"
    with FakeHub(tmp_path / "hub") as hub:
        proc = subprocess.Popen(_cmd(cap, "--watch", "0.2", "--state", str(state)), env=_env(hub),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        said_waiting = threading.Event()

        def read_stderr() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line)
                if "waiting" in line and str(cap) in line:
                    said_waiting.set()

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            # the folder is made only once the publisher has said it waits (however slowly it started)
            assert said_waiting.wait(120), "".join(lines)
            assert proc.poll() is None, "".join(lines)  # still waiting, not exit 2
            write_shard(cap, "part-00000", capture_rows(0, 10))
            write_state(state, row=10, done=True, fetched=10)  # the crawl is done: the publisher stops by itself
            proc.wait(timeout=60)
            reader.join(10)
            assert proc.stdout is not None
            out = proc.stdout.read()  # the process has ended: its stdout is at its end
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        err = "".join(lines)
        assert proc.returncode == 0, err
        waiting = [line for line in err.splitlines() if "waiting" in line and str(cap) in line]
        assert len(waiting) == 1, err  # said once, not once per poll
        assert '"status": "committed"' in out or '"committed"' in out, out
        local = hub.local_repo(REPO)
        snap = local.snapshot_dir()
        assert len(list((snap / "data").glob("*.parquet"))) == 1
        assert not list(cap.glob("*.parquet"))  # committed, then deleted locally


def test_without_watch_a_missing_folder_is_still_exit_2(tmp_path: Path) -> None:
    cap = tmp_path / "nope"
    with FakeHub(tmp_path / "hub") as hub:
        proc = subprocess.run(_cmd(cap), env=_env(hub), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and str(cap) in proc.stderr


def test_watch_on_a_path_that_is_a_file_is_exit_2(tmp_path: Path) -> None:
    cap = tmp_path / "file"
    cap.write_text("x")
    with FakeHub(tmp_path / "hub") as hub:
        proc = subprocess.run(_cmd(cap, "--watch", "0.2"), env=_env(hub), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert str(cap) in proc.stderr
