"""One columnar query from start to records: pick the parts, pick the engine, shape the answer.

``run(kind, filters, index, engine=...)`` yields plain records whatever the engine, with the same
columns and, for the aggregates, the same order (the SQL's ``ORDER BY``), so a test can hold the
engines to identical answers. ``urls``/``locations``/``rows`` come in index order on the native
engine and in DuckDB's order on DuckDB: compare them as multisets.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ccrawl.commoncrawl.columnar import native, sql
from ccrawl.commoncrawl.columnar.filters import Filters
from ccrawl.commoncrawl.columnar.native import Part, ScanStats
from ccrawl.commoncrawl.columnar.source import RangeSource
from ccrawl.errors import UsageError
from ccrawl.jsontypes import Record

if TYPE_CHECKING:
    from pyarrow import RecordBatch

ENGINES = ("auto", "native", "duckdb", "print")

COLUMNS: dict[str, tuple[str, ...]] = {
    "urls": ("url",),
    "locations": sql.LOCATION_COLUMNS,
    "count": ("count",),
    "langs": ("lang", "count"),
    "mimes": ("mime", "count"),
    "hostcdx": sql.HOSTCDX_COLUMNS,
    "diff": sql.DIFF_COLUMNS,
}


@dataclass(slots=True)
class Index:
    """The parts of the selected crawls and the source that reads them."""

    source: RangeSource
    parts: list[Part]
    crawls: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Explain:
    """What a query cost, filled in as it runs (``--explain``)."""

    engine: str = ""
    sql: str = ""
    stats: ScanStats = field(default_factory=ScanStats)
    bytes_read: int = 0
    requests: int = 0
    cache_hits: int = 0
    index_bytes: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        pct = 100.0 * self.bytes_read / self.index_bytes if self.index_bytes else 0.0
        s = self.stats
        text = (
            f"engine {self.engine}: read {self.bytes_read:,} of {self.index_bytes:,} index bytes ({pct:.2f}%) "
            f"in {self.requests} requests ({self.cache_hits} footers from cache), {self.seconds:.2f}s"
        )
        if self.engine == "native":
            text += (
                f"; parts {s.parts} ({s.parts_skipped} ruled out by their footer), row groups {s.row_groups} "
                f"({s.row_groups_skipped} skipped by statistics, {s.row_groups_read} read), url_surtkey pages "
                f"{s.pages} ({s.pages_skipped} skipped by the page index), {s.rows_matched:,} rows"
            )
        return text

    def record(self) -> Record:
        s = self.stats
        return {
            "engine": self.engine, "bytes_read": self.bytes_read, "index_bytes": self.index_bytes,
            "requests": self.requests, "cache_hits": self.cache_hits, "seconds": round(self.seconds, 3),
            "parts": s.parts, "parts_skipped": s.parts_skipped, "row_groups": s.row_groups,
            "row_groups_skipped": s.row_groups_skipped, "row_groups_read": s.row_groups_read,
            "pages": s.pages, "pages_skipped": s.pages_skipped,
        }


def choose_engine(engine: str, *, raw_sql: bool = False) -> str:
    if engine not in ENGINES:
        raise UsageError(f"--engine {engine!r}: use one of {', '.join(ENGINES)}")
    if raw_sql:
        if engine == "native":
            raise UsageError("--engine native answers the filter commands, not SQL; use --engine duckdb (or auto)")
        return "duckdb" if engine == "auto" else engine
    return "native" if engine == "auto" else engine


def run(
    kind: str,
    f: Filters,
    index: Index,
    *,
    engine: str = "auto",
    limit: int | None = None,
    jobs: int = 4,
    crawl_a: str = "",
    crawl_b: str = "",
    explain: Explain | None = None,
) -> Iterator[Record]:
    """The records of one query kind over ``index``."""
    for item in run_arrow(kind, f, index, engine=engine, limit=limit, jobs=jobs, crawl_a=crawl_a, crawl_b=crawl_b,
                          explain=explain, arrow=False):
        if isinstance(item, dict):
            yield item
        else:
            yield from item.to_pylist()


def run_arrow(
    kind: str,
    f: Filters,
    index: Index,
    *,
    engine: str = "auto",
    limit: int | None = None,
    jobs: int = 4,
    crawl_a: str = "",
    crawl_b: str = "",
    explain: Explain | None = None,
    arrow: bool = True,
) -> Iterator[Record | RecordBatch]:
    """As :func:`run`, but with ``arrow`` the native engine's ``urls`` and ``locations`` come as Arrow
    record batches (the rows :func:`run` yields, column for column) instead of a dict a row; every
    other answer (the aggregates, ``rows``, anything DuckDB answers) is records still."""
    engine = choose_engine(engine)
    if engine == "print":
        raise UsageError("--engine print prints SQL; it runs nothing (see `columnar sql`)")
    explain = explain if explain is not None else Explain()
    explain.engine = engine
    before = (index.source.stats.bytes_read, index.source.stats.requests, index.source.stats.cache_hits)
    started = time.perf_counter()
    try:
        if engine == "duckdb":
            yield from _duckdb(kind, f, index, limit=limit, jobs=jobs, crawl_a=crawl_a, crawl_b=crawl_b,
                               explain=explain)
        else:
            yield from _native(kind, f, index, limit=limit, jobs=jobs, crawl_a=crawl_a, crawl_b=crawl_b,
                               explain=explain, arrow=arrow)
    finally:
        st = index.source.stats
        explain.bytes_read = st.bytes_read - before[0]
        explain.requests = st.requests - before[1]
        explain.cache_hits = st.cache_hits - before[2]
        explain.seconds = time.perf_counter() - started
        if not explain.index_bytes:
            explain.index_bytes = sum(index.source.size(p.path) for p in _selected(index.parts, f, kind, crawl_a,
                                                                                   crawl_b))


def _selected(parts: Sequence[Part], f: Filters, kind: str, crawl_a: str, crawl_b: str) -> list[Part]:
    crawls = (crawl_a, crawl_b) if kind == "diff" else None
    return [p for p in parts if f.keeps_subset(p.subset) and (p.crawl in crawls if crawls else f.keeps_crawl(p.crawl))]


def _duckdb(kind: str, f: Filters, index: Index, *, limit: int | None, jobs: int, crawl_a: str, crawl_b: str,
            explain: Explain) -> Iterator[Record]:
    from ccrawl.commoncrawl.columnar import duck

    parts = _selected(index.parts, f, kind, crawl_a, crawl_b)
    text = sql.build(kind, f, limit=limit, crawl_a=crawl_a, crawl_b=crawl_b)
    explain.sql = text
    from ccrawl.errors import InputError
    from ccrawl.store.duck import duck_errors

    with duck_errors("DuckDB could not read the index", InputError):
        con = duck.connect_index(index.source, parts, threads=jobs)
        try:
            names, rows = duck.run_sql(con, text)
        finally:
            con.close()
    if kind == "count":
        names = ["count"]
    for row in rows:
        yield clean_record(dict(zip(names, row, strict=True)))


def clean_record(rec: Record) -> Record:
    out = {}
    for k, v in rec.items():
        if isinstance(v, bytes | bytearray):
            v = bytes(v).hex()
        elif hasattr(v, "isoformat"):
            v = v.isoformat()
        out[k] = v
    return out


def _native(kind: str, f: Filters, index: Index, *, limit: int | None, jobs: int, crawl_a: str, crawl_b: str,
            explain: Explain, arrow: bool = False) -> Iterator[Record | RecordBatch]:
    stats = explain.stats
    if kind == "diff":
        yield from _native_diff(f, index, limit=limit, jobs=jobs, crawl_a=crawl_a, crawl_b=crawl_b, stats=stats)
        return
    stream_limit = limit if kind in ("urls", "locations", "rows") else None
    answers = native.scan(index.source, index.parts, f, kind, jobs=jobs, limit=stream_limit, stats=stats)
    if kind == "count":
        yield {"count": sum(a.count for a in answers)}
        return
    if kind in ("langs", "mimes"):
        total: Counter[Any] = Counter()
        for a in answers:
            total.update(a.groups)
        name = "lang" if kind == "langs" else "mime"
        ordered = sorted(total.items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] or ""))
        for value, count in ordered[: limit or None]:
            yield {name: value, "count": count}
        return
    if kind == "hostcdx":
        yield from _native_hostcdx(answers, limit)
        return
    n = 0
    for a in answers:
        for table in a.tables:
            if limit is not None:
                if n >= limit:
                    return
                table = table.slice(0, limit - n)
            n += table.num_rows
            if arrow and kind != "rows":
                yield from table.to_batches()
                continue
            if kind == "rows":
                yield from map(clean_record, table.to_pylist())
                continue
            # Column by column into Python, then one dict a row (Table.to_pylist builds each row's dict
            # key by key); a single column is a comprehension.
            names = table.column_names
            values = [table.column(c).to_pylist() for c in names]
            if len(names) == 1:
                name = names[0]
                yield from ({name: v} for v in values[0])
            else:
                yield from (dict(zip(names, row, strict=True)) for row in zip(*values, strict=True))


def _native_hostcdx(answers: Iterator[native.PartAnswer], limit: int | None) -> Iterator[Record]:
    captures: Counter[str] = Counter()
    buckets: dict[str, Counter[int]] = {}
    urls: dict[str, set[str]] = {}
    for a in answers:
        for table in a.tables:
            cols = table.to_pydict()
            for host, url, status in zip(cols["url_host_name"], cols["url"], cols["fetch_status"], strict=True):
                captures[host] += 1
                buckets.setdefault(host, Counter())[status // 100] += 1
                urls.setdefault(host, set()).add(url)
    ordered = sorted(captures.items(), key=lambda kv: (-kv[1], kv[0]))
    for host, n in ordered[: limit or None]:
        b = buckets[host]
        yield {"host": host, "captures": n, "urls": len(urls[host]), "status_2xx": b[2], "status_3xx": b[3],
               "status_4xx": b[4], "status_5xx": b[5]}


def _native_diff(f: Filters, index: Index, *, limit: int | None, jobs: int, crawl_a: str, crawl_b: str,
                 stats: ScanStats) -> Iterator[Record]:
    if not crawl_a or not crawl_b:
        raise UsageError("sched diff needs --crawl-a and --crawl-b")
    sides: list[dict[tuple[str, str], str | None]] = []
    for crawl in (crawl_a, crawl_b):
        side: dict[tuple[str, str], str | None] = {}
        fs = native.diff_filters(f, crawl)
        if fs is not None:
            for a in native.scan(index.source, index.parts, fs, "diff", jobs=jobs, stats=stats):
                for table in a.tables:
                    cols = table.to_pydict()
                    for url, host, digest in zip(cols["url"], cols["url_host_name"], cols["content_digest"],
                                                 strict=True):
                        key = (url, host)
                        old = side.get(key, digest) if key in side else digest
                        side[key] = _min_digest(old, digest)
        sides.append(side)
    a_side, b_side = sides
    b_by_url: dict[str, list[str | None]] = {}
    for (url, _host), digest in b_side.items():
        b_by_url.setdefault(url, []).append(digest)
    total: Counter[str] = Counter()
    changed: Counter[str] = Counter()
    for (url, host), digest in a_side.items():
        for other in b_by_url.get(url, ()):
            total[host] += 1
            if digest is None or other is None or digest != other:
                changed[host] += 1
    ordered = sorted(total.items(), key=lambda hn: (-(changed[hn[0]] / hn[1]), -hn[1], hn[0]))
    rows: list[Record] = [
        {"host": h, "urls": n, "changed": changed[h], "change_rate": changed[h] / n} for h, n in ordered
    ]
    yield from rows[: limit or None]


def _min_digest(a: str | None, b: str | None) -> str | None:
    """SQL's MIN: NULLs ignored unless there is nothing else."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def records_of(rows: Sequence[Mapping[str, object]]) -> list[Record]:
    return [dict(r) for r in rows]


Notice = Callable[[str], None]
