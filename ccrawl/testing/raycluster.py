"""A small local Ray cluster for tests and benchmarks: bounded start-up, nothing left behind.

``with local_ray(num_cpus=2) as ray:`` starts a single-node cluster in this process (no dashboard, no
usage stats) and shuts it down on exit, so a test module's fixture owns one cluster and its teardown
reaps the raylet and the workers. ccrawl's ``--executor ray`` sees the initialised cluster and uses it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def local_ray(num_cpus: int = 2, *, start_timeout: float = 60.0) -> Iterator[Any]:
    """A running local cluster of ``num_cpus`` CPUs; raises if start-up takes longer than ``start_timeout``."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from ccrawl.scale.rayexec import messages_to_stderr

    messages_to_stderr()
    if ray.is_initialized():
        raise RuntimeError("a Ray cluster is already initialised in this process; one per test module")
    started = time.monotonic()
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
             address="local")
    took = time.monotonic() - started
    try:
        if took > start_timeout:
            raise RuntimeError(f"the local Ray cluster took {took:.0f}s to start (bound {start_timeout:.0f}s)")
        yield ray
    finally:
        ray.shutdown()


def address(ray: Any) -> str:
    """The running cluster's GCS address, for a subprocess to join with ``--ray-address``."""
    return str(ray.get_runtime_context().gcs_address)
