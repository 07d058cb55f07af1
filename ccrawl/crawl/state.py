"""The frontier's state file: one SQLite database (WAL) holding everything a killed run needs.

Tables (``docs/crawl.md`` has the same)::

    meta(k, v)                        fetched count, seeds_loaded, the run's settings, the seen set's
                                      manifest (``seen_runs``) and count (``seen``)
    seen_log(id PK, keys BLOB)        the seen keys admitted since the last spill to a run
                                      (:mod:`ccrawl.crawl.seen`; the runs are in ``<state>.seen/``)
    edges_log(id PK, keys BLOB)       the same for the (linking domain, target) pairs of the trap
                                      budgets (runs in ``<state>.edges/``)
    qseg(id PK, host, prio, n, done, data)  a host's waiting URLs of one depth admitted in one flush
        (``url`` or ``url<TAB>hops`` lines, zstd when smaller); ``done`` is the cursor of those fetched
    qidx(host, prio, id), qnew(host, prio, id)  WITHOUT ROWID: how a host's segments are found; new
        entries go to the small ``qnew``, folded into ``qidx`` in one sorted pass past ``QNEW_MAX``
    unsealed(id PK, host, prio, url, depth, hops, file)  fetched into WARC file ``file``, not sealed yet
    hosts(host PK, next_at, delay, pending, rank, admitted, indeg)  politeness clock (unix seconds), robots
        Crawl-delay, count of waiting URLs, admission order of the host's first URL (a seed list in
        rank order keeps that order), URLs admitted and linking registered domains (trap budget);
        partial index on (next_at, rank) where pending > 0
    domains(domain PK, admitted, indeg)  the same trap-budget counts per registered domain
    seed_hosts(host PK)               the hosts the seeds named (for --same-host)
    outbox(id PK, part, url, depth, hops, source)  links this partition found for another (``--fetchers`` > 1),
        with the linking page's registered domain (its trap-budget vote), kept until the owner says it
        committed them; a restart sends them all again

A URL leaves the queue when its fetch failed (nothing to archive) or when the WARC file holding
its page is sealed, so the queue holds only URLs not yet safely on disk, and the seen set is what
grows with the crawl: 8 bytes per URL in sorted runs beside the file (:mod:`ccrawl.crawl.seen`). Only one
process may open a state file (``flock`` on ``<state>.lock``).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ccrawl.crawl.seen import MEM_KEYS, SeenStore
from ccrawl.errors import UsageError

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS qseg(id INTEGER PRIMARY KEY, host TEXT NOT NULL, prio INTEGER NOT NULL,
    n INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS qidx(host TEXT NOT NULL, prio INTEGER NOT NULL, id INTEGER NOT NULL,
    PRIMARY KEY(host, prio, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS qnew(host TEXT NOT NULL, prio INTEGER NOT NULL, id INTEGER NOT NULL,
    PRIMARY KEY(host, prio, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS unsealed(id INTEGER PRIMARY KEY, host TEXT NOT NULL, prio INTEGER NOT NULL,
    url TEXT NOT NULL, depth INTEGER NOT NULL, hops INTEGER NOT NULL DEFAULT 0, file TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS unsealed_file ON unsealed(file);
CREATE TABLE IF NOT EXISTS hosts(
    host TEXT PRIMARY KEY, next_at REAL NOT NULL DEFAULT 0, delay REAL NOT NULL DEFAULT 0,
    pending INTEGER NOT NULL DEFAULT 0, rank INTEGER NOT NULL DEFAULT 0,
    admitted INTEGER NOT NULL DEFAULT 0, indeg INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS hosts_ready ON hosts(next_at, rank) WHERE pending > 0;
CREATE TABLE IF NOT EXISTS domains(domain TEXT PRIMARY KEY, admitted INTEGER NOT NULL DEFAULT 0,
    indeg INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seed_hosts(host TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox(id INTEGER PRIMARY KEY, part INTEGER NOT NULL, url TEXT NOT NULL,
    depth INTEGER NOT NULL, hops INTEGER NOT NULL DEFAULT 0, source TEXT);
"""

