"""``urls publish``: mirror Common Crawl's cc-index-table to a dataset repo, one shard per source part.

Layout of the mirror (``open-index/ccrawl-urls``)::

    data/<crawl>/part-NNNNN.parquet   one per ``subset=warc`` part of the crawl, NNNNN its part number
    stats.csv                         one row per crawl: parts in the manifest, shards, rows, bytes, complete
    README.md                         the card, rebuilt from stats.csv on every commit (data: Parquet only)

A shard is the source part projected to :data:`URL_COLUMNS`: same rows, same order, same row groups.
The projection is pyarrow's (``read_row_group(columns=...)`` then ``write_table``): no Python per row.
Without ``whole`` the part is read over ranged requests (:class:`~ccrawl.commoncrawl.columnar.source.SparseFile`),
so only the footer and the projected column chunks cross the wire.

Resume asks the hub: the shard paths a crawl's manifest allows are checked in one ``exists`` call and
the ones there are skipped. A shard and the stats.csv row that counts it land in one atomic commit whose
parent is the head the ledger was read at; right before committing the batch is checked against the hub
again, so a shard another run committed meanwhile is neither uploaded again nor counted twice. Local
shards are deleted once committed (``keep`` keeps them); a shard sealed by a killed run is reused.
"""

from __future__ import annotations

import csv
import io
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccrawl import durable
from ccrawl.errors import InputError, NothingMatched
from ccrawl.hub.repo import Add, DatasetRepo, HubFile
from ccrawl.hub.staged import StagedPublisher, UpkeepOptions, check_upkeep, spawn
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar.source import RangeSource

#: The URL-level columns of the cc-index-table the mirror keeps, in the source's order.
URL_COLUMNS = (
    "url_surtkey", "url", "url_host_name", "url_host_tld", "url_host_registered_domain", "url_protocol",
    "url_port", "url_path", "url_query", "fetch_time", "fetch_status", "content_mime_detected",
    "content_languages",
)
STATS = "stats.csv"
STATS_FIELDS = ("crawl", "parts", "shards", "rows", "bytes", "complete")
#: Key of the shard's Parquet key-value metadata naming the source part it was projected from.
SOURCE_KEY = b"ccrawl.source"
RECORD_COLUMNS = ("crawl", "shard", "source", "rows", "bytes", "action", "commit")
_PART_NUMBER = re.compile(r"part-(\d+)")


def url_schema() -> pa.Schema:
    """The mirror's Arrow schema: the cc-index-table's own types for :data:`URL_COLUMNS`."""
    import pyarrow as pa

    from ccrawl.commoncrawl.columnar.schema import arrow_schema

    full = arrow_schema()
    return pa.schema([full.field(n) for n in URL_COLUMNS])


def shard_path(crawl: str, source_part: str) -> str:
    """``data/<crawl>/part-NNNNN.parquet`` for a source part (its number, from its file name)."""
    m = _PART_NUMBER.search(source_part.rsplit("/", 1)[-1])
    if not m:
        raise InputError(f"{source_part}: not a cc-index-table part name (no part-NNNNN)")
    return f"data/{crawl}/part-{int(m.group(1)):05d}.parquet"


# -- the ledger --------------------------------------------------------------------------------------


