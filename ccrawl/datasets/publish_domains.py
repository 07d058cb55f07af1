"""``domains publish``: stream a web-graph domain rank table into rank-ordered Parquet shards on a dataset repo.

Layout of the mirror (``open-index/ccrawl-domains``)::

    data/<release>/part-NNN.parquet   rows [NNN * shard_rows, (NNN+1) * shard_rows) of the release's table
    stats.csv                         one row per release: shards, rows, bytes, shard_rows, complete
    README.md                         the card, rebuilt from stats.csv on every commit (data: Parquet only)

The source (``<release>-domain-ranks.txt.gz``) is gzip text in harmonic-centrality order. The stream is
decompressed and cut into shards of ``shard_rows`` lines in the order they came, by counting newlines;
each shard's lines are then parsed by pyarrow, the host key un-reversed (``com.example`` ->
``example.com``) and the shard encoded, in ``workers`` threads while the stream moves on (see
:mod:`ccrawl.datasets.domain_table`). ``part-000`` holds the most central domains. Columns: the
source's, in its order, with the one edit (:data:`~ccrawl.datasets.domain_table.DOMAIN_COLUMNS`). A
row that does not parse stops the run (exit 1): the source is wrong, and a rerun would read it again.

Resume asks the hub: the shards of the release already there are listed once and skipped. A gzip
stream cannot seek, so the run reads the table from the top again, but the rows of the shards already
published are counted (newlines) rather than parsed. A shard is named by its position, so a
rerun cuts the same rows into the same names; ``shard_rows`` is recorded in the ledger and a rerun with
another value is refused (it would cut different rows under the same names). A release is
``complete`` once the stream has been read to its end and every shard up to the last is on the hub.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccrawl import durable
from ccrawl.datasets.domain_table import DOMAIN_COLUMNS, RankTableReader, cut_shards, parse_rows
from ccrawl.errors import InputError, NothingMatched, UsageError
from ccrawl.hub.repo import Add, DatasetRepo, HubFile
from ccrawl.hub.staged import StagedPublisher, UpkeepOptions, check_upkeep, spawn
from ccrawl.jsontypes import Record

STATS = "stats.csv"
STATS_FIELDS = ("release", "shards", "rows", "bytes", "shard_rows", "complete")
#: Key of the shard's Parquet key-value metadata: JSON with release, shard index, first row, source table.
SOURCE_KEY = b"ccrawl.domains"
SHARD_ROWS = 1_000_000
ROW_GROUP = 131_072
PUBLISH_COLUMNS = ("release", "shard", "rows", "first_pos", "bytes", "action", "commit")


def shard_path(release: str, index: int) -> str:
    """``data/<release>/part-NNN.parquet`` (three digits, wider past 999)."""
    return f"data/{release}/part-{index:03d}.parquet"


def shard_index(path: str) -> int | None:
    """The NNN of ``.../part-NNN.parquet``, None for another name."""
    name = path.rsplit("/", 1)[-1]
    if not (name.startswith("part-") and name.endswith(".parquet")):
        return None
    digits = name[len("part-") : -len(".parquet")]
    return int(digits) if digits.isdigit() else None


def _with_last(shards: Iterator[tuple[int, bytes, int]]) -> Iterator[tuple[int, bytes, int, bool]]:
    """(index, lines, rows, is it the last) with a one-shard lookahead."""
    held: tuple[int, bytes, int] | None = None
    for item in shards:
        if held is not None:
            yield (*held, False)
        held = item
    if held is not None:
        yield (*held, True)


# -- the ledger --------------------------------------------------------------------------------------


@dataclass(slots=True)
class DomainLedger:
    """stats.csv: one row per web-graph release."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None, *, source: str = STATS) -> DomainLedger:
        led = cls()
        reader = csv.DictReader(io.StringIO(text or ""))
        if text and "release" not in (reader.fieldnames or ()):
            raise InputError(f"{source}: not a domains ledger (header {reader.fieldnames}); fix or remove it")
        for r in reader:
            if not r.get("release"):
                continue
            led.rows[r["release"]] = {
                "release": r["release"], "shards": int(r.get("shards") or 0), "rows": int(r.get("rows") or 0),
                "bytes": int(r.get("bytes") or 0), "shard_rows": int(r.get("shard_rows") or 0),
                "complete": (r.get("complete") or "").strip().lower() == "true",
            }
        return led

    def copy(self) -> DomainLedger:
        return DomainLedger({k: dict(v) for k, v in self.rows.items()})

    def row(self, release: str) -> dict[str, Any]:
        return self.rows.setdefault(release, {"release": release, "shards": 0, "rows": 0, "bytes": 0,
                                              "shard_rows": 0, "complete": False})

    def ordered(self) -> list[str]:
        """Releases newest first (by the date in the id)."""
        from ccrawl.commoncrawl.webgraph import release_sort_key

        return sorted(self.rows, key=release_sort_key, reverse=True)

    def render(self) -> bytes:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(STATS_FIELDS)
        for rel in self.ordered():
            r = self.rows[rel]
            w.writerow([rel, r["shards"], r["rows"], r["bytes"], r["shard_rows"], "true" if r["complete"] else "false"])
        return out.getvalue().encode()


