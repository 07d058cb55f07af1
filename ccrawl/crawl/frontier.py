"""The frontier: per-host queues, a ready heap keyed by each host's next allowed time, a seen set.

Hosts live in two places. The state file (:mod:`ccrawl.crawl.state`) holds every waiting URL and
every host's politeness clock; memory holds at most ``max_active`` hosts, each with a window of at
most ``window`` URLs, on a heap ordered by the time the host may next be asked. ``take`` pops the
earliest ready host and one URL of it; the host is then off the heap (one request per host at a
time) until ``done`` puts it back at ``max(start + delay, end + Crawl-delay)``. When a host's window runs
dry it is refilled from the state file, or dropped from memory when the file has nothing more;
free places on the heap are filled with the hosts whose clocks come first.

Everything runs on one event loop, so there is no lock to contend for however many workers
ask. Writes are batched: admissions, outcomes and clocks go to the state file in one
transaction per ``flush`` (every ``flush_every`` updates, or more once the seen runs on disk grow:
:meth:`Frontier._check_floor`; every 0.25 s when hosts run short, before a WARC file is sealed,
and at the end). A URL is forgotten only once its page is in a sealed WARC file, so a killed run
refetches what was in flight or in the open file, and nothing else.
"""

from __future__ import annotations

import heapq
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import blake3
import numpy as np
import numpy.typing as npt

from ccrawl.crawl.keys import join_lines, keys_hosts, pair_keys, string_array
from ccrawl.crawl.seen import crash_point, unique
from ccrawl.crawl.state import SEG_BITS, SEG_MAX, StateFile, decode_segment, encode_body
from ccrawl.errors import InputError
from ccrawl.url.canon import canonical_array, canonicalize
from ccrawl.url.domain import fnv1a64, shard_key

if TYPE_CHECKING:
    import sqlite3

    import pyarrow as pa


DISK_KEYS_PER_UPDATE = 500
"""A flush waits for one buffered update (a link, an outcome) per this many keys in the seen runs (about 4 KB
of runs an update): :meth:`Frontier._check_floor`."""
MAX_BATCH_FLOOR = 250_000
"""The most updates that rule makes a flush wait for (reached at 125 M keys in runs): it bounds the links
buffered in memory (~50 MB) and the work a kill sends back to be fetched again."""


@dataclass(slots=True)
class Item:
    """One URL handed to a worker."""

    url: str
    host: str
    depth: int
    prio: int
    seq: int
    hops: int = 0
    """Redirects followed to reach this URL: 0 for a seed or a link, one more than its redirect's for a target."""


@dataclass(slots=True)
class _Host:
    name: str
    next_at: float
    delay: float
    rank: int = 0
    """Admission order of the host's first URL: ties on the clock go to the earlier host."""
    items: deque[Item] = field(default_factory=deque)
    loaded: dict[int, int] = field(default_factory=dict)
    """Segment id -> index of the next URL not yet loaded into ``items`` (what this object loaded)."""
    busy: bool = False
    exhausted: bool = False
    """The state file had no more waiting URLs at the last refill (new admissions clear it)."""


@dataclass(slots=True)
class FrontierConfig:
    delay: float = 1.0
    max_depth: int = 0
    same_host: bool = False
    shard: int = 0
    shards: int = 1
    part: int = 0
    """This process's partition of the machine's share (``crawl run --fetchers``); see :func:`place`."""
    parts: int = 1
    window: int = 32
    max_active: int = 4096
    flush_every: int = 2000
    host_budget: int = 5000
    """Trap budget: pages a host may have admitted per registered domain linking to it (a seed counts
    as one), ``host_budget * (1 + in-degree)``; 0 turns the budgets off. See :meth:`Frontier.flush`."""
    domain_budget: int = 20000
    """The same for all the hosts of a registered domain together, over the domain's in-degree."""


def url_key(canonical: str) -> bytes:
    """The seen-set key: the first 8 bytes of blake3 of the canonical URL (little-endian uint64 in the store)."""
    return blake3.blake3(canonical.encode("utf-8")).digest(length=8)


def _edge_key(source: str, target: str, kind: str) -> str:
    """What the seen set holds for "registered domain ``source`` links to host (``h``) or domain (``d``) ``target``"."""
    return f"\x00edge {kind} {source} {target}"