@dataclass(slots=True)
class UrlLedger:
    """stats.csv: one row per crawl. ``parts`` is the manifest's count, the rest what is on the hub."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> UrlLedger:
        led = cls()
        for r in csv.DictReader(io.StringIO(text or "")):
            if not r.get("crawl"):
                continue
            led.rows[r["crawl"]] = {
                "crawl": r["crawl"], "parts": int(r.get("parts") or 0), "shards": int(r.get("shards") or 0),
                "rows": int(r.get("rows") or 0), "bytes": int(r.get("bytes") or 0),
            }
        return led

    def copy(self) -> UrlLedger:
        return UrlLedger({k: dict(v) for k, v in self.rows.items()})

    def row(self, crawl: str) -> dict[str, Any]:
        return self.rows.setdefault(crawl, {"crawl": crawl, "parts": 0, "shards": 0, "rows": 0, "bytes": 0})

    def add(self, crawl: str, rows: int, size: int) -> None:
        r = self.row(crawl)
        r["shards"] += 1
        r["rows"] += rows
        r["bytes"] += size

    def render(self) -> bytes:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(STATS_FIELDS)
        for crawl in sorted(self.rows, reverse=True):
            r = self.rows[crawl]
            complete = bool(r["parts"]) and r["shards"] >= r["parts"]
            w.writerow([crawl, r["parts"], r["shards"], r["rows"], r["bytes"], "true" if complete else "false"])
        return out.getvalue().encode()


def render_card(repo_id: str, ledger: UrlLedger) -> str:
    """The dataset card: YAML front matter declaring only the Parquet shards as data, and the totals."""
    crawls = sorted(ledger.rows, reverse=True)
    lines = ["---", "license: other", "pretty_name: Common Crawl URL index (ccrawl mirror)", "configs:"]
    lines += ["- config_name: default", "  data_files:", "  - split: train", '    path: "data/*/*.parquet"']
    for c in crawls:
        lines += [f"- config_name: {c}", "  data_files:", "  - split: train", f'    path: "data/{c}/*.parquet"']
    lines += ["---", "", f"# {repo_id}", "",
              "The Common Crawl columnar URL index (cc-index-table, subset=warc), one Parquet shard per source "
              "part, rows and order unchanged, projected to the URL-level columns: "
              + ", ".join(f"`{c}`" for c in URL_COLUMNS) + ".", "",
              "| crawl | shards | of parts | rows | bytes | complete |", "|---|---:|---:|---:|---:|---|"]
    total_rows = total_bytes = 0
    for c in crawls:
        r = ledger.rows[c]
        total_rows += r["rows"]
        total_bytes += r["bytes"]
        done = "yes" if r["parts"] and r["shards"] >= r["parts"] else "no"
        lines.append(f"| {c} | {r['shards']:,} | {r['parts']:,} | {r['rows']:,} | {r['bytes']:,} | {done} |")
    lines += ["", f"Total: {total_rows:,} rows in {total_bytes:,} bytes of Parquet. Built by ccrawl from "
              f"`{STATS}`, which this card is regenerated from on every commit.", ""]
    return "\n".join(lines)


def read_ledger(repo: DatasetRepo) -> UrlLedger:
    try:
        return UrlLedger.parse(repo.read_text(STATS))
    except NothingMatched:
        return UrlLedger()


# -- converting one part -------------------------------------------------------------------------------


@dataclass(slots=True)
class ShardResult:
    """What converting one source part produced (a typed message from a worker)."""

    crawl: str
    source: str
    shard: str
    local: str
    rows: int = 0
    size: int = 0
    error: str = ""


def convert_part(source: RangeSource, part: str, dest: Path, *, whole: bool = False) -> tuple[int, int]:
    """Project the source ``part`` into the shard ``dest``; returns (rows, bytes written).

    Row group for row group, so the shard keeps the source's order and grouping. Written to
    ``dest.tmp`` and renamed once whole, so a ``.parquet`` in the staging directory is always complete.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.commoncrawl.columnar.source import SparseFile

    if whole:
        size = source.size(part)
        fh: pa.BufferReader | SparseFile = pa.BufferReader(source.read(part, 0, size))
        meta = None
    else:
        # The footer from the source's cached tail, handed to pyarrow so it does not probe the file's
        # last 64 KiB again: only the projected column chunks are fetched after it.
        from ccrawl.datasets.verify import FooterFile

        fh = SparseFile(source, part)
        try:
            meta = pq.read_metadata(FooterFile(source.size(part), source.footer(part)))
        except InputError:
            raise
        except Exception as exc:
            raise InputError(f"{part}: the footer does not parse: {exc}") from exc
    try:
        # pre_buffer only where it overlaps ranged requests (a part held whole has none to overlap);
        # the reader reads Python bytes either way, so it is closed below, not left to the collector
        # (docs/datasets.md, "Arrow readers over Python bytes").
        pf = pq.ParquetFile(fh, metadata=meta, pre_buffer=not whole)
    except Exception as exc:
        raise InputError(f"{part}: not readable Parquet: {exc}") from exc
    try:
        schema = url_schema().with_metadata({SOURCE_KEY: part.encode()})
        missing = [c for c in URL_COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise InputError(f"{part}: the source part lacks column(s) {', '.join(missing)}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        rows = 0
        with durable.writing(dest) as tmp, \
                pq.ParquetWriter(tmp, schema, compression="zstd", write_statistics=True) as writer:
            for group in range(pf.num_row_groups):
                table = pf.read_row_group(group, columns=list(URL_COLUMNS), use_threads=False).cast(schema)
                rows += table.num_rows
                writer.write_table(table, row_group_size=max(1, table.num_rows))
    finally:
        pf.close(force=True)
    return rows, dest.stat().st_size


def sealed_shard(path: Path, part: str) -> tuple[int, int] | None:
    """(rows, size) of a shard a killed run sealed from ``part``, None when it is not one."""
    import pyarrow.parquet as pq

    if not path.is_file():
        return None
    try:
        meta = pq.read_metadata(path)
    except Exception:
        path.unlink(missing_ok=True)
        return None
    kv = meta.metadata or {}
    if kv.get(SOURCE_KEY) != part.encode():
        return None
    return meta.num_rows, path.stat().st_size


# -- the publisher ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class UrlsPublishOptions(UpkeepOptions):
    """Every knob of ``urls publish``; the CLI passes its flags straight through."""

    repo_id: str = "open-index/ccrawl-urls"
    commit_every: int = 16
    whole: bool = False
    staging: Path = Path("urls-staging")

    def __post_init__(self) -> None:
        check_upkeep(self, default_workers=min(8, (os.cpu_count() or 1) * 2))


@dataclass(slots=True)
class UrlsPublishStats:
    converted: int = 0
    reused: int = 0
    committed: int = 0
    staged: int = 0
    existing: int = 0
    failed: int = 0
    rows: int = 0
    bytes_written: int = 0
    source_bytes_read: int = 0
    commits: int = 0
    conflicts: int = 0


@dataclass(slots=True)
class _Job:
    crawl: str
    part: str
    shard: str
    local: Path


class UrlsPublisher(StagedPublisher[ShardResult, UrlLedger]):
    """Converts source parts and publishes the shards; see the module docstring.

    ``crawls`` maps each crawl id to its ``subset=warc`` source part paths; ``source`` is a
    :class:`~ccrawl.commoncrawl.columnar.source.RangeSource` the parts are read through.
    """

    what = "urls publish"

    def __init__(self, opts: UrlsPublishOptions, repo: DatasetRepo | None, source: RangeSource,
                 crawls: dict[str, list[str]], *, log: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep, stats: UrlsPublishStats | None = None) -> None:
        self.stats = stats if stats is not None else UrlsPublishStats()
        super().__init__(opts, repo, UrlLedger(), self.stats, log=log, sleep=sleep)
        self.opts = opts
        self.source = source
        self.crawls = crawls

    # -- the hooks of StagedPublisher ------------------------------------------------------------------

    def read_ledger(self) -> UrlLedger:
        if self.repo is None:
            return self.ledger.copy()
        return UrlLedger.parse(self.read_text(STATS))

    def shard_of(self, item: ShardResult) -> str:
        return item.shard

    def local_of(self, item: ShardResult) -> Path:
        return Path(item.local)

    def build_commit(self, base: UrlLedger, new: Sequence[ShardResult]) -> tuple[UrlLedger, list[Add], str]:
        ledger = base.copy()
        for crawl, parts in self.crawls.items():
            ledger.row(crawl)["parts"] = len(parts)
        for r in new:
            ledger.add(r.crawl, r.rows, r.size)
        files = [Add(STATS, ledger.render()), Add("README.md", render_card(self.opts.repo_id, ledger).encode())]
        rows = sum(r.rows for r in new)
        message = f"urls: {len(new)} shard(s), {rows:,} rows ({', '.join(sorted({r.crawl for r in new}))})"
        return ledger, files, message

    def record(self, item: ShardResult, action: str, commit: str) -> Record:
        return self._record(item.crawl, item.shard, item.source, None if action == "exists" else item, action,
                            commit)

    def counted(self, item: ShardResult) -> None:
        self.stats.rows += item.rows
        self.stats.bytes_written += item.size

    # -- the run ---------------------------------------------------------------------------------------

    def resume(self) -> None:
        if not self.open_hub():
            return
        self.ledger = self.read_ledger()
        if self.ledger.rows:
            done = sum(r["shards"] for r in self.ledger.rows.values())
            self.log(f"urls publish: resuming {self.opts.repo_id}: {done} shard(s) already counted in {STATS}")

    def plan(self) -> tuple[list[_Job], list[Record]]:
        jobs: list[_Job] = []
        records: list[Record] = []
        for crawl, parts in self.crawls.items():
            self.ledger.row(crawl)["parts"] = len(parts)
            wanted = {p: shard_path(crawl, p) for p in parts}
            if len(set(wanted.values())) != len(wanted):
                raise InputError(f"{crawl}: two source parts share a part number; cannot name one shard per part")
            there = self.exists(list(wanted.values()))
            for p, shard in wanted.items():
                if there.get(shard):
                    self.stats.existing += 1
                    self.drop_local(self.opts.staging / shard)  # committed by a run killed before its delete
                    records.append(self._record(crawl, shard, p, None, "exists", ""))
                else:
                    jobs.append(_Job(crawl, p, shard, self.opts.staging / shard))
            self.log(f"urls publish: {crawl}: {len(parts)} part(s), "
                     f"{sum(1 for j in jobs if j.crawl == crawl)} to convert, "
                     f"{sum(1 for v in there.values() if v)} already on the hub")
        return jobs, records

    @staticmethod
    def _record(crawl: str, shard: str, source: str, result: ShardResult | None, action: str,
                commit: str) -> Record:
        return {"crawl": crawl, "shard": shard, "source": source, "rows": result.rows if result else None,
                "bytes": result.size if result else None, "action": action, "commit": commit or None}

    def _convert(self, job: _Job) -> ShardResult:
        res = ShardResult(job.crawl, job.part, job.shard, str(job.local))
        try:
            res.rows, res.size = convert_part(self.source, job.part, job.local, whole=self.opts.whole)
        except (InputError, OSError) as exc:
            res.error = str(exc)
        return res

    def _spawn(self, job: _Job) -> Future[ShardResult]:
        """Convert ``job`` on a daemon thread: a stalled run exits 75 at once, not after its stuck reads."""
        return spawn(lambda: self._convert(job), name=f"ccrawl-urls-{job.shard}")

    def _accept(self, job: _Job, res: ShardResult) -> tuple[ShardResult | None, Record | None]:
        if res.error:
            self.stats.failed += 1
            self.log(f"urls publish: {job.part}: {res.error}; left for the next run")
            return None, self._record(job.crawl, job.shard, job.part, None, f"failed: {res.error}", "")
        self.stats.converted += 1
        return res, None

    def run(self) -> Iterator[Record]:
        with self.staging_lock():
            self.clock.progressed()
            self.resume()
            jobs, records = self.plan()
            yield from records
            yield from self._work(jobs)
            self.stats.source_bytes_read = int(getattr(getattr(self.source, "stats", None), "bytes_read", 0))

    def _work(self, jobs: list[_Job]) -> Iterator[Record]:
        ready: list[ShardResult] = []
        queue: list[_Job] = []
        for job in jobs:
            got = sealed_shard(job.local, job.part)
            if got is not None:
                self.stats.reused += 1
                ready.append(ShardResult(job.crawl, job.part, job.shard, str(job.local), got[0], got[1]))
            else:
                queue.append(job)
        yield from self.drain(queue, self._spawn, self._accept, ready, unit="part")


def summary_line(stats: UrlsPublishStats, *, no_push: bool) -> str:
    verb = "staged" if no_push else "committed"
    return (f"urls publish: converted {stats.converted} part(s) (reused {stats.reused}), {verb} "
            f"{stats.staged if no_push else stats.committed} shard(s) with {stats.rows:,} rows in "
            f"{stats.commits} commit(s); {stats.existing} already on the hub, {stats.failed} failed; read "
            f"{stats.source_bytes_read:,} source bytes, wrote {stats.bytes_written:,}")


# -- recount ---------------------------------------------------------------------------------------------


def recount(repo: DatasetRepo, *, crawls: Sequence[str] = (), parts: dict[str, int] | None = None,
            read_rows: Callable[[DatasetRepo, str, int], int] | None = None) -> tuple[UrlLedger, UrlLedger]:
    """(old, new) ledgers: shards, rows and bytes of each crawl recounted from the hub's listing and footers.

    ``parts`` (the manifest counts) overrides the ledger's when given; a crawl with no shard on the hub
    keeps its row with zero counts.
    """
    from ccrawl.datasets.verify import footer_rows

    rows_of = read_rows or footer_rows
    old = read_ledger(repo)
    new = old.copy()
    files = [f for f in repo.list_files("data") if f.path.endswith(".parquet")]
    by_crawl: dict[str, list[HubFile]] = {}
    for f in files:
        segs = f.path.split("/")
        if len(segs) == 3:
            by_crawl.setdefault(segs[1], []).append(f)
    wanted = set(crawls) if crawls else set(by_crawl) | set(old.rows)
    for crawl in sorted(wanted):
        r = new.row(crawl)
        got = by_crawl.get(crawl, [])
        r["shards"] = len(got)
        r["bytes"] = sum(f.size for f in got)
        r["rows"] = sum(rows_of(repo, f.path, f.size) for f in got)
        if parts and crawl in parts:
            r["parts"] = parts[crawl]
    return old, new
