"""The five recrawl tiers: which hosts to revisit how often, from harmonic rank and change rate.

=====  ================  ==============================================
Tier   Recrawl interval  Criteria
=====  ================  ==============================================
1      24 h              harmonic rank <= 100 K and change rate > 0.8
2      3 days            rank <= 1 M and change rate >= 0.5
3      7 days            rank <= 5 M and change rate >= 0.2
4      30 days           rank <= 10 M
5      on-demand         everything else
=====  ================  ==============================================

A host takes the first tier whose criteria it meets. ``crawl status`` splits a day's page budget
across the tiers (:func:`daily_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ccrawl.errors import UsageError


@dataclass(frozen=True, slots=True)
class Tier:
    number: int
    interval: str
    interval_hours: float | None
    """None for on-demand."""
    max_rank: int | None
    """Highest harmonic position the tier takes; None for no bound."""
    min_change_rate: float | None
    strict: bool
    """True when the change rate must be strictly above ``min_change_rate`` (tier 1)."""
    criteria: str


TIERS = (
    Tier(1, "24h", 24.0, 100_000, 0.8, True, "harmonic rank <= 100K and change rate > 0.8"),
    Tier(2, "3d", 72.0, 1_000_000, 0.5, False, "rank <= 1M and change rate >= 0.5"),
    Tier(3, "7d", 168.0, 5_000_000, 0.2, False, "rank <= 5M and change rate >= 0.2"),
    Tier(4, "30d", 720.0, 10_000_000, None, False, "rank <= 10M"),
    Tier(5, "on-demand", None, None, None, False, "everything else"),
)


def check_change_rate(rate: float) -> float:
    if not 0.0 <= rate <= 1.0:
        raise UsageError(f"--change-rate {rate:g}: a change rate is between 0 and 1")
    return rate


def tier_of(harmonic_pos: int, change_rate: float | None) -> Tier:
    """The first tier whose criteria the host meets; ``change_rate`` None means not measured."""
    for tier in TIERS:
        if tier.max_rank is not None and harmonic_pos > tier.max_rank:
            continue
        if tier.min_change_rate is not None:
            if change_rate is None:
                continue
            if tier.strict and not change_rate > tier.min_change_rate:
                continue
            if not tier.strict and not change_rate >= tier.min_change_rate:
                continue
        return tier
    return TIERS[-1]


def seed_tier(harmonic_pos: int) -> int:
    """The tier a seed gets: the best its rank allows, since a seed has no measured change rate.

    Tier 1 needs a change rate above 0.8, which nothing measured, so a seed is tier 2 at best:
    tier 2 is the top million, tier 3 the top five million, tier 4 the top ten, tier 5 the rest.
    """
    for tier in TIERS[1:4]:
        assert tier.max_rank is not None
        if harmonic_pos <= tier.max_rank:
            return tier.number
    return 5


#: Share of the day kept for on-demand (tier 5) fetches; tiers 1-4 split the rest.
ON_DEMAND_SHARE = 0.10


def daily_budget(pages_per_second: float) -> list[dict[str, object]]:
    """Rows of the day's page budget per tier at ``pages_per_second`` sustained.

    Tiers 1-4 share 90% of the day in proportion to the host visits they need per day (the
    hosts in their rank band over the interval in days); tier 5 keeps 10% for on-demand fetches.
    """
    if pages_per_second <= 0:
        raise UsageError(f"--throughput {pages_per_second:g}: pages per second must be > 0")
    total = pages_per_second * 86400
    rows: list[dict[str, object]] = []
    previous = 0
    visits: dict[int, float] = {}
    bands: dict[int, int] = {}
    for tier in TIERS[:4]:
        assert tier.max_rank is not None and tier.interval_hours is not None
        bands[tier.number] = tier.max_rank - previous
        previous = tier.max_rank
        visits[tier.number] = bands[tier.number] / (tier.interval_hours / 24.0)
    weight = sum(visits.values())
    for tier in TIERS:
        if tier.number <= 4:
            pages = total * (1 - ON_DEMAND_SHARE) * visits[tier.number] / weight
            per_visit: float | None = pages / visits[tier.number]
            hosts: int | None = bands[tier.number]
            host_visits: int | None = round(visits[tier.number])
        else:
            pages, per_visit, hosts, host_visits = total * ON_DEMAND_SHARE, None, None, None
        rows.append({
            "tier": tier.number,
            "interval": tier.interval,
            "criteria": tier.criteria,
            "hosts": hosts,
            "host_visits_per_day": host_visits,
            "pages_per_day": round(pages),
            "share": round(pages / total, 4),
            "pages_per_host_visit": round(per_visit, 1) if per_visit is not None else None,
        })
    return rows
