"""FetchConfig defaults and the seed's --dns-lookups rule."""

from __future__ import annotations

import pytest

from ccrawl.errors import UsageError
from ccrawl.fetch import FetchConfig, default_dns_lookups


@pytest.mark.parametrize(("workers", "lookups"), [(1, 16), (128, 16), (256, 32), (800, 100), (1024, 128), (5000, 128)])
def test_dns_lookups_default_is_an_eighth_of_workers_floored_at_16_capped_at_128(workers: int, lookups: int) -> None:
    assert default_dns_lookups(workers) == lookups


def test_defaults_are_the_seeds() -> None:
    cfg = FetchConfig()
    assert (cfg.timeout, cfg.max_body, cfg.delay, cfg.robots, cfg.robots_timeout, cfg.max_redirects) == (
        30.0,
        10 * 1024 * 1024,
        1.0,
        False,
        10.0,
        5,
    )
    assert cfg.accept_encoding == "gzip, deflate, br, zstd"


@pytest.mark.parametrize(
    ("field", "value"),
    [("timeout", 0), ("max_body", 0), ("delay", -1), ("concurrency", 0), ("dns_lookups", 0), ("max_redirects", -1)],
)
def test_impossible_values_are_usage_errors_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(UsageError, match=field):
        FetchConfig(**{field: value}).validate()
