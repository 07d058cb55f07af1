"""The dataset card (README.md) of the CC-NEWS index, rebuilt from ``stats.csv`` and ``languages.csv``.

Its YAML front matter declares the shards (``data/*/*/*.parquet``) as the only data files, so the hub's
viewer never reads a ledger CSV as a split and never meets a cast error. The totals are embedded as one
JSON comment (``<!-- ccrawl-news-card {...} -->``) for tools and tests (:func:`news_card_totals`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import TypedDict

from ccrawl.jsontypes import JSONObject
from ccrawl.output import format_size

DATA_GLOB = "data/*/*/*.parquet"
STATS_FIELDS = ("month", "files", "files_total", "records", "articles", "bytes_read", "truncated_files", "complete",
                "updated_at")
LANG_FIELDS = ("month", "language", "articles")


class NewsStatsRow(TypedDict):
    """One month of stats.csv (:data:`STATS_FIELDS`): counts as numbers, ``complete`` as ``true``/``false``."""

    month: str
    files: int
    files_total: int
    records: int
    articles: int
    bytes_read: int
    truncated_files: int
    complete: str
    updated_at: str
_TOTALS = re.compile(r"^<!-- ccrawl-news-card (\{.*\}) -->$", re.M)


def _human(n: int) -> str:
    return format_size(n, step=1000, units=("B", "KB", "MB", "GB", "TB"))


def _schema_table() -> str:
    from ccrawl.commoncrawl.news.schema import COLUMNS

    rows = ["| column | type |", "|---|---|"]
    rows += [f"| `{name}` | {kind} |" for name, kind, _ in COLUMNS]
    return "\n".join(rows) + "\n"


def render_news_card(
    repo_id: str, stats: Mapping[str, NewsStatsRow], languages: Mapping[tuple[str, str], int],
    *, generated_at: float | None = None,
) -> str:
    """The whole README.md from the ledgers' rows."""
    months = sorted(stats)
    totals = {
        "months": len(months),
        "files": sum(int(stats[m]["files"]) for m in months),
        "records": sum(int(stats[m]["records"]) for m in months),
        "articles": sum(int(stats[m]["articles"]) for m in months),
        "bytes_read": sum(int(stats[m]["bytes_read"]) for m in months),
        "complete_months": sum(1 for m in months if str(stats[m].get("complete")) == "true"),
    }
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(generated_at if generated_at is not None else time.time()))
    out = [
        "---\npretty_name: CC-NEWS index (ccrawl)\nlicense: other\ntags:\n- common-crawl\n- cc-news\n- news\n"
        f"configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: {DATA_GLOB}\n---\n",
        f"# {repo_id}\n",
        "The index Common Crawl does not publish for CC-NEWS: one row per stored response, with cc-index's "
        "column names, built by `ccrawl news publish` from the month's WARC files as they stream. "
        "`warc_filename`, `warc_record_offset` and `warc_record_length` fetch the record "
        "(`ccrawl fetch --file F --offset O --length L`).\n",
        "## Progress\n",
        "| month | files | of | records | articles | WARC read | ended mid-record | complete |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m in months:
        r = stats[m]
        out.append(
            f"| {m} | {int(r['files']):,} | {int(r['files_total']):,} | {int(r['records']):,} | "
            f"{int(r['articles']):,} | {_human(int(r['bytes_read']))} | {int(r['truncated_files'])} | "
            f"{'yes' if str(r.get('complete')) == 'true' else 'no'} |"
        )
    out.append("")
    out.append(f"Generated {when} UTC from `stats.csv` and `languages.csv`, which every commit updates together "
               "with the shards it adds.\n")
    if languages:
        out.append("## Languages (articles, detected)\n")
        out.append("| month | language | articles |")
        out.append("|---|---|---:|")
        by_month: dict[str, list[tuple[str, int]]] = {}
        for (m, lang), n in languages.items():
            by_month.setdefault(m, []).append((lang or "unknown", n))
        for m in sorted(by_month):
            for lang, n in sorted(by_month[m], key=lambda x: (-x[1], x[0]))[:15]:
                out.append(f"| {m} | {lang} | {n:,} |")
        out.append("")
    out.append("## Layout\n")
    out.append("```\ndata/YYYY/MM/<source WARC name>.parquet   one shard per CC-NEWS archive (the only data files)\n"
               "stats.csv                                  one row per month\n"
               "languages.csv                              one row per month and detected language\n"
               "README.md                                  this card\n```\n")
    out.append("## Querying with DuckDB\n")
    out.append(
        "```sql\nSELECT url, fetch_time, content_languages\n"
        f"FROM 'https://huggingface.co/datasets/{repo_id}/resolve/main/data/2026/07/*.parquet'\n"
        "WHERE url_host_registered_domain = 'bbc.co.uk'\nORDER BY fetch_time;\n```\n"
    )
    out.append("## Columns\n")
    out.append(_schema_table())
    out.append(f"<!-- ccrawl-news-card {json.dumps(totals, sort_keys=True)} -->\n")
    return "\n".join(out)


def news_card_totals(text: str) -> JSONObject:
    m = _TOTALS.search(text)
    return dict(json.loads(m.group(1))) if m else {}
