"""The export ledger (``<out>/.committed``): one JSON line per finished unit, appended and fsynced.

A line is written only once a unit's files are where they belong: on the hub (after the commit
that carries them landed) or, with ``--push=false``, sealed under ``<out>``. A rerun of the same
command skips every unit the ledger names, so a killed run resumes where it stopped. A unit
killed between its commit and its ledger line is found on the hub by the rerun (one existence
call per commit batch) and recorded without a second upload: every shard is committed once.

Fields: ``key`` (``crawl=<id>/NNNNNN`` or ``part-NNNNNN``), ``files`` (repo paths), ``rows``,
``bytes``, ``extractor`` (``name@version``), ``limit`` (the ``--limit`` it was built under, 0 for
none), ``pushed`` and ``at`` (unix ms). A line that does not parse (a torn last line after a
crash) is ignored: the unit it named is done again, a duplicate at most, never a gap.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ccrawl.errors import UsageError


@dataclass(slots=True)
class Entry:
    """One finished unit."""

    key: str
    files: list[str] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0
    extractor: str = ""
    limit: int = 0
    pushed: bool = False
    at: int = 0


class CommittedLedger:
    """Read once at start, appended to as units finish."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Entry] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                entry = _parse(line)
                if entry is not None:
                    self.entries[entry.key] = entry

    def done(self, key: str, *, extractor: str, limit: int) -> bool:
        """True when ``key`` is finished for this engine and limit.

        A unit finished by another engine is a usage error: its files are at the same paths, so
        going on would mix two corpora in one dataset. A unit built under ``--limit`` counts as done
        only for a run with the same limit; a full run builds it again.
        """
        entry = self.entries.get(key)
        if entry is None:
            return False
        if entry.extractor and entry.extractor.split("@")[0] != extractor.split("@")[0]:
            raise UsageError(
                f"{self.path} says {key} was built with {entry.extractor}, not {extractor}: "
                "give each extractor its own --out (and --repo)"
            )
        return entry.limit == 0 or entry.limit == limit

    def add(self, entry: Entry) -> None:
        entry.at = entry.at or time.time_ns() // 1_000_000
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(asdict(entry), separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.entries[entry.key] = entry


def _parse(line: str) -> Entry | None:
    try:
        raw: object = json.loads(line)
        if not isinstance(raw, dict) or not isinstance(raw.get("key"), str):
            return None
        known = {k: raw[k] for k in Entry.__dataclass_fields__ if k in raw}
        return Entry(**known)
    except (ValueError, TypeError):
        return None
