"""What the processes of a multi-process ``crawl run`` say to each other (see :mod:`ccrawl.crawl.parts`).

Partition to partition: :class:`LinkBatch` (links the sender found for the receiver's domains, out of
the sender's outbox) and :class:`LinkAck` (the receiver committed them, the sender may forget them).
Parent to partition: :class:`Go`, :class:`Probe` and :class:`Stop`. Partition to parent: :class:`Report` (an
answer to a probe), :class:`PartDone` and :class:`PartFailed`. A partition's inbox carries a
:data:`PartMessage`, the parent's results queue a :data:`CrawlEvent`; receivers ``match`` on the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias, TypedDict

from ccrawl.crawl.summary import CrawlSummary


class Counts(TypedDict, total=False):
    """A partition's progress counters: numbers, and ``errors`` (error class -> count)."""

    fetched: int
    total_fetched: int
    archived: int
    failed: int
    robots_skipped: int
    errors: dict[str, int]
    bytes: int
    queued: int
    hosts: int
    in_flight: int


@dataclass(slots=True, frozen=True)
class LinkBatch:
    source: int
    """The sending partition."""
    upto: int
    """The highest outbox id of the sender among these links (the ack names it)."""
    links: list[tuple[str, int, int, str | None]] = field(default_factory=list)
    """(canonical URL, depth, redirect hops, the linking page's registered domain: "" for a seed, None for
    no vote), so the owner counts the link in its trap budgets' in-degree."""


@dataclass(slots=True, frozen=True)
class LinkAck:
    part: int
    """The partition that committed the links."""
    upto: int


@dataclass(slots=True, frozen=True)
class Go:
    """The state files are ready (a killed run's processes gone, its open WARC files renamed, the
    seeds loaded): the partition may open its own. Partitions are started before that, so their
    imports overlap the parent's preparation."""


@dataclass(slots=True, frozen=True)
class Probe:
    round: int


@dataclass(slots=True, frozen=True)
class Stop:
    reason: str = ""


@dataclass(slots=True, frozen=True)
class Report:
    part: int
    round: int
    idle: bool
    """Nothing queued, nothing in flight, no link routed elsewhere that its owner has not committed."""
    activity: int
    """Fetches done + link batches taken + links routed, this run: unchanged between two probes = no work."""
    in_flight: int
    counts: Counts = field(default_factory=lambda: Counts())
    """The partition's progress counters (:func:`ccrawl.crawl.progress.counts`)."""


@dataclass(slots=True, frozen=True)
class PartDone:
    part: int
    summary: CrawlSummary


@dataclass(slots=True, frozen=True)
class PartFailed:
    part: int
    message: str
    exit_code: int = 1


#: What a partition's inbox carries (from the parent and from the other partitions).
PartMessage: TypeAlias = Go | LinkBatch | LinkAck | Probe | Stop
#: What the parent's results queue carries (from the partitions).
CrawlEvent: TypeAlias = Report | PartDone | PartFailed
