"""Where a recrawl stands, read from its checkpoint by the processes beside it (the publisher, the fleet).

Small on purpose: the publisher and ``recrawl fleet`` import it without the checkpoint machinery
(:mod:`.checkpoint`) or the work-list readers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ccrawl.errors import InputError, UsageError


@dataclass(frozen=True, slots=True)
class Progress:
    """Where one machine's crawl stands, from its checkpoint."""

    part: int
    row: int
    done: bool
    fetched: int


def read_state(path: Path | None, shard: int, shards: int) -> Progress | None:
    """The crawl's checkpoint as progress; None when there is no file yet (the crawl has not written)."""
    if path is None or not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"--state {path} is not a readable checkpoint: {exc}") from exc
    if (int(raw.get("shard", shard)), int(raw.get("shards", shards))) != (shard, shards):
        raise UsageError(
            f"--state {path} belongs to --shard {raw.get('shard')} --shards {raw.get('shards')}, "
            f"not --shard {shard} --shards {shards}: point --state at this machine's checkpoint"
        )
    return Progress(int(raw.get("part", 0)), int(raw.get("row", 0)), bool(raw.get("done", False)),
                    int(raw.get("fetched", 0)))
