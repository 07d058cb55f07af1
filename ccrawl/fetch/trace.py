"""Per-fetch timing handed down to the resolver and the connector through a context variable.

aiohttp's TraceConfig signals cost an await per signal per request; the connector and the
resolver already run inside the fetching task, so they add their seconds to the record the
fetch put in this context variable instead. Tasks that fetch on nobody's behalf (robots.txt,
a shared DNS lookup) clear it so their time is not charged to whichever fetch started them.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class FetchTrace:
    dns: float = 0.0
    connect: float = 0.0
    """TCP + TLS set-up, DNS excluded; ~0 for a reused keep-alive connection."""
    peer: str = ""
    """IP of the last connection used."""


current_trace: ContextVar[FetchTrace | None] = ContextVar("ccrawl_fetch_trace", default=None)
