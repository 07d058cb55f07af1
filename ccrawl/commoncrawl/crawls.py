"""The crawl list (collinfo.json) and the ``-c`` forms that resolve against it.

collinfo.json is cached for six hours. When a fresh copy cannot be fetched the cached one is used
at any age, with one line on stderr saying how old it is, because the index server goes away for
days while data.commoncrawl.org stays up and most commands only need the list to turn ``latest``
into a crawl ID. With nothing cached and the server unreachable the run fails with exit 8:
guessing a crawl list is worse than saying nothing. ``no_cache`` turns the fallback off too.

``-c`` accepts (see :func:`parse_ref`):

* a crawl ID, ``CC-MAIN-2024-10``, or its short form ``2024-10`` — no lookup at all;
* a year, ``2024`` — every crawl of that year;
* ``latest`` — the newest crawl; ``all`` — every crawl;
* an integer ``N`` below 1000 — the newest N crawls;
* a comma list of any of these, resolved in order with duplicates dropped.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ccrawl.errors import CcrawlError, NothingMatched, Unreachable, UsageError
from ccrawl.jsontypes import Record
from ccrawl.net.client import CCClient

#: How long a fetched crawl list counts as fresh.
COLLINFO_MAX_AGE = 6 * 3600.0

_ID = re.compile(r"^CC-MAIN-(\d{4})-(\d{2})$")
_SHORT_ID = re.compile(r"^(\d{4})-(\d{2})$")


@dataclass(frozen=True, slots=True)
class Crawl:
    """One entry of collinfo.json."""

    id: str
    name: str
    start: str
    end: str
    cdx_api: str

    @property
    def year(self) -> int:
        m = _ID.match(self.id)
        return int(m.group(1)) if m else 0

    def record(self) -> Record:
        return {"crawl": self.id, "name": self.name, "from": self.start, "to": self.end, "cdx_api": self.cdx_api}


def go_duration(seconds: float) -> str:
    """A whole-second age the way Go prints a duration: ``19h0m0s``, ``4m2s``, ``7s``."""
    whole = round(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{s}s"
    if m:
        return f"{m}m{s}s"
    return f"{s}s"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_collinfo(body: bytes) -> list[Crawl]:
    """The crawls of a collinfo.json body, newest first as the server lists them."""
    try:
        rows = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CcrawlError(f"collinfo.json is not JSON ({exc}); check collinfo_endpoint") from None
    if not isinstance(rows, list):
        raise CcrawlError("collinfo.json is not a list of crawls; check collinfo_endpoint")
    crawls = []
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            crawls.append(
                Crawl(
                    row["id"],
                    str(row.get("name", "")),
                    str(row.get("from", "")),
                    str(row.get("to", "")),
                    str(row.get("cdx-api", "")),
                )
            )
    return crawls


async def list_crawls(cc: CCClient, *, warn: Callable[[str], None] = _stderr) -> list[Crawl]:
    """The crawl list, from the 6 h cache, the server, or (server down) the cache at any age."""
    try:
        fetched = await cc.get_cached(
            cc.collinfo_endpoint, max_age=COLLINFO_MAX_AGE, stale_ok=True, validate=parse_collinfo
        )
    except CcrawlError as exc:
        raise Unreachable(
            f"cannot fetch the crawl list from {cc.collinfo_endpoint} and no copy is cached ({exc}); "
            "pass -c CC-MAIN-YYYY-WW to name a crawl instead of resolving it"
        ) from exc
    if fetched.stale:
        warn(
            f"crawls: the index server is unreachable, using the crawl list cached {go_duration(fetched.age)} ago; "
            "pass -c to name a crawl instead of resolving it"
        )
    return parse_collinfo(fetched.body)


def explicit_id(ref: str) -> str | None:
    """The crawl ID ``ref`` names outright (``CC-MAIN-2024-10`` or ``2024-10``), else None."""
    ref = ref.strip()
    if _ID.match(ref):
        return ref
    m = _SHORT_ID.match(ref)
    if m:
        return f"CC-MAIN-{m.group(1)}-{m.group(2)}"
    return None


def parse_ref(ref: str) -> list[tuple[str, Any]]:
    """The parts of a ``-c`` value: (``id``|``year``|``latest``|``all``|``newest``, value) in order."""
    parts: list[tuple[str, Any]] = []
    for raw in ref.split(","):
        item = raw.strip()
        if not item:
            continue
        low = item.lower()
        if (crawl := explicit_id(item)) is not None:
            parts.append(("id", crawl))
        elif low in ("latest", "all"):
            parts.append((low, None))
        elif item.isdigit() and len(item) == 4 and 2008 <= int(item) <= 2099:
            parts.append(("year", int(item)))
        elif item.isdigit() and 0 < int(item) < 1000:
            parts.append(("newest", int(item)))
        else:
            raise UsageError(
                f"-c {item!r}: use a crawl ID (CC-MAIN-2024-10), a year (2024), latest, all, "
                "an integer N for the newest N, or a comma list of these"
            )
    if not parts:
        raise UsageError("-c is empty: name a crawl, a year, latest, all or N")
    return parts


def needs_list(ref: str) -> bool:
    """True when resolving ``ref`` needs the crawl list (anything but explicit IDs)."""
    return any(kind != "id" for kind, _ in parse_ref(ref))


def resolve_from(ref: str, crawls: list[Crawl]) -> list[str]:
    """Resolve a ``-c`` value against a crawl list (newest first); raises when a part matches nothing."""
    out: list[str] = []
    for kind, value in parse_ref(ref):
        if kind == "id":
            found = [value]
        elif kind == "latest":
            found = [c.id for c in crawls[:1]]
        elif kind == "all":
            found = [c.id for c in crawls]
        elif kind == "year":
            found = [c.id for c in crawls if c.year == value]
        else:
            found = [c.id for c in crawls[:value]]
        if not found:
            what = {"latest": "latest", "all": "all", "year": f"year {value}"}.get(kind, f"{value}")
            raise NothingMatched(f"-c {what}: no crawl matches; `ccrawl crawls list` shows the crawls there are")
        out.extend(c for c in found if c not in out)
    return out


async def resolve(cc: CCClient, ref: str, *, warn: Callable[[str], None] = _stderr) -> list[str]:
    """Crawl IDs for a ``-c`` value; explicit IDs never touch the network."""
    crawls = await list_crawls(cc, warn=warn) if needs_list(ref) else []
    return resolve_from(ref, crawls)
