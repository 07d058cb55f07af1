"""Pool workers end with the process that made their pool, even when it is SIGKILLed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ccrawl.testing.procs import running, still_running_after

REPO = Path(__file__).resolve().parents[2]

_OWNER = textwrap.dedent("""
    import json, multiprocessing, os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from ccrawl.scale.lifeline import exit_with

    def pid():
        time.sleep(0.2)  # both workers answer, not one twice
        return os.getpid()

    if __name__ == "__main__":
        ctx = multiprocessing.get_context(sys.argv[1])
        init = exit_with if sys.argv[2] == "lifeline" else None
        pool = ProcessPoolExecutor(2, mp_context=ctx, initializer=init, initargs=(os.getpid(),) if init else ())
        workers = sorted({f.result() for f in [pool.submit(pid) for _ in range(4)]})
        print(json.dumps(workers), flush=True)
        time.sleep(600)
""")


def _owner(tmp_path: Path, context: str, init: str) -> tuple[subprocess.Popen[str], list[int]]:
    script = tmp_path / "owner.py"
    script.write_text(_OWNER)
    proc = subprocess.Popen([sys.executable, str(script), context, init], cwd=REPO, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    workers = json.loads(proc.stdout.readline())
    assert len(workers) == 2
    return proc, workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("context", ["forkserver", "fork"])
def test_pool_workers_exit_when_their_owner_is_sigkilled(tmp_path: Path, context: str) -> None:
    proc, workers = _owner(tmp_path, context, "lifeline")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert still_running_after(workers, 15) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_without_the_lifeline_forkserver_workers_outlive_a_sigkilled_owner(tmp_path: Path) -> None:
    # What the lifeline is for: the same pool without it keeps its workers after the owner is gone.
    proc, workers = _owner(tmp_path, "forkserver", "none")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    try:
        assert still_running_after(workers, 2) == workers
    finally:
        for pid in workers:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
