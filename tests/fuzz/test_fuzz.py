"""The fuzz targets of :mod:`ccrawl.testing.fuzz`, a few seconds each (``bench/fuzz.py`` runs them for long)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ccrawl.testing.fuzz import TARGETS

# A few seconds per target on a shared 2-core machine. No wall-clock deadline (a loaded machine makes
# it flaky): the h2m check bounds CPU time per input byte, and pytest-timeout catches a hang.
_EXAMPLES = {"warc": 150, "members": 200, "url": 300, "h2m": 60}


def _run(name: str) -> None:
    target = TARGETS[name]

    @settings(max_examples=_EXAMPLES[name], deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(target.strategy)
    def run(example: Any) -> None:
        target.check(example)

    run()


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_holds(name: str) -> None:
    _run(name)