def render_card(repo_id: str, ledger: DomainLedger) -> str:
    """The card: YAML front matter declaring only the Parquet shards (one config per release), and the totals."""
    releases = ledger.ordered()
    lines = ["---", "license: other", "pretty_name: Common Crawl web-graph domain ranks (ccrawl mirror)", "configs:"]
    for i, rel in enumerate(releases):
        lines += [f"- config_name: {rel}"] + (["  default: true"] if i == 0 else [])
        lines += ["  data_files:", "  - split: train", f'    path: "data/{rel}/*.parquet"']
    lines += ["---", "", f"# {repo_id}", "",
              "Common Crawl's web-graph domain ranks, one release per directory, rows in harmonic-centrality "
              "order (`part-000` holds the most central domains). The one edit to the source table is the "
              "domain written the usual way round (`com.example` becomes `example.com`). Columns: "
              + ", ".join(f"`{n}`" for n, _ in DOMAIN_COLUMNS) + ".", "",
              "| release | shards | rows | bytes | complete |", "|---|---:|---:|---:|---|"]
    for rel in releases:
        r = ledger.rows[rel]
        lines.append(f"| {rel} | {r['shards']:,} | {r['rows']:,} | {r['bytes']:,} | "
                     f"{'yes' if r['complete'] else 'no'} |")
    lines += ["", f"Built by ccrawl from `{STATS}`, which this card is regenerated from on every commit.", ""]
    return "\n".join(lines)


def read_ledger(repo: DatasetRepo) -> DomainLedger:
    try:
        return DomainLedger.parse(repo.read_text(STATS), source=f"{repo.repo_id}/{STATS}")
    except NothingMatched:
        return DomainLedger()


# -- writing one shard ---------------------------------------------------------------------------------


@dataclass(slots=True)
class DomainShard:
    """A shard cut from the stream (a job: its lines), and once written, its file and size (a sealed shard)."""

    release: str
    index: int
    shard: str
    local: Path
    text: bytes = b""
    rows: int = 0
    first_pos: int = 0
    size: int = 0
    error: str = ""
    bad_data: bool = False


def write_shard(job: DomainShard, source: str) -> DomainShard:
    """Parse ``job.text`` and write it to ``job.local`` (``.tmp`` then renamed, fsynced), with its provenance."""
    import pyarrow.parquet as pq

    try:
        table = parse_rows(job.text, f"{source} ({job.shard})")
    except InputError as exc:
        job.error, job.bad_data, job.text = str(exc), True, b""
        return job
    job.text = b""
    job.rows = table.num_rows
    job.first_pos = int(table.column("harmonic_pos")[0].as_py()) if job.rows else 0
    meta = {"release": job.release, "shard": job.index, "rows": job.rows, "first_pos": job.first_pos,
            "source": source}
    table = table.replace_schema_metadata({SOURCE_KEY: json.dumps(meta, sort_keys=True).encode()})
    job.local.parent.mkdir(parents=True, exist_ok=True)
    try:
        with durable.writing(job.local) as tmp:
            pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP, write_statistics=True)
    except OSError as exc:
        job.error = str(exc)
    job.size = job.local.stat().st_size if not job.error else 0
    return job