#: columns added since a table was first written: a state file from an older ccrawl gets them on open
ADDED_COLUMNS = (("outbox", "hops", "INTEGER NOT NULL DEFAULT 0"), ("outbox", "source", "TEXT"),
                 ("hosts", "admitted", "INTEGER NOT NULL DEFAULT 0"), ("hosts", "indeg", "INTEGER NOT NULL DEFAULT 0"))

SEEN_FORMAT = 4
"""The state's layout: 1 was a ``seen`` table of 10-byte keys and a ``queue`` table of one row per URL,
4 finds a host's segments through ``qidx`` and ``qnew`` instead of an index on ``qseg`` (a file of
format 2 or 3 gets them from its index on open, and the index goes),
2 the sorted runs of :mod:`ccrawl.crawl.seen` and the queue in zlib segments, 3 the same with zstd
segments (a file of format 1 is migrated on open, one of format 2 is read as it is; an older ccrawl
refuses format 3 with a clear message instead of failing on a zstd segment, and one from before
format 4 refuses a file whose ``qseg`` index it would recreate without keeping ``qidx`` up to date)."""

QNEW_MAX = 1 << 18
"""Segments found through ``qnew`` before they are folded into ``qidx`` in one sorted pass (~10 MB)."""

WAL_PAGES = 10_000
"""Pages the write-ahead log takes before a commit copies it into the file (SQLite's default is 1,000).
A flush dirties the same hot pages again and again (each host's current segment, the tails of its
``qnew`` range, the hosts table), and a checkpoint writes each page it holds once, so a longer log
writes a hot page once for ~130 flushes instead of ~13: a replay of a flush's writes (33 segments in,
33 done counters, a 4 KB seen-log row) measured COMMIT at 550-950 us against 740-1,380 with the default,
from 66k to 264k queue segments (bench/README.md, "the in-memory check as a hash set"). The log file grows
to ~40 MB before it is reused."""

SEG_BITS = 16
"""An item's ``seq`` is its segment's id shifted by this, plus its index in the segment."""
SEG_MAX = 4096
"""URLs per queue segment at most."""


def _zstd() -> Any:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from backports import zstd
        except ImportError:
            return None
    return zstd


_ZSTD = _zstd()
_PACKER = _ZSTD.ZstdCompressor(level=3) if _ZSTD is not None else None
"""One compressor for every segment: a new context per call would cost more than compressing a segment."""


def encode_body(text: bytes) -> bytes:
    """A queue segment's blob from its body (the lines): zstd-compressed when that is smaller (first byte
    2; zlib, first byte 1, where zstd is missing) else raw (first byte 0). zstd at level 3 takes a quarter
    of zlib's time on a segment of a few KB for the same size."""
    if len(text) > 96:
        if _PACKER is not None:
            packed: bytes = _PACKER.compress(text, mode=_ZSTD.ZstdCompressor.FLUSH_FRAME)
            if len(packed) < len(text):
                return b"\x02" + packed
        else:
            packed = zlib.compress(text, 6)
            if len(packed) < len(text):
                return b"\x01" + packed
    return b"\x00" + text


def encode_segment(entries: list[tuple[str, int]]) -> bytes:
    """A queue segment's blob: lines ``url`` or ``url<TAB>hops`` (see :func:`encode_body`). Canonical URLs
    hold no tab or newline."""
    return encode_body("\n".join(u if not h else f"{u}\t{h}" for u, h in entries).encode("utf-8"))


def decode_segment(data: bytes) -> list[tuple[str, int]]:
    kind = data[:1]
    if kind == b"\x02":
        if _ZSTD is None:
            raise UsageError("this state file's queue is zstd-compressed and no zstd module is installed "
                             "(pip install backports.zstd)")
        body = _ZSTD.ZstdDecompressor().decompress(data[1:])
    else:
        body = zlib.decompress(data[1:]) if kind == b"\x01" else data[1:]
    out = []
    for line in body.decode("utf-8").split("\n"):
        url, _, hops = line.partition("\t")
        out.append((url, int(hops) if hops else 0))
    return out


