"""The five tiers at their boundaries, and the seed tier rule."""

from __future__ import annotations

import pytest

from ccrawl.crawl.tiers import TIERS, check_change_rate, daily_budget, seed_tier, tier_of
from ccrawl.errors import UsageError


@pytest.mark.parametrize(
    ("rank", "rate", "tier"),
    [
        (1, 0.81, 1), (100_000, 0.81, 1), (100_000, 0.8, 2), (100_001, 0.9, 2), (1_000_000, 0.5, 2),
        (1_000_000, 0.49, 3), (1_000_001, 0.9, 3), (5_000_000, 0.2, 3), (5_000_000, 0.19, 4),
        (5_000_001, 1.0, 4), (10_000_000, 0.0, 4), (10_000_001, 1.0, 5), (50, None, 4),
    ],
)
def test_tier_boundaries(rank: int, rate: float | None, tier: int) -> None:
    assert tier_of(rank, rate).number == tier


def test_seed_tier_never_1() -> None:
    assert [seed_tier(r) for r in (1, 1_000_000, 1_000_001, 5_000_000, 10_000_000, 10_000_001)] == [2, 2, 3, 3, 4, 5]


def test_intervals_and_bad_inputs() -> None:
    assert [t.interval for t in TIERS] == ["24h", "3d", "7d", "30d", "on-demand"]
    with pytest.raises(UsageError):
        check_change_rate(-0.1)
    with pytest.raises(UsageError):
        daily_budget(0)
    rows = daily_budget(10_000)
    assert abs(sum(int(r["pages_per_day"]) for r in rows) - 864_000_000) <= 5  # type: ignore[call-overload]