def sealed_shard(path: Path, release: str, index: int, shard_rows: int) -> tuple[int, int, int] | None:
    """(rows, first_pos, size) of a shard a killed run sealed for this cut, None when it is not one."""
    import pyarrow.parquet as pq

    if not path.is_file():
        return None
    try:
        meta = pq.read_metadata(path)
        info = json.loads((meta.metadata or {}).get(SOURCE_KEY, b"{}"))
    except Exception:
        path.unlink(missing_ok=True)
        return None
    if info.get("release") != release or info.get("shard") != index or meta.num_rows > shard_rows:
        return None
    return int(meta.num_rows), int(info.get("first_pos") or 0), path.stat().st_size


# -- the publisher -------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class DomainsPublishOptions(UpkeepOptions):
    """Every knob of ``domains publish``; the CLI passes its flags straight through."""

    repo_id: str = "open-index/ccrawl-domains"
    commit_every: int = 8
    shard_rows: int = SHARD_ROWS
    staging: Path = Path("domains-staging")

    def __post_init__(self) -> None:
        if self.shard_rows < 1:
            raise UsageError("--shard-rows must be at least 1")
        check_upkeep(self, default_workers=min(4, os.cpu_count() or 1))


@dataclass(slots=True)
class DomainsPublishStats:
    written: int = 0
    reused: int = 0
    committed: int = 0
    staged: int = 0
    existing: int = 0
    failed: int = 0
    rows: int = 0
    rows_read: int = 0
    rows_skipped: int = 0
    bytes_written: int = 0
    commits: int = 0
    conflicts: int = 0
    complete: bool = False


