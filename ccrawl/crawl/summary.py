"""The summary record of a ``crawl run`` (one process's, or the sum of a multi-process run's partitions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class CrawlSummary:
    fetched: int = 0
    """Fetch attempts this run (failures and robots skips included)."""
    archived: int = 0
    failed: int = 0
    robots_skipped: int = 0
    admitted: int = 0
    duplicates: int = 0
    over_budget: int = 0
    """Links not queued because their host or registered domain was past its trap budget this run."""
    warc_files: list[str] = field(default_factory=list)
    recovered_done: int = 0
    requeued: int = 0
    aborted_files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    total_fetched: int = 0
    queued: int = 0
    seen: int = 0
    finished: bool = False
    """True when the frontier ran dry; False when --max-pages or a signal stopped the run."""
    errors: dict[str, int] = field(default_factory=dict)
    fetchers: int = 1
    """Fetch processes of this run (``--fetchers``)."""
    refused: str = ""
    """The first refusal of a private address this run (its one-line reason), '' when none."""

    def as_record(self) -> dict[str, Any]:
        rate = self.fetched / self.seconds if self.seconds > 0 else 0.0
        return {
            "fetched": self.fetched, "archived": self.archived, "failed": self.failed,
            "robots_skipped": self.robots_skipped, "admitted": self.admitted, "duplicates": self.duplicates,
            "pages_per_second": round(rate, 1), "seconds": round(self.seconds, 3),
            "warc_files": len(self.warc_files), "recovered_done": self.recovered_done, "requeued": self.requeued,
            "aborted_files": len(self.aborted_files), "total_fetched": self.total_fetched, "queued": self.queued,
            "seen": self.seen, "finished": self.finished, "fetchers": self.fetchers, "errors": dict(self.errors),
        }


    def add(self, other: CrawlSummary) -> None:
        """Fold one partition's summary into this one (``finished`` is the parent's call)."""
        for name in ("fetched", "archived", "failed", "robots_skipped", "admitted", "duplicates", "over_budget",
                     "recovered_done",
                     "requeued", "total_fetched", "queued", "seen"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.refused = self.refused or other.refused
        self.warc_files.extend(other.warc_files)
        self.aborted_files.extend(other.aborted_files)
        for error, n in other.errors.items():
            self.errors[error] = self.errors.get(error, 0) + n
