"""The dataset card (README.md) of a recrawl repo, generated from the union of every machine's ledger.

The card is derived, never authoritative: each commit from any machine regenerates it from the
ledgers on the hub at that moment, so a card written from a snapshot that missed another machine's
row undercounts until the next commit, and never overcounts.

Its YAML front matter declares ``configs`` with ``data/*.parquet`` as the only data files, so a
dataset viewer (or ``datasets.load_dataset``) never reads a ledger CSV or a JSON sidecar as a split --
the failure the umi-meta repo showed, where auxiliary JSON files with another shape were read as rows
and every split failed with a CastError.

The totals are also embedded as one JSON comment line (``<!-- ccrawl-card {...} -->``) so tools and
tests read them back with :func:`card_totals` without scraping the Markdown tables.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence

from ccrawl.hub.ledger import LedgerRow, MachineKey
from ccrawl.jsontypes import JSONObject
from ccrawl.output import format_size
from ccrawl.recrawl.standing import Progress

#: The only files a hub viewer may read as data.
DATA_GLOB = "data/*.parquet"

WORK_LISTS = {
    "domains": ("open-index/ccrawl-domains", "one home page per ranked domain"),
    "urls": ("open-index/ccrawl-urls", "the URL index of one monthly crawl"),
}

_TOTALS = re.compile(r"^<!-- ccrawl-card (\{.*\}) -->$", re.M)


def front_matter(repo_id: str, kind: str) -> str:
    """The YAML block: data files limited to ``data/*.parquet``."""
    work = WORK_LISTS.get(kind, (kind, ""))[0]
    return (
        "---\n"
        f"pretty_name: ccrawl recrawl of {work}\n"
        "license: other\n"
        "tags:\n- common-crawl\n- recrawl\n- web\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        "  - split: train\n"
        f"    path: {DATA_GLOB}\n"
        "---\n"
    )


def totals(ledgers: Mapping[MachineKey, Sequence[LedgerRow]]) -> dict[str, int]:
    """Sums over every ledger row: rows, shards, bytes, ok, failed, unchanged, machines, done."""
    out = dict.fromkeys(("rows", "shards", "bytes", "ok", "failed", "unchanged"), 0)
    for rows in ledgers.values():
        for r in rows:
            out["rows"] += r.rows
            out["shards"] += 1
            out["bytes"] += r.bytes
            out["ok"] += r.ok
            out["failed"] += r.failed
            out["unchanged"] += r.unchanged
    out["machines"] = len(ledgers)
    return out


def _progress_of(rows: Sequence[LedgerRow], live: Progress | None) -> Progress | None:
    if live is not None:
        return live
    if not rows:
        return None
    # The newest row by commit time; rows of one commit share it, and the later row in the ledger
    # is the newer one (a final checkpoint rewrites the last row, not the first of its commit).
    _, last = max(enumerate(rows), key=lambda ir: (ir[1].committed_at, ir[0]))
    return Progress(last.part, last.row, last.done, last.fetched)


def _human(n: int) -> str:
    """Decimal units, as the Hub shows file sizes."""
    return format_size(n, step=1000, units=("B", "KB", "MB", "GB", "TB"))


def _day(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms / 1000)) if ms else ""


def render_card(
    repo_id: str,
    kind: str,
    ledgers: Mapping[MachineKey, Sequence[LedgerRow]],
    *,
    live: Mapping[MachineKey, Progress] | None = None,
    generated_at_ms: int | None = None,
) -> str:
    """The whole README.md for ``repo_id`` from every machine's ledger rows.

    ``live`` holds a fresher checkpoint for some machines (the committing machine's ``--state``);
    the others report the checkpoint recorded with their last committed shard.
    """
    live = live or {}
    now = generated_at_ms if generated_at_ms is not None else time.time_ns() // 1_000_000
    t = totals(ledgers)
    machines = sorted(set(ledgers) | set(live), key=lambda k: (k.shards, k.shard, k.server))
    progress = {k: _progress_of(ledgers.get(k, ()), live.get(k)) for k in machines}
    done = sum(1 for p in progress.values() if p is not None and p.done)
    t["machines"] = len(machines)
    t["done"] = done
    work, work_desc = WORK_LISTS.get(kind, (kind, "a published work list"))
    lines = [front_matter(repo_id, kind)]
    lines.append(f"# {repo_id}\n")
    lines.append(
        f"A recrawl of [{work}](https://huggingface.co/datasets/{work}), {work_desc}, written by "
        "`ccrawl recrawl run` and published shard by shard by `ccrawl recrawl publish`. One row is one "
        "attempt to fetch one URL: failures are rows too (status 0, the class in `error`), so "
        "`count(*)` counts URLs tried, not readable pages.\n"
    )
    lines.append("## Progress\n")
    lines.append("| rows | shards | size | ok (2xx) | failed | unchanged (304) | machines done |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|")
    lines.append(
        f"| {t['rows']:,} | {t['shards']:,} | {_human(t['bytes'])} | {t['ok']:,} | {t['failed']:,} | "
        f"{t['unchanged']:,} | {done} of {len(machines)} |\n"
    )
    if machines:
        lines.append(
            "| machine | slice | shards | rows | checkpoint (part, row) | fetched | done | last commit (UTC) |"
        )
        lines.append("|---|---|---:|---:|---|---:|---|---|")
        for k in machines:
            rows = ledgers.get(k, ())
            p = progress[k]
            where = f"{p.part}, {p.row}" if p else ""
            last = max((r.committed_at for r in rows), default=0)
            lines.append(
                f"| {k.server} | {k.shard} of {k.shards} | {len(rows):,} | {sum(r.rows for r in rows):,} | "
                f"{where} | {p.fetched if p else 0:,} | {'yes' if p and p.done else 'no'} | {_day(last)} |"
            )
        lines.append("")
    lines.append(
        f"Generated {_day(now)} UTC from {len(ledgers)} ledger file(s) in `ledger/`. Each machine writes only "
        "its own ledger; this card is rebuilt from all of them on every commit, so a machine that was down "
        "does not leave it wrong for long, and it undercounts rather than overcounts while a commit is in "
        "flight.\n"
    )
    lines.append("## Layout\n")
    lines.append(
        "```\ndata/<server>-shard<i>of<n>-<sha256 first 12 hex>.parquet   capture shards (the only data files)\n"
        "ledger/<server>-shard<i>of<n>.csv                         one ledger per machine, one row per shard\n"
        "README.md                                                 this card\n```\n"
    )
    lines.append(
        "The shard name carries the machine, its slice of the work list (split by registered domain, so a "
        "site and its politeness clock stay on one machine) and a hash of the contents, which makes "
        "republishing a shard a no-op. Any subset of shards is a valid sample of the slices it came from.\n"
    )
    lines.append("## Querying with DuckDB\n")
    src = f"hf://datasets/{repo_id}/{DATA_GLOB}"
    lines.append(
        "```sql\n-- What answered and what did not\n"
        f"SELECT status, count(*) AS rows FROM read_parquet('{src}') GROUP BY status ORDER BY rows DESC;\n\n"
        "-- Readable pages only\n"
        f"SELECT count(*) AS pages FROM read_parquet('{src}') WHERE status = 200 AND error = '';\n\n"
        "-- Why the failures failed\n"
        f"SELECT error, count(*) AS rows FROM read_parquet('{src}') WHERE error <> '' GROUP BY error "
        "ORDER BY rows DESC;\n\n"
        "-- One machine's slice, by its shard name\n"
        f"SELECT count(*) FROM read_parquet('hf://datasets/{repo_id}/data/server1-shard0of3-*.parquet');\n```\n"
    )
    lines.append("Project `markdown` or `text` and leave `body` alone: Parquet reads by column, and the bodies "
                 "are almost all of the bytes.\n")
    lines.append("## Columns\n")
    lines.append(_schema_table())
    lines.append(f"<!-- ccrawl-card {json.dumps(t, sort_keys=True)} -->\n")
    return "\n".join(lines)


def _schema_table() -> str:
    from ccrawl.recrawl.schema import CAPTURE_COLUMNS

    rows = ["| column | type |", "|---|---|"]
    rows += [f"| `{name}` | {sql} |" for name, sql in CAPTURE_COLUMNS]
    return "\n".join(rows) + "\n"


def card_totals(text: str) -> JSONObject:
    """The totals a card was generated with (empty when the card has none)."""
    m = _TOTALS.search(text)
    return dict(json.loads(m.group(1))) if m else {}