class DomainsPublisher(StagedPublisher[DomainShard, DomainLedger]):
    """Streams one release's domain table into shards and publishes them; see the module docstring.

    ``blocks(skip)`` opens the table and returns an iterator of its decompressed blocks; ``source``
    names the table (it goes in each shard's metadata).
    """

    what = "domains publish"

    def __init__(self, opts: DomainsPublishOptions, repo: DatasetRepo | None, release: str, source: str,
                 blocks: Callable[[], Iterator[bytes]], *, log: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep, stats: DomainsPublishStats | None = None) -> None:
        self.stats = stats if stats is not None else DomainsPublishStats()
        super().__init__(opts, repo, DomainLedger(), self.stats, log=log, sleep=sleep)
        self.opts = opts
        self.release = release
        self.source = source
        self.blocks = blocks
        self._final: int | None = None  # shard count, once the stream has ended
        self._skipped: list[Record] = []  # records of shards found on the hub while streaming
        self._reused: list[DomainShard] = []  # shards a killed run sealed, waiting for their commit

    # -- the hooks of StagedPublisher ------------------------------------------------------------------

    def read_ledger(self) -> DomainLedger:
        if self.repo is None:
            return self.ledger.copy()
        return DomainLedger.parse(self.read_text(STATS), source=f"{self.opts.repo_id}/{STATS}")

    def shard_of(self, item: DomainShard) -> str:
        return item.shard

    def local_of(self, item: DomainShard) -> Path:
        return item.local

    def build_commit(self, base: DomainLedger, new: Sequence[DomainShard]) -> tuple[DomainLedger, list[Add], str]:
        ledger = base.copy()
        row = ledger.row(self.release)
        row["shard_rows"] = self.opts.shard_rows
        for r in new:
            row["shards"] += 1
            row["rows"] += r.rows
            row["bytes"] += r.size
        if self._final is not None and row["shards"] >= self._final:
            row["complete"] = True
        rows = sum(r.rows for r in new)
        message = (f"domains: {self.release}: {len(new)} shard(s) from part-{min(r.index for r in new):03d}, "
                   f"{rows:,} rows")
        return ledger, self._ledger_files(ledger), message

    def commit(self, batch: Sequence[DomainShard]) -> Iterator[Record]:
        return super().commit(sorted(batch, key=lambda r: r.index))  # in rank order, whatever finished first

    def _ledger_files(self, ledger: DomainLedger) -> list[Add]:
        return [Add(STATS, ledger.render()), Add("README.md", render_card(self.opts.repo_id, ledger).encode())]

    def record(self, item: DomainShard, action: str, commit: str) -> Record:
        done = action != "exists"
        return {"release": item.release, "shard": item.shard, "rows": item.rows if done else None,
                "first_pos": item.first_pos if done else None, "bytes": item.size if done else None,
                "action": action, "commit": commit or None}

    def counted(self, item: DomainShard) -> None:
        self.stats.rows += item.rows
        self.stats.bytes_written += item.size

    # -- the run ---------------------------------------------------------------------------------------

    def resume(self) -> set[int]:
        """Read the ledger and list the release's shards on the hub: the indexes already published."""
        if not self.open_hub():
            return set()
        assert self.repo is not None
        repo = self.repo
        self.ledger = self.read_ledger()
        row = self.ledger.rows.get(self.release)
        if row and row["shard_rows"] and row["shard_rows"] != self.opts.shard_rows:
            raise UsageError(f"{self.opts.repo_id}: release {self.release} was cut at {row['shard_rows']:,} rows per "
                             f"shard; pass --shard-rows {row['shard_rows']} to resume it")
        try:
            files = self.clock.retrying("listing", lambda: repo.list_files(f"data/{self.release}"))
        except NothingMatched:
            files = []
        there = {i for f in files if (i := shard_index(f.path)) is not None}
        if there:
            self.log(f"domains publish: resuming {self.opts.repo_id}: {len(there)} shard(s) of {self.release} "
                     "already on the hub")
        return there

    def _jobs(self, there: set[int]) -> Iterator[DomainShard]:
        """Shards cut from the stream, skipping (uncut, unparsed) the leading run of published ones."""
        lead = 0
        while lead in there:
            lead += 1
        for index in range(lead):  # on the hub: counted past below, never cut
            job = DomainShard(self.release, index, shard_path(self.release, index),
                              self.opts.staging / shard_path(self.release, index))
            self.stats.existing += 1
            self.drop_local(job.local)
            self._skipped.append(self.record(job, "exists", ""))
        reader = RankTableReader(self.source, skip=lead * self.opts.shard_rows)

        def runs() -> Iterator[bytes]:
            for block in self.blocks():
                yield from reader.feed(block)
            yield from reader.finish()

        last = lead - 1
        for index, text, rows, final in _with_last(cut_shards(runs(), self.opts.shard_rows, first_index=lead)):
            last = index
            if final:  # known before the last shard is committed, so its commit marks the release complete
                self._final = index + 1
            self.clock.progressed()  # a shard's worth of rows read is progress
            job = DomainShard(self.release, index, shard_path(self.release, index),
                              self.opts.staging / shard_path(self.release, index), text)
            if index in there:
                self.stats.existing += 1
                self.drop_local(job.local)
                self._skipped.append(self.record(job, "exists", ""))
                continue
            got = sealed_shard(job.local, self.release, index, self.opts.shard_rows)
            if got is not None and got[0] == rows:
                self.stats.reused += 1
                job.text, (job.rows, job.first_pos, job.size) = b"", got
                self._reused.append(job)
                continue
            yield job
        self.stats.rows_read = reader.rows_seen
        self.stats.rows_skipped = min(reader.rows_seen, lead * self.opts.shard_rows)
        if not reader.rows_seen:
            raise InputError(f"{self.source}: the domain rank table has a header and no rows")
        if reader.rows_seen <= (lead - 1) * self.opts.shard_rows:
            raise InputError(f"{self.source}: the table has {reader.rows_seen:,} rows, fewer than the "
                             f"{lead} shard(s) of {self.opts.shard_rows:,} already published for {self.release}")
        self._final = max(last + 1, -(-reader.rows_seen // self.opts.shard_rows))

    def _write(self, job: DomainShard) -> Future[DomainShard]:
        return spawn(lambda: write_shard(job, self.source), name=f"ccrawl-domains-{job.index}")

    def _accept(self, job: DomainShard, res: DomainShard) -> tuple[DomainShard | None, Record | None]:
        if res.bad_data:
            raise InputError(res.error)  # the source is wrong: another run would read the same rows
        if res.error:
            # A gap would shift nothing (shards are named by position) but the release cannot complete
            # without it: the next run writes it again.
            self.stats.failed += 1
            self.log(f"domains publish: {res.shard}: {res.error}; left for the next run")
            return None, {**self.record(res, "failed", ""), "action": f"failed: {res.error}"}
        self.stats.written += 1
        return res, None

    def run(self) -> Iterator[Record]:
        with self.staging_lock():
            self.clock.progressed()
            there = self.resume()
            row = self.ledger.rows.get(self.release)
            if row and row["complete"] and there == set(range(row["shards"])):
                self.log(f"domains publish: {self.release} is complete on the hub ({row['shards']} shard(s), "
                         f"{row['rows']:,} rows); nothing to do")
                self.stats.complete = True
                return
            for rec in self.drain(self._jobs(there), self._write, self._accept, self._reused, unit="shard"):
                yield from self._flush_skipped()
                yield rec
            yield from self._flush_skipped()
            self._finish()

    def _flush_skipped(self) -> Iterator[Record]:
        out = list(self._skipped)
        self._skipped.clear()
        yield from out

    def _finish(self) -> None:
        """Mark the release complete when every shard up to the last is on the hub and the ledger lags."""
        if self._final is None:
            return
        base = self.read_ledger()
        row = base.row(self.release)
        self.stats.complete = bool(row["complete"])
        if row["complete"] or self.stats.failed:
            return
        if self.repo is not None:
            there = self.exists([shard_path(self.release, i) for i in range(self._final)])
            if not all(there.get(shard_path(self.release, i)) for i in range(self._final)):
                return
        elif row["shards"] < self._final:
            return
        row["complete"], row["shard_rows"] = True, self.opts.shard_rows
        message = f"domains: {self.release} complete ({row['shards']:,} shards, {row['rows']:,} rows)"
        if self.opts.no_push or self.repo is None:
            self.stage(self._ledger_files(base), message)
        else:
            repo = self.repo
            self.clock.retrying("commit", lambda: repo.commit(self._ledger_files(base), message=message))
            self.stats.commits += 1
        self.ledger = base
        self.stats.complete = True


def summary_line(stats: DomainsPublishStats, release: str, *, no_push: bool) -> str:
    verb = "staged" if no_push else "committed"
    return (f"domains publish: {release}: read {stats.rows_read:,} rows ({stats.rows_skipped:,} counted past, "
            f"already published), wrote {stats.written} shard(s) (reused {stats.reused}), {verb} "
            f"{stats.staged if no_push else stats.committed} with {stats.rows:,} rows in {stats.commits} commit(s); "
            f"{stats.existing} already on the hub, {stats.failed} failed; release "
            f"{'complete' if stats.complete else 'not complete yet'}")


# -- recount -------------------------------------------------------------------------------------------


def recount(repo: DatasetRepo, *, releases: Sequence[str] = (),
            read_rows: Callable[[DatasetRepo, str, int], int] | None = None) -> tuple[DomainLedger, DomainLedger]:
    """(old, new) ledgers: shards, rows and bytes of each release recounted from the hub's listing and footers.

    A release whose shards are no longer numbered 0..n-1 without a gap loses its ``complete`` mark.
    """
    from ccrawl.datasets.verify import footer_rows

    rows_of = read_rows or footer_rows
    old = read_ledger(repo)
    new = old.copy()
    by_release: dict[str, list[HubFile]] = {}
    for f in repo.list_files("data"):
        segs = f.path.split("/")
        if len(segs) == 3 and shard_index(f.path) is not None:
            by_release.setdefault(segs[1], []).append(f)
    wanted = set(releases) if releases else set(by_release) | set(old.rows)
    for rel in sorted(wanted):
        r = new.row(rel)
        got = by_release.get(rel, [])
        r["shards"] = len(got)
        r["bytes"] = sum(f.size for f in got)
        r["rows"] = sum(rows_of(repo, f.path, f.size) for f in got)
        if sorted(i for f in got if (i := shard_index(f.path)) is not None) != list(range(len(got))):
            r["complete"] = False
    return old, new
