"""Shared fixtures: where the shared corpus is, and the twin-parity helper."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ccrawl import accel

REPO = Path(__file__).resolve().parent.parent


def corpus_path() -> Path | None:
    """``$CCRAWL_CORPUS`` or ``../shared/corpus`` beside the repo, when it exists."""
    env = os.environ.get("CCRAWL_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus; tests that need it skip with the reason when it is absent."""
    path = corpus_path()
    if path is None:
        pytest.skip("shared corpus not found: set CCRAWL_CORPUS or place it at ../shared/corpus")
    return path


def native_or_skip(name: str):  # type: ignore[no-untyped-def]
    """The compiled module for a parity test.

    With extensions disabled the native side is skipped (the run with extensions on covers
    it). With them enabled a missing module is a failure, not a skip: a broken build must
    not hide behind its twin.
    """
    if accel.extensions_disabled():
        pytest.skip("CCRAWL_NO_EXTENSIONS is set: only the pure-Python twin runs in this pass")
    module = accel.native(name)
    assert module is not None, f"ccrawl._native.{name} did not import; build with `pip install -e .`"
    return module


@pytest.fixture(scope="module")
def ray_cluster():  # type: ignore[no-untyped-def]
    """A real local Ray cluster of 2 CPUs, one per test module, shut down (raylet and workers) in teardown.

    Never skipped: Ray is in the dev extra the test command installs. ccrawl's ``--executor ray`` finds
    the initialised cluster and uses it; a subprocess joins it at ``ray.get_runtime_context().gcs_address``.
    """
    import time

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from ccrawl.scale.rayexec import messages_to_stderr

    messages_to_stderr()
    started = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False, address="local")
    try:
        took = time.monotonic() - started
        assert took < 60, f"the local Ray cluster took {took:.0f}s to start"
        yield ray
    finally:
        ray.shutdown()
