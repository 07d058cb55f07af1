"""The two ledgers of the CC-NEWS index: ``stats.csv`` (one row per month) and ``languages.csv``.

Both are small CSVs rewritten whole in every commit, together with the shards they count, so a reader
sees the shards and their counts change in one step. :class:`Ledgers` holds them in memory for merging.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ccrawl.commoncrawl.news.shard import ShardResult
from ccrawl.datasets.news_card import LANG_FIELDS, STATS_FIELDS, NewsStatsRow
from ccrawl.errors import InputError

STATS = "stats.csv"
LANGUAGES = "languages.csv"


def parse_csv(text: str | None, fields: tuple[str, ...], *, source: str) -> list[dict[str, str]]:
    """Rows of a ledger CSV (empty for a missing file); a header that does not match is an InputError."""
    if not text:
        return []
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != fields:
        raise InputError(f"{source}: header {reader.fieldnames} is not {list(fields)}; fix or remove the file")
    return [dict(r) for r in reader]


def render_csv(rows: Sequence[Mapping[str, object]], fields: tuple[str, ...]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: r.get(k, "") for k in fields})
    return out.getvalue().encode()


@dataclass(slots=True)
class Ledgers:
    """stats.csv and languages.csv in memory, keyed for merging."""

    stats: dict[str, NewsStatsRow] = field(default_factory=dict)
    languages: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def parse(cls, stats_text: str | None, lang_text: str | None, *, repo: str) -> Ledgers:
        out = cls()
        for r in parse_csv(stats_text, STATS_FIELDS, source=f"{repo}/{STATS}"):
            out.stats[r["month"]] = NewsStatsRow(
                month=r["month"], files=int(r["files"] or 0), files_total=int(r["files_total"] or 0),
                records=int(r["records"] or 0), articles=int(r["articles"] or 0),
                bytes_read=int(r["bytes_read"] or 0), truncated_files=int(r["truncated_files"] or 0),
                complete=r["complete"], updated_at=r["updated_at"],
            )
        for r in parse_csv(lang_text, LANG_FIELDS, source=f"{repo}/{LANGUAGES}"):
            out.languages[(r["month"], r["language"])] = int(r["articles"] or 0)
        return out

    def copy(self) -> Ledgers:
        return Ledgers({k: v.copy() for k, v in self.stats.items()}, dict(self.languages))

    def add(self, month: str, result: ShardResult, files_total: int) -> None:
        row = self.stats.setdefault(month, NewsStatsRow(
            month=month, files=0, files_total=files_total, records=0, articles=0, bytes_read=0,
            truncated_files=0, complete="false", updated_at="",
        ))
        row["files"] += 1
        row["files_total"] = max(files_total, int(row["files_total"]))
        row["records"] += result.rows
        row["articles"] += result.articles
        row["bytes_read"] += result.bytes_read
        row["truncated_files"] += int(result.truncated_at is not None)
        row["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for lang, n in result.languages.items():
            self.languages[(month, lang)] = self.languages.get((month, lang), 0) + n

    def set_total(self, month: str, files_total: int) -> None:
        if month in self.stats:
            self.stats[month]["files_total"] = files_total

    def finish(self) -> None:
        for row in self.stats.values():
            row["complete"] = "true" if row["files_total"] and row["files"] >= row["files_total"] else "false"

    def render(self) -> tuple[bytes, bytes]:
        self.finish()
        stats = [self.stats[m] for m in sorted(self.stats)]
        langs = [{"month": m, "language": lang, "articles": n} for (m, lang), n in sorted(self.languages.items())]
        return render_csv(stats, STATS_FIELDS), render_csv(langs, LANG_FIELDS)
