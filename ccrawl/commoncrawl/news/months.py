"""CC-NEWS months: ``YYYY/MM`` values, where a month's files are listed, and the shard each file becomes."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ccrawl.errors import UsageError

PREFIX = "crawl-data/CC-NEWS"
#: CC-NEWS starts in August 2016.
FIRST = (2016, 8)


@dataclass(frozen=True, slots=True, order=True)
class Month:
    """One CC-NEWS month."""

    year: int
    month: int

    def __str__(self) -> str:
        return f"{self.year:04d}/{self.month:02d}"

    @property
    def prefix(self) -> str:
        """The bucket folder: ``crawl-data/CC-NEWS/2026/07``."""
        return f"{PREFIX}/{self}"

    @property
    def manifest(self) -> str:
        return f"{self.prefix}/warc.paths.gz"

    @property
    def data_dir(self) -> str:
        """Where the month's shards live in the dataset repo: ``data/2026/07``."""
        return f"data/{self}"

    def shard_path(self, warc_path: str) -> str:
        """``data/2026/07/CC-NEWS-...-08467.parquet`` for ``crawl-data/CC-NEWS/2026/07/CC-NEWS-...-08467.warc.gz``."""
        return f"{self.data_dir}/{source_name(warc_path)}.parquet"


def source_name(warc_path: str) -> str:
    """The archive's name without its folder and ``.warc.gz``."""
    name = warc_path.rstrip("/").rsplit("/", 1)[-1]
    for ext in (".warc.gz", ".warc"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def check_month(year: int, month: int, *, today: dt.date | None = None) -> Month:
    """A :class:`Month`, or a UsageError that says which months exist."""
    today = today or dt.datetime.now(dt.UTC).date()
    if not 1 <= month <= 12:
        raise UsageError(f"--month {month}: give a month from 1 to 12")
    if (year, month) < FIRST or (year, month) > (today.year, today.month):
        raise UsageError(
            f"{year:04d}/{month:02d} is not a CC-NEWS month: CC-NEWS runs from 2016/08 to this month "
            f"({today.year:04d}/{today.month:02d})"
        )
    return Month(year, month)


def parse_month(text: str, *, flag: str = "--months", today: dt.date | None = None) -> Month:
    """``2026/07`` (also ``2026-07``, ``2026/7``) as a Month."""
    raw = text.strip().replace("-", "/")
    parts = raw.split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise UsageError(f"{flag} {text!r}: write a month as YYYY/MM, for example 2026/07")
    return check_month(int(parts[0]), int(parts[1]), today=today)


def parse_months(text: str, *, today: dt.date | None = None) -> list[Month]:
    """A comma list of months, duplicates dropped, in the order given."""
    out: list[Month] = []
    for part in text.split(","):
        if part.strip():
            m = parse_month(part, today=today)
            if m not in out:
                out.append(m)
    if not out:
        raise UsageError("--months is empty: give one or more months as YYYY/MM, comma separated")
    return out


def month_of_path(warc_path: str) -> Month | None:
    """The month a ``crawl-data/CC-NEWS/YYYY/MM/...`` path belongs to."""
    parts = warc_path.split("/")
    try:
        i = parts.index("CC-NEWS")
        return Month(int(parts[i + 1]), int(parts[i + 2]))
    except (ValueError, IndexError):
        return None


async def fetch_month_paths(cc: object, month: Month) -> list[str]:
    """Every WARC path of ``month`` from its manifest (cached; a missing month raises a clear error)."""
    from ccrawl.commoncrawl.manifests import MANIFEST_MAX_AGE, parse_manifest
    from ccrawl.errors import NothingMatched
    from ccrawl.net.client import CCClient, HTTPStatusError

    assert isinstance(cc, CCClient)
    url = cc.data_url(month.manifest)
    try:
        # A month still being crawled grows: its manifest is cached for an hour, not a month.
        max_age = MANIFEST_MAX_AGE if month < _this_month() else 3600.0
        fetched = await cc.get_cached(url, max_age=max_age, stale_ok=True, validate=parse_manifest)
    except HTTPStatusError as exc:
        if exc.status in (403, 404):
            raise NothingMatched(f"CC-NEWS has no manifest for {month} ({url}: HTTP {exc.status})") from None
        raise
    return parse_manifest(fetched.body, name=url)


def _this_month() -> Month:
    today = dt.datetime.now(dt.UTC).date()
    return Month(today.year, today.month)