def lock_file(path: Path, *, wait: float, what: str) -> int:
    """An open descriptor holding ``flock(path)``; a usage error when another process keeps it past ``wait``."""
    fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise UsageError(f"{what}: another crawl run is using this state file") from None
            time.sleep(0.05)


def part_path(state: Path, part: int) -> Path:
    """Partition ``part``'s state file: ``state`` itself for 0 (a one-process run's file), else ``state.partN``."""
    return state if part == 0 else state.with_name(f"{state.name}.part{part}")


class StateFile:
    """The open database and its lock. ``cache_mb`` bounds SQLite's page cache."""

    def __init__(self, path: Path | str, *, cache_mb: int = 64, wait: float = 0.0) -> None:
        """``wait``: seconds to wait for the lock (the processes of a killed run take a moment to die)."""
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            raise UsageError(f"--state {self.path}: the directory {self.path.parent} does not exist")
        self._lock_fd = lock_file(Path(str(self.path) + ".lock"), wait=wait, what=f"--state {self.path}")
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed transaction survives a killed process (only a power
            # cut can lose the last ones), and no commit waits for an fsync.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA cache_size=-{max(1, cache_mb) * 1024}")
            self.db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
            self.db.executescript(SCHEMA)
            for table, column, decl in ADDED_COLUMNS:
                have = {str(r[1]) for r in self.db.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
            fmt = int(self.get("seen_format", "0") or 0)
            if fmt > SEEN_FORMAT:
                raise UsageError(f"--state {self.path}: written by a newer ccrawl (seen-set format {fmt}, this one "
                                 f"reads {SEEN_FORMAT}); finish the crawl with that version")
            # CCRAWL_SEEN_MEM_KEYS: keys kept in memory before a spill (tests make it small to spill and merge often)
            mem = int(os.environ.get("CCRAWL_SEEN_MEM_KEYS") or 0) or MEM_KEYS
            self._qnew = 0
            self.seen = SeenStore(self.db, Path(str(self.path) + ".seen"), mem_keys=mem)
            self.edges = SeenStore(self.db, Path(str(self.path) + ".edges"), mem_keys=1 << 20, name="edges")
            if fmt < SEEN_FORMAT:
                self._migrate_seen()
            self._qnew = int(self.db.execute("SELECT count(*) FROM qnew").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            os.close(self._lock_fd)
            raise UsageError(f"--state {self.path}: not a crawl state file ({exc})") from None
        except BaseException:
            os.close(self._lock_fd)
            raise

    def _migrate_seen(self) -> None:
        """A state file of seen-set format 1 (a ``seen`` table of 10-byte blake3 keys): its keys' first
        8 bytes are the new keys (blake3's output is a prefix of the longer one), written as runs, then
        one transaction names them and drops the table. A kill before that commit leaves the file as it
        was (the runs are orphans, deleted at the next open)."""
        db = self.db
        has_table = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='seen'").fetchone()
        if has_table:
            self.seen.import_keys(db.execute("SELECT key FROM seen"))
        else:
            db.execute("BEGIN IMMEDIATE")
        db.execute("DROP TABLE IF EXISTS seen")
        if db.execute("SELECT 1 FROM sqlite_master WHERE type='index' AND name='qseg_host'").fetchone():  # 2, 3
            db.execute("INSERT OR IGNORE INTO qidx(host, prio, id) SELECT host, prio, id FROM qseg")
            db.execute("DROP INDEX qseg_host")
        if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='queue'").fetchone():
            cols = {str(r[1]) for r in db.execute("PRAGMA table_info(queue)")}
            hops = "hops" if "hops" in cols else "0"
            db.execute(f"INSERT INTO unsealed(host, prio, url, depth, hops, file) SELECT host, prio, url, depth, "
                       f"{hops}, file FROM queue WHERE state=1")
            rows = db.execute(f"SELECT host, prio, url, {hops} FROM queue WHERE state=0 ORDER BY host, prio, seq")
            self.queue_segments(rows)
            db.execute("DROP TABLE queue")
        self.put("seen_format", SEEN_FORMAT)
        self.put("seen", self.seen.count)
        db.execute("COMMIT")

    def get(self, key: str, default: str = "") -> str:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (key,)).fetchone()
        return str(row[0]) if row else default

    def put(self, key: str, value: object) -> None:
        self.db.execute("INSERT INTO meta(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v",
                        (key, str(value)))

    def recover(self, is_sealed: Callable[[str], bool]) -> tuple[int, int]:
        """After a restart: rows whose WARC file was sealed are done, the rest wait again.

        ``is_sealed(name)`` says whether the WARC file ``name`` was sealed.
        Returns (rows forgotten as done, rows put back in the queue). Pending counts are
        recomputed from the queue, so a kill between any two statements leaves them right.
        The ``fetched`` count (what ``--max-pages`` is measured against) gives back the rows put
        back, in the same transaction: it counts pages in sealed files, failures and robots skips,
        never a page a kill lost.
        """
        done = back = 0
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        files = [r[0] for r in db.execute("SELECT DISTINCT file FROM unsealed")]
        for name in files:
            if is_sealed(name):
                done += db.execute("DELETE FROM unsealed WHERE file=?", (name,)).rowcount
                continue
            rows = db.execute("SELECT host, prio, url, hops FROM unsealed WHERE file=? ORDER BY host, prio, id",
                              (name,)).fetchall()
            back += self.queue_segments(rows)
            db.execute("DELETE FROM unsealed WHERE file=?", (name,))
        if back:
            db.execute("UPDATE meta SET v = CAST(max(0, CAST(v AS INTEGER) - ?) AS TEXT) WHERE k='fetched'", (back,))
        # (qseg has no index on host: one pass grouped by host, not a search per host)
        waiting = db.execute("SELECT host, sum(n - done) FROM qseg GROUP BY host").fetchall()
        db.execute("UPDATE hosts SET pending=0 WHERE pending != 0")
        db.executemany("UPDATE hosts SET pending=? WHERE host=?", [(int(p), str(h)) for h, p in waiting])
        db.execute("COMMIT")
        return done, back

    def queue_segments(self, rows: Iterable[tuple[str, int, str, int]]) -> int:
        """Write (host, prio, url, hops) rows, sorted by host and prio, as queue segments; returns the count."""
        total = 0
        key: tuple[str, int] | None = None
        group: list[tuple[str, int]] = []

        def out() -> None:
            if key is not None and group:
                self.add_segments([(key[0], key[1], len(group[i:i + SEG_MAX]), encode_segment(group[i:i + SEG_MAX]))
                                   for i in range(0, len(group), SEG_MAX)])

        for host, prio, url, hops in rows:
            if (host, prio) != key:
                out()
                key, group = (str(host), int(prio)), []
            group.append((str(url), int(hops)))
            total += 1
        out()
        return total

    def add_segments(self, rows: list[tuple[str, int, int, bytes]]) -> None:
        """Queue segments (host, prio, n, data), inside the caller's transaction: the rows go to ``qseg``
        (ids in order, after the largest), and (host, prio, id) to ``qnew``, a small table a host's lookup
        reads beside ``qidx``. Past :data:`QNEW_MAX` rows ``qnew`` is folded into ``qidx`` in one sorted pass,
        so the big index is written a page at a time in order, not a random page per segment (the B-tree
        index on ``qseg(host, ...)`` this replaces cost a page write per segment once it outgrew the cache)."""
        if not rows:
            return
        base = int(self.db.execute("SELECT coalesce(max(id), 0) FROM qseg").fetchone()[0])
        ids = range(base + 1, base + 1 + len(rows))
        self.db.executemany("INSERT INTO qseg(id, host, prio, n, data) VALUES(?,?,?,?,?)",
                            [(i, h, p, n, d) for i, (h, p, n, d) in zip(ids, rows, strict=True)])
        self.db.executemany("INSERT INTO qnew(host, prio, id) VALUES(?,?,?)",
                            sorted((h, p, i) for i, (h, p, _, _) in zip(ids, rows, strict=True)))
        self._qnew += len(rows)
        if self._qnew > QNEW_MAX:
            self.db.execute("INSERT INTO qidx(host, prio, id) SELECT host, prio, id FROM qnew")
            self.db.execute("DELETE FROM qnew")
            self._qnew = 0

    def drop_segment(self, host: str, prio: int, seg: int) -> bool:
        """Delete segment ``seg`` of ``host`` when every URL of it is done (inside the caller's transaction)."""
        if not self.db.execute("DELETE FROM qseg WHERE id=? AND done >= n", (seg,)).rowcount:
            return False
        for table in ("qnew", "qidx"):
            self.db.execute(f"DELETE FROM {table} WHERE host=? AND prio=? AND id=?", (host, prio, seg))
        return True

    def segments(self, host: str, offset: int, limit: int = 16) -> list[tuple[int, int, int, int, bytes]]:
        """A host's segments as (id, prio, n, done, data), by prio then id, ``limit`` from ``offset``.
        Each index is read in its key order up to ``limit + offset`` rows before the join, so a refill
        reads ``limit`` segments' blobs, not every segment the host has queued (that grew with the queue)."""
        rows = self.db.execute(
            "SELECT q.id, q.prio, q.n, q.done, q.data FROM (SELECT prio, id FROM ("
            "SELECT * FROM (SELECT prio, id FROM qidx WHERE host=?1 ORDER BY prio, id LIMIT ?2 + ?3) UNION ALL "
            "SELECT * FROM (SELECT prio, id FROM qnew WHERE host=?1 ORDER BY prio, id LIMIT ?2 + ?3)) "
            "ORDER BY prio, id LIMIT ?2 OFFSET ?3) AS i JOIN qseg q ON q.id = i.id ORDER BY i.prio, i.id",
            (host, limit, offset)).fetchall()
        return [(int(i), int(p), int(n), int(d), bytes(b)) for i, p, n, d, b in rows]

    def waiting(self) -> list[tuple[str, str, int, int]]:
        """Every waiting URL as (host, url, depth, hops), by host, depth and admission (tests, tools)."""
        out = []
        rows = self.db.execute("SELECT host, prio, done, data FROM qseg ORDER BY host, prio, id")
        for host, prio, done, data in rows:
            out += [(str(host), u, int(prio), h) for u, h in decode_segment(data)[int(done):]]
        return out

    def counts(self) -> dict[str, int]:
        one = self.db.execute
        return {
            "seen": self.seen.count,
            "queued": int(one("SELECT coalesce(sum(n - done), 0) FROM qseg").fetchone()[0]),
            "unsealed": int(one("SELECT count(*) FROM unsealed").fetchone()[0]),
            "hosts": int(one("SELECT count(*) FROM hosts").fetchone()[0]),
            "hosts_pending": int(one("SELECT count(*) FROM hosts WHERE pending > 0").fetchone()[0]),
            "outbox": int(one("SELECT count(*) FROM outbox").fetchone()[0]),
        }

    def close(self) -> None:
        """Close both stores, the database and the lock, each whatever the others did (a stuck merge is
        :class:`ccrawl.crawl.seen.MergeStuck`, raised once everything else is closed)."""
        error: BaseException | None = None
        for step in (self.seen.close, self.edges.close, self.db.close):
            try:
                step()
            except BaseException as exc:  # re-raised below, after the rest is closed
                error = error or exc
        os.close(self._lock_fd)
        if error is not None:
            raise error

    def stalled(self) -> str | None:
        """A stuck merge of either store, named (:meth:`ccrawl.crawl.seen.SeenStore.stalled`), else None."""
        return self.seen.stalled() or self.edges.stalled()


def frontier_status(path: Path | str, *, now: float | None = None) -> dict[str, object]:
    """What a state file's frontier holds, over every partition (``crawl status --state``).

    Read-only and without the run's lock, so it works beside a running crawl (WAL readers never
    block the writer) and never creates or changes a file: ``seen`` URLs, ``queued`` (waiting),
    ``unsealed`` (fetched into a WARC file not sealed yet), ``hosts`` and ``hosts_pending`` (with
    URLs waiting), ``outbox`` (links in transit between partitions), ``fetched`` (what --max-pages
    counts), ``next_due`` (when the earliest waiting host may be fetched again, UTC) and
    ``queued_by_depth`` (waiting URLs per link depth from the seeds)."""
    first = Path(path)
    if not first.is_file():
        raise UsageError(f"--state {first}: no such state file (crawl run --state creates it)")
    now = time.time() if now is None else now
    totals = dict.fromkeys(("seen", "queued", "unsealed", "hosts", "hosts_pending", "outbox", "fetched"), 0)
    by_depth: dict[str, int] = {}
    due: float | None = None
    meta0: dict[str, str] = {}
    parts = 1
    part = 0
    while part < parts:
        file = part_path(first, part)
        if not file.is_file():
            raise UsageError(f"--state {first}: partition file {file} of {parts} is missing")
        try:
            db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise UsageError(f"--state {file}: cannot be opened ({exc})") from None
        try:
            one = db.execute
            meta = {str(k): str(v) for k, v in one("SELECT k, v FROM meta")}
            fmt = int(meta.get("seen_format") or 0)
            if fmt > SEEN_FORMAT:
                raise UsageError(f"--state {file}: written by a newer ccrawl (seen-set format {fmt}, this one "
                                 f"reads {SEEN_FORMAT})")
            if part == 0:
                meta0 = meta
                parts = max(1, int(meta.get("parts") or 1))
            totals["fetched"] += int(meta.get("fetched") or 0)
            old = one("SELECT 1 FROM sqlite_master WHERE type='table' AND name='seen'").fetchone()
            totals["seen"] += int(one("SELECT count(*) FROM seen").fetchone()[0]) if old else int(meta.get("seen") or 0)
            if one("SELECT 1 FROM sqlite_master WHERE type='table' AND name='queue'").fetchone():  # layout 1
                totals["queued"] += int(one("SELECT count(*) FROM queue WHERE state=0").fetchone()[0])
                totals["unsealed"] += int(one("SELECT count(*) FROM queue WHERE state=1").fetchone()[0])
                depths = "SELECT depth, count(*) FROM queue WHERE state=0 GROUP BY depth ORDER BY depth"
            else:
                totals["queued"] += int(one("SELECT coalesce(sum(n - done), 0) FROM qseg").fetchone()[0])
                totals["unsealed"] += int(one("SELECT count(*) FROM unsealed").fetchone()[0])
                depths = "SELECT prio, sum(n - done) FROM qseg GROUP BY prio ORDER BY prio"
            totals["hosts"] += int(one("SELECT count(*) FROM hosts").fetchone()[0])
            totals["hosts_pending"] += int(one("SELECT count(*) FROM hosts WHERE pending > 0").fetchone()[0])
            totals["outbox"] += int(one("SELECT count(*) FROM outbox").fetchone()[0])
            for depth, n in one(depths):
                by_depth[str(depth)] = by_depth.get(str(depth), 0) + int(n)
            row = one("SELECT min(next_at) FROM hosts WHERE pending > 0").fetchone()
            if row and row[0] is not None:
                due = float(row[0]) if due is None else min(due, float(row[0]))
        except (sqlite3.DatabaseError, ValueError) as exc:
            raise UsageError(f"--state {file}: not a crawl state file ({exc})") from None
        finally:
            db.close()
        part += 1
    next_due = None if due is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(due, now)))
    return {
        "state": str(first), "parts": parts, **totals,
        "seeds_loaded": meta0.get("seeds_loaded") == "1",
        "shard": f"{meta0.get('shard') or 0}/{meta0.get('shards') or 1}",
        "next_due": next_due,
        "next_due_in_s": None if due is None else round(max(0.0, due - now), 3),
        "queued_by_depth": by_depth,
    }
