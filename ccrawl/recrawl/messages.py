"""Every message that crosses a process boundary in the recrawl pipeline, as slotted dataclasses.

::

    parent ──WorkBatch/StopFeed──► fetch ×F      (a pipe per fetch process)
    parent ──Seal/Exit───────────► writer ×W     (a pipe per writer)
    fetch, extract, writer ──Event──► parent     (one events queue)
    fetch ──CaptureRow + body──► extract ──► writer   (shared-memory rings, :mod:`.ring`)

Receivers dispatch with ``match`` on the class. A :class:`CaptureRow` keeps the routing header
(:class:`RowHeader`: sequence number, content coding, the WARC heads) apart from the seed's
columns (``columns``, keyed by the names of :data:`ccrawl.recrawl.schema.CAPTURE_SCHEMA`), so no
``_``-prefixed key can leak into a column and a sink never guesses which keys are its own.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ccrawl.fetch.stats import RecentFetches
from ccrawl.recrawl.stats import ExtractStats, FetchProcessStats, WriterStats

if TYPE_CHECKING:
    from ccrawl.recrawl.sinks import Durable

#: Bytes a work item is counted at against the read-ahead budget, besides its strings: the
#: parent's tracker entry, the pickled item on the pipe and the item in the fetch process's host
#: queue (measured with tracemalloc at 190-240 bytes a row; rounded up).
ITEM_OVERHEAD = 256


@dataclass(slots=True, frozen=True)
class WorkItem:
    """One row of the work list on its way to a fetch process."""

    seq: int
    url: str
    etag: str = ""
    last_modified: str = ""

    @property
    def cost(self) -> int:
        """What the item counts against the read-ahead budget, in bytes."""
        return ITEM_OVERHEAD + len(self.url) + len(self.etag) + len(self.last_modified)


@dataclass(slots=True, frozen=True)
class WorkBatch:
    """Parent → fetch: items to schedule."""

    items: list[WorkItem]


@dataclass(slots=True, frozen=True)
class StopFeed:
    """Parent → fetch: no more items; finish what is held and close the downstream rings."""


@dataclass(slots=True, frozen=True)
class DropWaiting:
    """Parent → fetch (on SIGINT/SIGTERM): drop the items not started yet; finish the ones in flight.

    Dropped items are never reported durable, so the checkpoint stays below them and a resume
    fetches them: stopping never waits for a long host queue to run out at its delay.
    """


@dataclass(slots=True, frozen=True)
class Seal:
    """Parent → writer: seal the open file (``final``: the last seal of the run)."""

    round: int
    final: bool = False


@dataclass(slots=True, frozen=True)
class Exit:
    """Parent → writer: report the final stats and exit."""


# -- events: children → parent ---------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Ready:
    """Any child → parent, once, when its set-up is done (the start handshake).

    ``role`` is ``fetch``, ``extract`` or ``writer``; a child whose ``Ready`` does not arrive
    within ``--start-timeout`` is named and the run fails."""

    role: str
    idx: int
    pid: int


@dataclass(slots=True, frozen=True)
class Credit:
    """Fetch → parent: these bytes of work items have left the fetch process (read-ahead budget)."""

    fetcher: int
    nbytes: int
    items: int = 0
    """How many work items those bytes were (the parent counts the URLs each process holds)."""


@dataclass(slots=True, frozen=True)
class FetchReport:
    """Fetch → parent: running stats (and credit not yet returned); ``final`` once, at the end.

    Sent once a second whatever the process is doing: it is the fetch process's heartbeat."""

    fetcher: int
    nbytes: int
    stats: FetchProcessStats
    final: bool = False
    items: int = 0
    recent: RecentFetches = field(default_factory=RecentFetches)
    """The slowest hosts and the failures of the last second (for the status page, not the summary)."""


@dataclass(slots=True, frozen=True)
class ExtractReport:
    """Extract → parent: running stats once a second; ``final`` once, at the end."""

    extractor: int
    stats: ExtractStats
    final: bool = False


@dataclass(slots=True, frozen=True)
class WriterReport:
    """Writer (or a fetch process that writes its own rows) → parent: running stats; ``final`` at its exit."""

    writer: int
    stats: WriterStats
    final: bool = False


@dataclass(slots=True, frozen=True)
class WantSeal:
    """Writer → parent: the open file passed ``--shard-size``."""

    writer: int


@dataclass(slots=True, frozen=True)
class DurableRows:
    """Writer → parent: rows that are durable now (``durable`` None: nothing was), and why."""

    writer: int
    durable: Durable | None
    reason: str
    seal_round: int | None = None
    """The seal round this answers (None for a periodic sync)."""


@dataclass(slots=True, frozen=True)
class Drained:
    """Writer → parent: every upstream producer has closed; waiting for the final seal."""

    writer: int


@dataclass(slots=True, frozen=True)
class Crash:
    """Any child → parent: a bug (not a network failure, those are rows); the run stops."""

    who: str
    detail: str
    disk: bool = False
    """The disk refused a write (full, read-only, ...): one line, exit 75, the resume is lossless."""


Event = Ready | Credit | FetchReport | ExtractReport | WriterReport | WantSeal | DurableRows | Drained | Crash
#: What the parent sends down a fetch process's pipe (a fetch process that writes its own rows
#: also takes a writer's ``Seal`` and ``Exit`` there).
FetchCommand = WorkBatch | StopFeed | DropWaiting | Seal | Exit
#: What the parent sends down a writer's control pipe.
WriterCommand = Seal | Exit


class EventSink(Protocol):
    """Where a child puts its events: the run's events queue, or a list's ``append`` in a test."""

    def put(self, event: Event, /) -> None: ...


# -- capture rows: through the rings --------------------------------------------------------


@dataclass(slots=True)
class RowHeader:
    """What routes a row and what only a WARC sink needs; never written as a column."""

    seq: int
    content_encoding: str = ""
    request_head: bytes = b""
    response_head: bytes = b""
    truncated: bool = False
    target_url: str = ""


@dataclass(slots=True)
class CaptureRow:
    """One capture row (the body travels beside it): the header and the seed's columns."""

    header: RowHeader
    columns: dict[str, Any] = field(default_factory=dict)

    def pack(self) -> bytes:
        """The row (not its body) as bytes for a ring; small, so pickle is the right tool."""
        return pickle.dumps((self.header, self.columns), protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def unpack(blob: bytes) -> CaptureRow:
        header, columns = pickle.loads(blob)
        if not isinstance(header, RowHeader) or not isinstance(columns, dict):
            raise TypeError(f"not a capture row: {type(header).__name__}, {type(columns).__name__}")
        return CaptureRow(header, columns)