def place(host: str, shards: int, parts: int) -> tuple[int, int]:
    """(fleet shard, process partition) of ``host``, both from FNV-1a 64 of its registered domain.

    The shard is ``h % shards``, the same as ``url shard`` and ``--shard`` everywhere; the partition
    is ``(h // shards) % parts``, so it splits a shard's domains evenly instead of repeating the shard
    (``h % parts`` would put every domain of shard 0 of 2 in partition 0 of 2). A host without a
    registered domain hashes as its lowercased name; no name at all is shard 0, partition 0.
    """
    key = shard_key(host)
    h = fnv1a64(key.encode("utf-8")) if key else 0
    return h % shards, (h // shards) % parts


@dataclass(slots=True)
class _Batch:
    """Admissions of one flush that passed their filters, in arrival order (see :meth:`Frontier._resolve`)."""

    urls: pa.StringArray
    """Canonical URLs: a pyarrow string array without nulls."""
    keys: npt.NDArray[np.uint64]
    codes: npt.NDArray[np.int64]
    """Each row's host as an index into ``names``."""
    names: list[str]
    depth: npt.NDArray[np.int64]
    hops: npt.NDArray[np.int64]
    doms: list[str] = field(default_factory=list)
    """Registered domains (with the trap budgets on)."""
    hdom: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Each host's registered domain as an index into ``doms``."""
    sources: list[str] = field(default_factory=list)
    """Linking registered domains of the edges ("" for a seed)."""
    e_s: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    e_h: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """The edges: source ``sources[e_s[k]]`` links to host ``names[e_h[k]]`` (of domain ``doms[hdom[e_h[k]]]``),
    distinct, never from a domain to itself."""

    @staticmethod
    def empty() -> _Batch:
        none = np.zeros(0, dtype=np.int64)
        return _Batch(string_array([]), np.zeros(0, dtype=np.uint64), none, [], none, none)


def _cumcount(groups: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each position: how many earlier positions hold the same group."""
    n = len(groups)
    out = np.empty(n, dtype=np.int64)
    if not n:
        return out
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    start = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    out[order] = np.arange(n, dtype=np.int64) - np.repeat(start, np.diff(np.append(start, n)))
    return out


def _indices(rows: npt.NDArray[np.int64]) -> pa.Int64Array:
    """Row numbers as a pyarrow int64 array (built from the buffer: ``pyarrow.array`` would import pandas)."""
    import pyarrow as pa

    data = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def owners(urls: list[str], shards: int, parts: int) -> npt.NDArray[np.int64]:
    """The process partition (:func:`place`) of each URL of a batch; -1 for a URL that does not canonicalise."""
    import pyarrow.compute as pc

    _, hosts = keys_hosts(canonical_array(urls))
    encoded = pc.dictionary_encode(hosts)
    known = np.array([place(h, shards, parts)[1] for h in encoded.dictionary.to_pylist()] + [-1], dtype=np.int64)
    codes = encoded.indices.fill_null(len(known) - 1).to_numpy(zero_copy_only=False).astype(np.int64)
    result: npt.NDArray[np.int64] = known[codes]
    return result


Routed = tuple[int, int, str, int, int, str | None]
"""An outbox row: (id, owner partition, canonical URL, depth, redirect hops, source): ``source`` is the
registered domain of the page that linked to it ("" for a seed, None for no vote: a redirect target), so
the owner counts the link in its host's trap-budget in-degree as the finder would have."""


def _host_of(canonical: str) -> str:
    parts = canonical.split("/", 3)  # a canonical URL has a path: ['scheme:', '', host, path]
    if len(parts) == 4 and "?" not in parts[2]:
        return parts[2]
    rest = canonical.split("://", 1)[1]
    end = len(rest)
    for sep in "/?":
        i = rest.find(sep)
        if i >= 0:
            end = min(end, i)
    return rest[:end]


class Frontier:
    def __init__(self, state: StateFile, config: FrontierConfig) -> None:
        self.state = state
        self.config = config
        self._hosts: dict[str, _Host] = {}
        self._heap: list[tuple[float, int, str]] = []
        # admissions buffered until the flush, in order: URLs as found (add_many), canonical URLs through
        # their filters already (add, admit), and runs of them sharing (depth, hops, source, seed)
        self._raw: list[str] = []
        self._pre: list[str] = []
        self._runs: list[tuple[bool, int, int, int, int, bool]] = []  # (pre, count, depth, hops, source id, seed)
        self._pending = 0
        self._sources: list[str] = []  # linking registered domains of the buffered runs ("" for a seed)
        self._source_ids: dict[str, int] = {}
        self._places: dict[str, tuple[int, int]] = {}
        self._host_budgets: dict[str, tuple[int, int]] = {}  # host -> (admitted, in-degree), see _budget_of
        self._domain_budgets: dict[str, tuple[int, int]] = {}
        self._marks: list[tuple[str, Item]] = []  # (file or '' for forget, item)
        self._clocks: dict[str, tuple[float, float]] = {}
        self._seq = int(state.get("seq", "0"))
        self.fetched = int(state.get("fetched", "0"))
        self.in_flight = 0
        self.admitted = 0
        self.dropped = {"seen": 0, "depth": 0, "shard": 0, "host": 0, "url": 0, "trap": 0}
        self.seen = state.seen
        self._batch_floor = self._check_floor()
        """Updates a flush waits for at least, whatever ``flush_every`` says: see :meth:`_check_floor`."""
        self._domains: dict[str, str] = {}
        self._edges: set[tuple[str, str, str]] = set()  # (source domain, target host, target domain) not yet flushed
        self._seed_hosts: set[str] = {r[0] for r in state.db.execute("SELECT host FROM seed_hosts")}
        self._fill_at = 0.0
        # links owned by another partition go out through the outbox (a table, so a kill keeps them)
        # (owner, canonical, depth, hops, source) not yet in the outbox
        self._routed: list[tuple[int, str, int, int, str | None]] = []
        self._oseq = int(state.get("oseq", "0"))
        self._sent_upto: dict[int, int] = {}  # owner -> highest outbox id written for it
        self._acked: dict[int, int] = {}  # owner -> highest id it has committed
        self._acks_taken: dict[int, int] = {}  # source -> highest id of its batches admitted, not yet committed
        self._acked_known: dict[int, int] = {}  # owner -> highest id acked this run
        for owner, upto in state.db.execute("SELECT part, max(id) FROM outbox GROUP BY part"):
            self._sent_upto[int(owner)] = int(upto)
        self.routed = 0
        self.on_commit: Callable[[list[Routed], dict[int, int]], None] | None = None
        """Called after each flush's commit with the outbox rows it wrote and the acks now owed
        ({source partition: highest id}); the crawl's mailbox sends both."""

    # -- admission ---------------------------------------------------------------------------

    def add(self, url: str, depth: int, *, seed: bool = False, hops: int = 0, source: str | None = None) -> bool:
        """Queue ``url`` (canonicalised) unless a filter drops it; duplicates go at the next flush.

        ``hops``: redirects followed to reach it (a redirect target carries its chain's count).
        ``source``: the registered domain of the page linking to it (a link from another registered
        domain raises the target's trap budget once per linking domain). One URL, its filters applied
        now (the answer says whether it was kept); :meth:`add_many` takes a batch and filters it at the flush."""
        if depth > self.config.max_depth:
            self.dropped["depth"] += 1
            return False
        try:
            canonical = canonicalize(url)
        except InputError:
            self.dropped["url"] += 1
            return False
        host = _host_of(canonical)
        cfg = self.config
        if cfg.shards > 1 or cfg.parts > 1:
            shard, part = self._place(host)
            if shard != cfg.shard:
                self.dropped["shard"] += 1
                return False
            if part != cfg.part:
                self._routed.append((part, canonical, depth, hops, "" if seed else source))
                self.routed += 1
                self._maybe_flush()
                return True
        if cfg.host_budget and (seed or source is not None):
            domain = self._domain(host)
            src = "" if seed else source
            if src != domain:
                self._edges.add((src or "", host, domain))
        return self.admit(canonical, depth, host=host, seed=seed, hops=hops)

    def _place(self, host: str) -> tuple[int, int]:
        got = self._places.get(host)
        if got is None:
            if len(self._places) > 200_000:
                self._places.clear()
            got = self._places[host] = place(host, self.config.shards, self.config.parts)
        return got

    def _domain(self, host: str) -> str:
        """The registered domain of ``host`` (its shard key), cached."""
        dom = self._domains.get(host)
        if dom is None:
            if len(self._domains) > 200_000:
                self._domains.clear()
            dom = self._domains[host] = shard_key(host)
        return dom

    def admit(self, canonical: str, depth: int, *, host: str = "", seed: bool = False, hops: int = 0,
              source: str | None = None) -> bool:
        """Queue a canonical URL this partition owns (links routed here by another one come in here).

        ``source``: the registered domain of the page that linked to it ("" for a seed), counted in the trap
        budgets' in-degree as :meth:`add` counts it (a link routed from another partition carries it)."""
        if source is not None and self.config.host_budget:
            host = host or _host_of(canonical)
            domain = self._domain(host)
            if source != domain:
                self._edges.add((source, host, domain))
        if self.config.same_host:
            host = host or _host_of(canonical)
            if seed and host not in self._seed_hosts:
                if self._raw:  # links buffered before this seed were judged without its host
                    self.flush()
                self._seed_hosts.add(host)
                self.state.db.execute("INSERT OR IGNORE INTO seed_hosts VALUES(?)", (host,))
            elif not seed and host not in self._seed_hosts:
                self.dropped["host"] += 1
                return False
        self._pre.append(canonical)
        self._stage(True, 1, depth, hops, -1, seed)
        return True

    def add_many(self, urls: Iterable[str], depth: int, *, source_host: str | None = None,
                 seed: bool = False) -> int:
        """Queue a batch: the links of a page (``source_host``: the page's host, whose registered domain
        votes for the targets), or seeds (``seed``). Returns how many were taken in (all, unless the depth
        is over ``max_depth``): canonicalisation, the shard, partition and host filters, the seen check
        and the trap budgets run over every URL buffered at once, at the next flush."""
        batch = urls if isinstance(urls, list) else list(urls)
        if depth > self.config.max_depth:
            self.dropped["depth"] += len(batch)
            return 0
        if not batch:
            return 0
        if seed:
            sid = self._source_id("")
        elif source_host is not None:
            sid = self._source_id(shard_key(source_host))
        else:
            sid = -1
        self._raw.extend(batch)
        self._stage(False, len(batch), depth, 0, sid, seed)
        return len(batch)

    def _source_id(self, source: str) -> int:
        sid = self._source_ids.get(source)
        if sid is None:
            sid = self._source_ids[source] = len(self._sources)
            self._sources.append(source)
        return sid

    def _stage(self, pre: bool, count: int, depth: int, hops: int, sid: int, seed: bool) -> None:
        runs = self._runs
        if runs and runs[-1][0] == pre and runs[-1][2:] == (depth, hops, sid, seed):
            runs[-1] = (pre, runs[-1][1] + count, depth, hops, sid, seed)
        else:
            runs.append((pre, count, depth, hops, sid, seed))
        self._pending += count
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if self._pending + len(self._marks) + len(self._routed) >= max(self.config.flush_every, self._batch_floor):
            self.flush()

    def _check_floor(self) -> int:
        """The smallest flush worth its seen check: one update per :data:`DISK_KEYS_PER_UPDATE` keys in the seen
        runs, at most :data:`MAX_BATCH_FLOOR` (DRUM's rule: a check batch grows with the store it is checked
        against, so each key's share of the pages it reads stays the same as the runs grow).

        A check reads a page of every run for each key; below about a key per 4 KB of runs the keys
        stop sharing pages, and on this machine a 20 000-key check cost 0.3-1.6 us a key against a run of
        100 M keys (more once the page cache's large folios are split) against 0.2-0.4 at 200 000
        (bench/README.md, "A check's batch grows with the runs"). Under a million keys in runs this is
        below the 2 000 updates of ``flush_every``'s default: a small crawl flushes as often as before."""
        return min(MAX_BATCH_FLOOR, sum(r.count for r in self.seen.runs) // DISK_KEYS_PER_UPDATE)

    # -- handing out -------------------------------------------------------------------------

    def take(self, now: float | None = None) -> Item | float | None:
        """An Item ready now, else the seconds until the next host is ready, else None (no work)."""
        now = time.time() if now is None else now
        short = not self._heap or len(self._hosts) < self.config.max_active // 2
        if short and (self._pending or now >= self._fill_at):
            self._fill(now)
        while self._heap:
            next_at, _, name = self._heap[0]
            host = self._hosts.get(name)
            if host is None or host.busy or host.next_at != next_at:
                heapq.heappop(self._heap)  # stale entry
                continue
            if next_at > now:
                return next_at - now
            heapq.heappop(self._heap)
            if not host.items and not self._refill(host):
                del self._hosts[name]
                continue
            item = host.items.popleft()
            host.busy = True
            self.in_flight += 1
            return item
        if self.in_flight == 0 and self.idle():
            return None
        return max(0.01, min(0.25, self._fill_at - now))

    def done(self, item: Item, *, started: float, file: str | None, crawl_delay: float = 0.0,
             finished: float | None = None) -> None:
        """The fetch of ``item`` ended: ``file`` is the WARC file holding it, None when nothing was stored.

        The host's next request may start ``--delay`` after this one started, and a robots.txt
        ``Crawl-delay`` after this one's response ended (``finished``; ``started`` when not given): the
        site's own request read the way Yandex defines it (the wait after loading one page, before loading
        the next) and Nutch and Heritrix count it, so a slow response or a late-arriving request never
        brings two requests closer together at the server than the site asked."""
        self.in_flight -= 1
        self.fetched += 1
        host = self._hosts.get(item.host)
        next_at = max(started + self.config.delay, (started if finished is None else finished) + crawl_delay)
        self._marks.append((file or "", item))
        self._clocks[item.host] = (next_at, crawl_delay)
        if host is not None:
            host.busy = False
            host.next_at = next_at
            host.delay = crawl_delay
            if host.items or not host.exhausted:
                heapq.heappush(self._heap, (next_at, host.rank, host.name))
            else:
                del self._hosts[item.host]
        self._maybe_flush()

    def _refill(self, host: _Host) -> bool:
        """Load the host's next waiting URLs from its segments (by depth, then admission) into its window.

        Items of a segment complete in the order they were loaded (one fetch per host at a time), so
        a segment's next URL is its ``done`` count on disk plus its completions not flushed yet,
        unless this host object already loaded further (``host.loaded``)."""
        if host.exhausted and not self._pending:
            return False
        pending: dict[int, int] = {}
        for _, m in self._marks:
            if m.host == host.name:
                pending[m.seq >> SEG_BITS] = pending.get(m.seq >> SEG_BITS, 0) + 1
        want = self.config.window
        offset = 0
        while want > 0:
            rows = self.state.segments(host.name, offset)
            if not rows:
                break
            offset += len(rows)
            for seg, prio, n, done, data in rows:
                start = max(int(done) + pending.get(seg, 0), host.loaded.get(seg, 0))
                if start >= n:
                    continue
                entries = decode_segment(data)
                stop = min(int(n), start + want)
                for idx in range(start, stop):
                    url, hops = entries[idx]
                    host.items.append(Item(url, host.name, int(prio), int(prio), (seg << SEG_BITS) | idx, hops))
                host.loaded[seg] = stop
                want -= stop - start
                if want <= 0:
                    break
        host.exhausted = len(host.items) == 0
        return not host.exhausted

    def _fill(self, now: float) -> None:
        """Flush, then load the hosts whose clocks come first into the free places of the heap."""
        self.flush()
        self._fill_at = now + 0.25
        room = self.config.max_active - len(self._hosts)
        if room <= 0:
            return
        rows = self.state.db.execute(
            "SELECT host, next_at, delay, rank FROM hosts WHERE pending > 0 ORDER BY next_at, rank LIMIT ?",
            (room + len(self._hosts),),
        ).fetchall()
        for name, next_at, delay, rank in rows:
            if name in self._hosts:
                host = self._hosts[name]
                if host.exhausted and not host.items and not host.busy:
                    host.exhausted = False
                    heapq.heappush(self._heap, (host.next_at, host.rank, name))
                continue
            if room <= 0:
                break
            self._hosts[name] = _Host(name, float(next_at), float(delay), int(rank))
            heapq.heappush(self._heap, (float(next_at), int(rank), name))
            room -= 1

    # -- persistence -------------------------------------------------------------------------

    def flush(self) -> None:
        """Write admissions, outcomes and clocks in one transaction."""
        if not (self._pending or self._marks or self._clocks or self._routed or self._acks_taken or self._acked):
            return
        db = self.state.db
        db.execute("BEGIN IMMEDIATE")
        batch = self._resolve()
        written: list[Routed] = []
        for owner, canonical, depth, hops, source in self._routed:
            self._oseq += 1
            db.execute("INSERT INTO outbox(id, part, url, depth, hops, source) VALUES(?,?,?,?,?,?)",
                       (self._oseq, owner, canonical, depth, hops, source))
            written.append((self._oseq, owner, canonical, depth, hops, source))
            self._sent_upto[owner] = self._oseq
        for owner, upto in self._acked.items():
            db.execute("DELETE FROM outbox WHERE part=? AND id<=?", (owner, upto))
        self._admit_batch(db, batch)
        done: dict[int, int] = {}
        fetched_rows = []
        less: dict[str, int] = {}
        for file, item in self._marks:
            done[item.seq >> SEG_BITS] = done.get(item.seq >> SEG_BITS, 0) + 1
            if file:
                fetched_rows.append((item.host, item.prio, item.url, item.depth, item.hops, file))
            less[item.host] = less.get(item.host, 0) + 1
        db.executemany("INSERT INTO unsealed(host, prio, url, depth, hops, file) VALUES(?,?,?,?,?,?)", fetched_rows)
        db.executemany("UPDATE qseg SET done = done + ? WHERE id=?", [(k, seg) for seg, k in done.items()])
        seg_host = {m.seq >> SEG_BITS: (m.host, m.prio) for _, m in self._marks}
        for seg in done:
            if self.state.drop_segment(*seg_host[seg], seg):
                known = self._hosts.get(seg_host[seg][0])
                if known is not None:  # every URL of it is done: the host's cursor for it is no use now
                    known.loaded.pop(seg, None)
        db.executemany("UPDATE hosts SET pending = pending - ? WHERE host=?", [(k, h) for h, k in less.items()])
        for host, (next_at, delay) in self._clocks.items():
            db.execute("UPDATE hosts SET next_at=?, delay=? WHERE host=?", (next_at, delay, host))
        self.state.put("seq", self._seq)
        self.state.put("fetched", self.fetched)
        self.state.put("seen", self.seen.count)
        if written:
            self.state.put("oseq", self._oseq)
        db.execute("COMMIT")
        crash_point("frontier-committed")
        self._edges.clear()
        self._marks.clear()
        self._clocks.clear()
        self._routed.clear()
        self._acked.clear()
        owed, self._acks_taken = self._acks_taken, {}
        self.seen.settle()
        self.state.edges.settle()
        self._batch_floor = self._check_floor()
        if self.on_commit is not None and (written or owed):
            self.on_commit(written, owed)

    def _resolve(self) -> _Batch:
        """The buffered admissions as arrays, in the order they came: the URLs of :meth:`add_many`
        canonicalised, hashed and filtered (bad URL, shard, partition: routed to the outbox, same host),
        their trap-budget edges recorded, merged with the URLs :meth:`add` and :meth:`admit` filtered
        already. Every step runs over the whole batch (compiled kernels, numpy, pyarrow); what is left
        in Python runs once per distinct host or linking domain, not once per URL."""
        import pyarrow as pa
        import pyarrow.compute as pc

        runs, raw, pre = self._runs, self._raw, self._pre
        self._runs, self._raw, self._pre, self._pending = [], [], [], 0
        sources, self._sources, self._source_ids = self._sources, [], {}
        if not runs and not self._edges:
            return _Batch.empty()
        cfg = self.config
        canon_raw = canonical_array(raw) if raw else None
        canon_pre = string_array(pre) if pre else None
        parts = [a for a in (canon_raw, canon_pre) if a is not None] or [string_array([])]
        if len(parts) == 2 and parts[0].type != parts[1].type:
            parts = [p.cast(pa.large_string()) for p in parts]
        canon = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
        # per-row attributes from the runs; ``pos``: the row's place in arrival order
        kinds = np.array([r[0] for r in runs], dtype=bool)
        counts = np.array([r[1] for r in runs], dtype=np.int64)
        starts = np.cumsum(counts) - counts
        order_runs = np.concatenate((np.flatnonzero(~kinds), np.flatnonzero(kinds)))
        rc = counts[order_runs]
        pos = np.repeat(starts[order_runs] - (np.cumsum(rc) - rc), rc) + np.arange(int(rc.sum()), dtype=np.int64)
        depth = np.repeat(np.array([r[2] for r in runs], dtype=np.int64)[order_runs], rc)
        hops = np.repeat(np.array([r[3] for r in runs], dtype=np.int64)[order_runs], rc)
        sid = np.repeat(np.array([r[4] for r in runs], dtype=np.int64)[order_runs], rc)
        seed = np.repeat(np.array([r[5] for r in runs], dtype=bool)[order_runs], rc)
        n_raw = len(raw)
        is_raw = np.zeros(len(canon), dtype=bool)
        is_raw[:n_raw] = True
        keys, hosts = keys_hosts(canon)
        valid = pc.is_valid(hosts).to_numpy(zero_copy_only=False)  # a null canonical URL (bad) has a null host
        self.dropped["url"] += int(np.count_nonzero(~valid))
        encoded = pc.dictionary_encode(hosts, null_encoding="encode").combine_chunks() \
            if isinstance(hosts, pa.ChunkedArray) else pc.dictionary_encode(hosts, null_encoding="encode")
        codes = encoded.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        names: list[str] = [h or "" for h in encoded.dictionary.to_pylist()]
        keep = valid.copy()
        if n_raw and (cfg.shards > 1 or cfg.parts > 1):
            placed = np.array([self._place(h) if h else (0, 0) for h in names], dtype=np.int64).reshape(-1, 2)
            shard_ok = placed[codes, 0] == cfg.shard
            wrong = is_raw & keep & ~shard_ok
            self.dropped["shard"] += int(np.count_nonzero(wrong))
            keep &= ~wrong
            away = is_raw & keep & (placed[codes, 1] != cfg.part)
            if away.any():
                rows = np.flatnonzero(away)
                rows = rows[np.argsort(pos[rows], kind="stable")]
                urls = canon.take(_indices(rows)).to_pylist()
                owners = placed[codes[rows], 1].tolist()
                voter = [sources[i] if i >= 0 else None for i in sid[rows].tolist()]
                self._routed.extend(zip(owners, urls, depth[rows].tolist(), hops[rows].tolist(), voter, strict=True))
                self.routed += len(rows)
                keep &= ~away
        doms: list[str] = []
        hdom = np.zeros(0, dtype=np.int64)
        e_s = e_h = np.zeros(0, dtype=np.int64)
        if cfg.host_budget:
            dom_ids: dict[str, int] = {}
            hdom = np.array([dom_ids.setdefault(self._domain(h), len(dom_ids)) for h in names], dtype=np.int64)
            voted = np.flatnonzero(is_raw & keep & (sid >= 0))
            if len(voted):
                pairs = unique(sid[voted] * len(names) + codes[voted])
                e_s, e_h = pairs // len(names), pairs % len(names)
                src_dom = np.array([dom_ids.get(src, -1) for src in sources], dtype=np.int64)
                other = src_dom[e_s] != hdom[e_h]
                e_s, e_h = e_s[other], e_h[other]
            if self._edges:  # from add(): tuples, a few
                host_code = {h: i for i, h in enumerate(names)}
                src_code = {src: i for i, src in enumerate(sources)}
                more_s, more_h = [], []
                extra = []
                for src, host, domain in self._edges:
                    code = host_code.get(host)
                    if code is None:  # a host whose row was dropped (same host)
                        code = host_code[host] = len(names)
                        names.append(host)
                        extra.append(dom_ids.setdefault(domain, len(dom_ids)))
                    more_s.append(src_code.setdefault(src, len(src_code)))
                    more_h.append(code)
                sources = list(src_code)
                hdom = np.concatenate((hdom, np.array(extra, dtype=np.int64)))
                more = np.array(more_s, dtype=np.int64) * len(names) + np.array(more_h, dtype=np.int64)
                pairs = unique(np.concatenate((e_s * len(names) + e_h, more)))
                e_s, e_h = pairs // len(names), pairs % len(names)
                self._edges.clear()
            doms = list(dom_ids)
        if n_raw and cfg.same_host:
            known = np.array([h in self._seed_hosts for h in names], dtype=bool)  # seed hosts before this batch
            seeded = np.flatnonzero(is_raw & keep & seed)
            never = np.iinfo(np.int64).max
            first = np.full(len(names), never, dtype=np.int64)
            np.minimum.at(first, codes[seeded], pos[seeded])
            for code in unique(codes[seeded]).tolist():
                if not known[code]:
                    self._seed_hosts.add(names[code])
                    self.state.db.execute("INSERT OR IGNORE INTO seed_hosts VALUES(?)", (names[code],))
            # a link is kept when its host was a seed's before this batch, or a seed earlier in it named it
            off = is_raw & keep & ~seed & ~(known[codes] | (first[codes] < pos))
            self.dropped["host"] += int(np.count_nonzero(off))
            keep &= ~off
        rows = np.flatnonzero(keep)
        if len(rows) and np.any(np.diff(pos[rows]) < 0):
            rows = rows[np.argsort(pos[rows], kind="stable")]
        picked = canon if len(rows) == len(canon) else canon.take(_indices(rows))
        return _Batch(picked, keys[rows], codes[rows], names, depth[rows], hops[rows], doms, hdom, sources, e_s, e_h)

    def _admit_batch(self, db: object, batch: _Batch) -> None:
        """The buffered admissions, in one batch: seen-set check, trap budgets, queue and host rows.

        Trap budgets (IRLbot's STAR/BEAST idea): a host may have ``host_budget * (1 + in-degree)``
        URLs admitted, its registered domain ``domain_budget * (1 + in-degree)``, where the in-degree
        counts the other registered domains whose pages linked to it (a seed is one vote). Seeds count
        against the budgets but are never dropped. The edges are deduplicated in a seen store of their
        own. A URL over budget is dropped (``trap``) and not marked seen, so it is admitted when found
        again once more domains link to its host.

        The budgets are applied to the whole batch at once, with the same outcome as taking its new URLs
        one by one: a link passes its host's budget when fewer new URLs of its host came before it in the
        batch than the host has room for (once one is refused, every later one would be), and passes its
        domain's when fewer URLs of the domain that passed their hosts' budgets came before it than the
        domain has room for (before the domain is full only host refusals happen; after, every link is
        refused)."""
        import sqlite3

        assert isinstance(db, sqlite3.Connection)
        n = len(batch.keys)
        e = len(batch.e_s)
        if not n and not e:
            return
        cfg = self.config
        new = self.seen.check(batch.keys)
        enew = np.zeros(0, dtype=bool)
        names, doms = batch.names, batch.doms
        if e:
            ekeys = np.concatenate((pair_keys(b"\x00edge h ", batch.sources, batch.e_s, names, batch.e_h),
                                    pair_keys(b"\x00edge d ", batch.sources, batch.e_s, doms, batch.hdom[batch.e_h])))
            enew = self.state.edges.check(ekeys)
            self.state.edges.log(ekeys[enew])
        newi = np.flatnonzero(new)
        taken = newi
        hc = batch.codes[newi]
        touched_h = touched_d = np.zeros(0, dtype=np.int64)
        h_adm = h_deg = d_adm = d_deg = np.zeros(0, dtype=np.int64)
        if cfg.host_budget:
            edge_h = batch.e_h[enew[:e]]  # hosts with a new linking domain
            edge_d = batch.hdom[batch.e_h[enew[e:]]]  # domains with a new linking domain
            touched_h = unique(np.concatenate((hc, edge_h)))
            touched_d = unique(np.concatenate((batch.hdom[touched_h], edge_d)))
            h_adm, h_deg = self._budget_of(db, "hosts", "host", names, touched_h, self._host_budgets)
            d_adm, d_deg = self._budget_of(db, "domains", "domain", doms, touched_d, self._domain_budgets)
            np.add.at(h_deg, edge_h, 1)
            np.add.at(d_deg, edge_d, 1)
            room_h = cfg.host_budget * (1 + h_deg) - h_adm
            room_d = cfg.domain_budget * (1 + d_deg) - d_adm
            dc = batch.hdom[hc]
            is_seed = batch.depth[newi] == 0  # a seed (depth 0) is the user's choice: counted, never dropped
            host_ok = is_seed | (_cumcount(hc) < room_h[hc])
            ok = is_seed.copy()
            passed = np.flatnonzero(host_ok)
            ok[passed] |= _cumcount(dc[passed]) < room_d[dc[passed]]
            self.dropped["trap"] += int(np.count_nonzero(~ok))
            taken = newi[ok]
            np.add.at(h_adm, hc[ok], 1)
            np.add.at(d_adm, dc[ok], 1)
        self.dropped["seen"] += int(n - len(newi))
        self.seen.log(batch.keys[taken])
        t = len(taken)
        self.admitted += t
        pending = np.zeros(len(names), dtype=np.int64)
        rank = np.zeros(len(names), dtype=np.int64)
        admitted_codes = np.zeros(0, dtype=np.int64)
        if t:
            tc = batch.codes[taken]
            tp = batch.depth[taken]
            by = np.lexsort((tp, tc))  # by host, then depth, then arrival (lexsort is stable)
            sc, sp = tc[by], tp[by]
            cut = np.flatnonzero((sc[1:] != sc[:-1]) | (sp[1:] != sp[:-1])) + 1
            bounds = np.concatenate(([0], cut, [t])).astype(np.int64)
            if np.diff(bounds).max() > SEG_MAX:  # a group longer than SEG_MAX is cut into segments of SEG_MAX
                bounds = unique(np.concatenate([np.arange(a, b, SEG_MAX) for a, b in
                                                   zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]
                                                  + [np.array([t])])).astype(np.int64)
            bodies = join_lines(batch.urls, taken[by].astype(np.int64), bounds, batch.hops)
            starts = bounds[:-1]
            self.state.add_segments(list(zip([names[c] for c in sc[starts].tolist()], sp[starts].tolist(),
                                             np.diff(bounds).tolist(), map(encode_body, bodies), strict=True)))
            admitted_codes, first_at, per_host = np.unique(tc, return_index=True, return_counts=True)
            pending[admitted_codes] = per_host
            rank[admitted_codes] = first_at + self._seq + 1
            self._seq += t
        if cfg.host_budget:
            rows = unique(np.concatenate((touched_h, admitted_codes))).tolist()
            db.executemany("INSERT INTO hosts(host, pending, rank, admitted, indeg) VALUES(?, ?, ?, ?, ?) "
                           "ON CONFLICT(host) DO UPDATE SET pending = pending + excluded.pending, "
                           "admitted=excluded.admitted, indeg=excluded.indeg",
                           zip([names[c] for c in rows], pending[rows].tolist(), rank[rows].tolist(),
                               h_adm[rows].tolist(), h_deg[rows].tolist(), strict=True))
            dl = touched_d.tolist()
            db.executemany("INSERT INTO domains(domain, admitted, indeg) VALUES(?, ?, ?) ON CONFLICT(domain) "
                           "DO UPDATE SET admitted=excluded.admitted, indeg=excluded.indeg",
                           zip([doms[d] for d in dl], d_adm[dl].tolist(), d_deg[dl].tolist(), strict=True))
            self._remember(self._host_budgets, names, touched_h, h_adm, h_deg)
            self._remember(self._domain_budgets, doms, touched_d, d_adm, d_deg)
        elif t:
            rows = admitted_codes.tolist()
            db.executemany("INSERT INTO hosts(host, pending, rank) VALUES(?, ?, ?) "
                           "ON CONFLICT(host) DO UPDATE SET pending = pending + excluded.pending",
                           zip([names[c] for c in rows], pending[rows].tolist(), rank[rows].tolist(), strict=True))
        for code in admitted_codes.tolist():
            known = self._hosts.get(names[code])
            if known is not None and known.exhausted:
                known.exhausted = False
                if not known.busy:
                    heapq.heappush(self._heap, (known.next_at, known.rank, known.name))

    BUDGET_CACHE = 200_000
    """Hosts (and domains) whose trap-budget counts are kept in memory between flushes (a copy of their
    rows: the state file stays the truth, read again for a host not held)."""

    def _budget_of(self, db: sqlite3.Connection, table: str, column: str, names: list[str],
                   codes: npt.NDArray[np.int64], cache: dict[str, tuple[int, int]],
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(admitted, in-degree) arrays over ``names``, filled for ``codes`` from the cache or the state file."""
        adm = np.zeros(len(names), dtype=np.int64)
        deg = np.zeros(len(names), dtype=np.int64)
        if not len(codes):
            return adm, deg
        if len(cache) + len(codes) > self.BUDGET_CACHE:
            cache.clear()
        want = [names[c] for c in codes.tolist()]
        got = [cache.get(name) for name in want]
        miss = [name for name, v in zip(want, got, strict=True) if v is None]
        for i in range(0, len(miss), 500):
            part = miss[i:i + 500]
            q = f"SELECT {column}, admitted, indeg FROM {table} WHERE {column} IN ({','.join('?' * len(part))})"
            for name, a, d in db.execute(q, part):
                cache[str(name)] = (int(a), int(d))
        zero = (0, 0)
        both = np.array([cache.get(name, zero) if v is None else v for name, v in zip(want, got, strict=True)],
                        dtype=np.int64).reshape(-1, 2)
        adm[codes] = both[:, 0]
        deg[codes] = both[:, 1]
        return adm, deg

    @staticmethod
    def _remember(cache: dict[str, tuple[int, int]], names: list[str], codes: npt.NDArray[np.int64],
                  adm: npt.NDArray[np.int64], deg: npt.NDArray[np.int64]) -> None:
        cl = codes.tolist()
        cache.update(zip([names[c] for c in cl], zip(adm[cl].tolist(), deg[cl].tolist(), strict=True), strict=True))

    # -- links between partitions ------------------------------------------------------------

    def took_batch(self, source: int, upto: int) -> None:
        """The links of ``source``'s outbox up to id ``upto`` were admitted: owe an ack after the commit."""
        self._acks_taken[source] = max(upto, self._acks_taken.get(source, 0))

    def acked(self, owner: int, upto: int) -> None:
        """``owner`` committed our outbox rows up to ``upto``: delete them at the next flush."""
        self._acked[owner] = max(upto, self._acked.get(owner, 0))
        self._acked_known[owner] = max(upto, self._acked_known.get(owner, 0))

    def owes(self) -> bool:
        """Something a commit would send: links routed out, acks for links taken in, acks to apply."""
        return bool(self._routed or self._acks_taken or self._acked)

    def outstanding(self) -> bool:
        """Links routed to another partition that it has not committed yet."""
        known = self._acked_known
        return bool(self._routed) or any(upto > known.get(owner, 0) for owner, upto in self._sent_upto.items())

    def outbox(self) -> list[Routed]:
        """Every outbox row on disk (sent again after a restart: the owner's seen set drops repeats)."""
        rows = self.state.db.execute("SELECT id, part, url, depth, hops, source FROM outbox ORDER BY id").fetchall()
        return [(int(i), int(p), str(u), int(d), int(h), None if v is None else str(v)) for i, p, u, d, h, v in rows]

    def sealed(self, file: str) -> int:
        """The WARC file ``file`` is sealed: forget its URLs for good. Call after :meth:`flush`."""
        cur = self.state.db.execute("DELETE FROM unsealed WHERE file=?", (file,))
        return int(cur.rowcount)

    @property
    def active_hosts(self) -> int:
        """Hosts with URLs in memory now (at most ``max_active``)."""
        return len(self._hosts)

    def idle(self) -> bool:
        """Nothing in flight, nothing buffered, and the state file has no waiting URL."""
        if self.in_flight or self._pending:
            return False
        self.flush()
        if self._pending:  # a commit callback can hand links back in
            return False
        row = self.state.db.execute("SELECT 1 FROM hosts WHERE pending > 0 LIMIT 1").fetchone()
        return row is None
