"""Per-machine ledgers of a recrawl dataset: one CSV per machine, one row per published shard.

A machine only ever writes ``ledger/<server>-shard<i>of<n>.csv``, so two machines committing in the
same second touch different files and cannot lose each other's rows (the Hub has no compare-and-set
on a path). The card is derived from the union of all ledgers; the ledger is the record.

Columns (one row per shard file in ``data/``):

=================  ================================================================================
file               path of the shard in the repo (``data/<server>-shard<i>of<n>-<sha12>.parquet``)
sha256             full sha256 of the file
rows               rows in the shard (one row = one fetch attempt)
bytes              size of the file
ok                 rows with a 2xx status and no error
failed             rows with an error class (status 0: dns, timeout, refused, tls, skip, other)
unchanged          rows answered 304 Not Modified
first_fetched_at   earliest ``fetched_at`` in the shard, unix ms
last_fetched_at    latest ``fetched_at`` in the shard, unix ms
committed_at       when this machine committed the shard, unix ms
part, row, done    the crawl's checkpoint (``--state``) when the shard was committed
fetched            the crawl's fetch count from the checkpoint at that moment
=================  ================================================================================
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from ccrawl.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

LEDGER_DIR = "ledger"
_LEDGER_NAME = re.compile(r"^(?P<server>.+)-shard(?P<shard>\d+)of(?P<shards>\d+)\.csv$")


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One published shard as its machine recorded it."""

    file: str
    sha256: str
    rows: int
    bytes: int
    ok: int
    failed: int
    unchanged: int
    first_fetched_at: int
    last_fetched_at: int
    committed_at: int
    part: int = 0
    row: int = 0
    done: bool = False
    fetched: int = 0


COLUMNS = tuple(f.name for f in fields(LedgerRow))



@dataclass(frozen=True, slots=True)
class MachineKey:
    """Who wrote a ledger: the machine name and the slice of the work list it took."""

    server: str
    shard: int
    shards: int

    @property
    def stem(self) -> str:
        return f"{self.server}-shard{self.shard}of{self.shards}"

    @property
    def ledger_path(self) -> str:
        return f"{LEDGER_DIR}/{self.stem}.csv"


def parse_ledger_path(path: str) -> MachineKey | None:
    """The machine of ``ledger/<server>-shard<i>of<n>.csv``, None for any other path."""
    if not path.startswith(LEDGER_DIR + "/"):
        return None
    m = _LEDGER_NAME.match(path[len(LEDGER_DIR) + 1 :])
    if m is None:
        return None
    return MachineKey(m.group("server"), int(m.group("shard")), int(m.group("shards")))


def parse_ledger(text: str, *, source: str = "ledger") -> list[LedgerRow]:
    """Rows of a ledger CSV; a header that lacks a column or a bad number is an InputError."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{source}: not a ccrawl ledger (missing columns {', '.join(missing)})")
    out = []
    for n, raw in enumerate(reader, start=2):
        try:
            def num(c: str, raw: dict[str, str] = raw) -> int:
                return int(raw[c] or 0)

            out.append(LedgerRow(
                file=raw["file"], sha256=raw["sha256"], rows=num("rows"), bytes=num("bytes"), ok=num("ok"),
                failed=num("failed"), unchanged=num("unchanged"), first_fetched_at=num("first_fetched_at"),
                last_fetched_at=num("last_fetched_at"), committed_at=num("committed_at"), part=num("part"),
                row=num("row"), done=raw["done"].strip().lower() in ("1", "true", "yes"), fetched=num("fetched"),
            ))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{source} line {n}: {exc}") from exc
    return out


def render_ledger(rows: Iterable[LedgerRow]) -> str:
    """A ledger as CSV text, header first, rows in the order given."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        d = asdict(r)
        d["done"] = "true" if r.done else "false"
        writer.writerow(d)
    return buf.getvalue()


@dataclass(frozen=True, slots=True)
class ShardStats:
    """What a ledger row says about a shard's content, read from its columns."""

    rows: int
    ok: int
    failed: int
    unchanged: int
    first_fetched_at: int
    last_fetched_at: int


def shard_stats(path: Path) -> ShardStats:
    """Counts of a sealed capture shard, reading only status, error, unchanged and fetched_at."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        names = set(pf.schema_arrow.names)
        wanted = [c for c in ("status", "error", "unchanged", "fetched_at") if c in names]
        table = pf.read(columns=wanted)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{path} is not a readable Parquet shard: {exc}") from exc
    rows = table.num_rows

    def count(mask: pa.ChunkedArray) -> int:
        return int(pc.sum(pc.cast(mask, "int64")).as_py() or 0) if rows else 0

    ok = failed = unchanged = 0
    first = last = 0
    if "error" in names:
        failed = count(pc.not_equal(table["error"], ""))
        if "status" in names:
            good = pc.and_(pc.and_(pc.greater_equal(table["status"], 200), pc.less(table["status"], 300)),
                           pc.equal(table["error"], ""))
            ok = count(good)
    if "unchanged" in names:
        unchanged = count(table["unchanged"])
    if "fetched_at" in names and rows:
        mm = pc.min_max(table["fetched_at"])
        first, last = int(mm["min"].as_py() or 0), int(mm["max"].as_py() or 0)
    return ShardStats(rows, ok, failed, unchanged, first, last)
