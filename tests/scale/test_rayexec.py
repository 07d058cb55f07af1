"""``ccrawl.scale.rayexec.cluster`` starting (and stopping) a real local Ray cluster of its own.

The other Ray tests share the module-scoped ``ray_cluster`` fixture, which ``cluster()`` uses as it is;
here no cluster is initialised, so ``cluster()`` starts one, as ``--executor ray`` does for a user.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from ccrawl.scale.rayexec import cluster

pytestmark = pytest.mark.timeout(120)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _worker_pid() -> int:
    return os.getpid()


def test_a_cluster_started_here_is_stopped_whole_without_waiting_out_a_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    import ray

    assert not ray.is_initialized(), "another test left a Ray cluster initialised"
    lines: list[str] = []
    started: list[int] = []
    with cluster(num_cpus=1, log=lines.append) as r:
        from ray._private import worker

        started = [info.process.pid for infos in worker._global_node.all_processes.values() for info in infos]
        started.append(r.get(r.remote(num_cpus=1)(_worker_pid).remote()))
        assert all(_alive(pid) for pid in started)
        leaving = time.monotonic()
    took = time.monotonic() - leaving
    assert lines and lines[0].startswith("ray: started a local Ray cluster with 1 CPU(s) in ")
    assert not ray.is_initialized()
    # every process the cluster ran (GCS, raylet, monitors, dashboard, the task's worker) is gone
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in started if _alive(pid)] == []
    # Ray gives each process a second after SIGTERM; the autoscaler monitor never took SIGTERM, so every
    # run waited that second out (1.35 s of shutdown, 1.0 s of it the monitor)
    assert took < 1.0, f"stopping the local cluster took {took:.2f}s"


def test_a_cluster_already_initialised_is_used_and_left_running(ray_cluster: Any) -> None:
    with cluster() as r:
        assert r is ray_cluster
    assert ray_cluster.is_initialized()
