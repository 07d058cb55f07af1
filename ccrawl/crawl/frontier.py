"""The frontier: per-host queues, a ready heap keyed by each host's next allowed time, a seen set.

Hosts live in two places. The state file (:mod:`ccrawl.crawl.state`) holds every waiting URL and
every host's politeness clock; memory holds at most ``max_active`` hosts, each with a window of at
most ``window`` URLs, on a heap ordered by the time the host may next be asked. ``take`` pops the
earliest ready host and one URL of it; the host is then off the heap (one request per host at a
time) until ``done`` puts it back at ``start + max(delay, Crawl-delay)``. When a host's window runs
dry it is refilled from the state file, or dropped from memory when the file has nothing more;
free places on the heap are filled with the hosts whose clocks come first.

Everything runs on one event loop, so there is no lock to contend for however many workers
ask. Writes are batched: admissions, outcomes and clocks go to the state file in one
transaction per ``flush`` (every ``flush_every`` updates, before a WARC file is sealed, and at
the end). A URL is forgotten only once its page is in a sealed WARC file, so a killed run
refetches what was in flight or in the open file, and nothing else.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import blake3
import numpy as np

from ccrawl.crawl.seen import crash_point, url_keys
from ccrawl.crawl.state import SEG_BITS, SEG_MAX, StateFile, decode_segment, encode_segment
from ccrawl.errors import InputError
from ccrawl.url.canon import canonicalize
from ccrawl.url.domain import fnv1a64, shard_key


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


Routed = tuple[int, int, str, int, int]
"""An outbox row: (id, owner partition, canonical URL, depth, redirect hops)."""


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
        self._adds: list[tuple[str, int, str, int, int]] = []  # (canonical, depth, host, prio, hops)
        self._marks: list[tuple[str, Item]] = []  # (file or '' for forget, item)
        self._clocks: dict[str, tuple[float, float]] = {}
        self._seq = int(state.get("seq", "0"))
        self.fetched = int(state.get("fetched", "0"))
        self.in_flight = 0
        self.admitted = 0
        self.dropped = {"seen": 0, "depth": 0, "shard": 0, "host": 0, "url": 0, "trap": 0}
        self.seen = state.seen
        self._domains: dict[str, str] = {}
        self._edges: set[tuple[str, str, str]] = set()  # (source domain, target host, target domain) not yet flushed
        self._seed_hosts: set[str] = {r[0] for r in state.db.execute("SELECT host FROM seed_hosts")}
        self._fill_at = 0.0
        # links owned by another partition go out through the outbox (a table, so a kill keeps them)
        self._routed: list[tuple[int, str, int, int]] = []  # (owner, canonical, depth, hops) not yet in the outbox
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
        domain raises the target's trap budget once per linking domain)."""
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
            shard, part = place(host, cfg.shards, cfg.parts)
            if shard != cfg.shard:
                self.dropped["shard"] += 1
                return False
            if part != cfg.part:
                self._routed.append((part, canonical, depth, hops))
                self.routed += 1
                if len(self._adds) + len(self._marks) + len(self._routed) >= cfg.flush_every:
                    self.flush()
                return True
        if cfg.host_budget and (seed or source is not None):
            domain = self._domain(host)
            src = "" if seed else source
            if src != domain:
                self._edges.add((src or "", host, domain))
        return self.admit(canonical, depth, host=host, seed=seed, hops=hops)

    def _domain(self, host: str) -> str:
        """The registered domain of ``host`` (its shard key), cached."""
        dom = self._domains.get(host)
        if dom is None:
            if len(self._domains) > 200_000:
                self._domains.clear()
            dom = self._domains[host] = shard_key(host)
        return dom

    def admit(self, canonical: str, depth: int, *, host: str = "", seed: bool = False, hops: int = 0) -> bool:
        """Queue a canonical URL this partition owns (links routed here by another one come in here)."""
        host = host or _host_of(canonical)
        if seed and self.config.same_host and host not in self._seed_hosts:
            self._seed_hosts.add(host)
            self.state.db.execute("INSERT OR IGNORE INTO seed_hosts VALUES(?)", (host,))
        elif self.config.same_host and not seed and host not in self._seed_hosts:
            self.dropped["host"] += 1
            return False
        self._adds.append((canonical, depth, host, depth, hops))
        if len(self._adds) + len(self._marks) >= self.config.flush_every:
            self.flush()
        return True

    def add_many(self, urls: Iterable[str], depth: int, *, source_host: str | None = None) -> int:
        """Queue the links of a page; ``source_host``: the page's host (its registered domain votes for the targets)."""
        source = shard_key(source_host) if source_host is not None else None
        return sum(1 for u in urls if self.add(u, depth, source=source))

    # -- handing out -------------------------------------------------------------------------

    def take(self, now: float | None = None) -> Item | float | None:
        """An Item ready now, else the seconds until the next host is ready, else None (no work)."""
        now = time.time() if now is None else now
        short = not self._heap or len(self._hosts) < self.config.max_active // 2
        if short and (self._adds or now >= self._fill_at):
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

    def done(self, item: Item, *, started: float, file: str | None, crawl_delay: float = 0.0) -> None:
        """The fetch of ``item`` ended: ``file`` is the WARC file holding it, None when nothing was stored."""
        self.in_flight -= 1
        self.fetched += 1
        host = self._hosts.get(item.host)
        delay = max(self.config.delay, crawl_delay)
        next_at = started + delay
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
        if len(self._adds) + len(self._marks) >= self.config.flush_every:
            self.flush()

    def _refill(self, host: _Host) -> bool:
        """Load the host's next waiting URLs from its segments (by depth, then admission) into its window.

        Items of a segment complete in the order they were loaded (one fetch per host at a time), so
        a segment's next URL is its ``done`` count on disk plus its completions not flushed yet,
        unless this host object already loaded further (``host.loaded``)."""
        if host.exhausted and not self._adds:
            return False
        pending: dict[int, int] = {}
        for _, m in self._marks:
            if m.host == host.name:
                pending[m.seq >> SEG_BITS] = pending.get(m.seq >> SEG_BITS, 0) + 1
        want = self.config.window
        offset = 0
        while want > 0:
            rows = self.state.db.execute(
                "SELECT id, prio, n, done, data FROM qseg WHERE host=? ORDER BY prio, id LIMIT 16 OFFSET ?",
                (host.name, offset)).fetchall()
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
        if not (self._adds or self._marks or self._clocks or self._routed or self._acks_taken or self._acked):
            return
        db = self.state.db
        db.execute("BEGIN IMMEDIATE")
        written: list[Routed] = []
        for owner, canonical, depth, hops in self._routed:
            self._oseq += 1
            db.execute("INSERT INTO outbox(id, part, url, depth, hops) VALUES(?,?,?,?,?)",
                       (self._oseq, owner, canonical, depth, hops))
            written.append((self._oseq, owner, canonical, depth, hops))
            self._sent_upto[owner] = self._oseq
        for owner, upto in self._acked.items():
            db.execute("DELETE FROM outbox WHERE part=? AND id<=?", (owner, upto))
        self._admit_batch(db)
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
        seg_host = {m.seq >> SEG_BITS: m.host for _, m in self._marks}
        for seg in done:
            if db.execute("DELETE FROM qseg WHERE id=? AND done >= n", (seg,)).rowcount:
                known = self._hosts.get(seg_host[seg])
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
        self._adds.clear()
        self._edges.clear()
        self._marks.clear()
        self._clocks.clear()
        self._routed.clear()
        self._acked.clear()
        owed, self._acks_taken = self._acks_taken, {}
        self.seen.settle()
        self.state.edges.settle()
        if self.on_commit is not None and (written or owed):
            self.on_commit(written, owed)

    def _admit_batch(self, db: object) -> None:
        """The buffered admissions, in one batch: seen-set check, trap budgets, queue and host rows.

        Trap budgets (IRLbot's STAR/BEAST idea): a host may have ``host_budget * (1 + in-degree)``
        URLs admitted, its registered domain ``domain_budget * (1 + in-degree)``, where the in-degree
        counts the other registered domains whose pages linked to it (a seed is one vote). Seeds count
        against the budgets but are never dropped. The edges
        are deduplicated in the seen set itself. A URL over budget is dropped (``trap``) and not marked
        seen, so it is admitted when found again once more domains link to its host."""
        import sqlite3

        assert isinstance(db, sqlite3.Connection)
        adds = self._adds
        edges = list(self._edges)
        if not adds and not edges:
            return
        cfg = self.config
        keys = url_keys([a[0] for a in adds])
        new = self.seen.check(keys)
        n = len(adds)
        e = len(edges)
        ekeys = url_keys([_edge_key(src, host, "h") for src, host, _ in edges]
                         + [_edge_key(src, dom, "d") for src, _, dom in edges])
        enew = self.state.edges.check(ekeys)
        self.state.edges.log(ekeys[enew])
        budgets = bool(cfg.host_budget)
        hosts_in = sorted({a[2] for a in adds})
        host_row: dict[str, list[int]] = {}  # host -> [admitted, indeg]
        dom_row: dict[str, list[int]] = {}
        if budgets:
            for i in range(0, len(hosts_in), 500):
                part = hosts_in[i:i + 500]
                q = f"SELECT host, admitted, indeg FROM hosts WHERE host IN ({','.join('?' * len(part))})"
                for h, adm, deg in db.execute(q, part):
                    host_row[str(h)] = [int(adm), int(deg)]
            doms = sorted({self._domain(h) for h in hosts_in})
            for i in range(0, len(doms), 500):
                part = doms[i:i + 500]
                q = f"SELECT domain, admitted, indeg FROM domains WHERE domain IN ({','.join('?' * len(part))})"
                for d, adm, deg in db.execute(q, part):
                    dom_row[str(d)] = [int(adm), int(deg)]
            for j, (_, host, dom) in enumerate(edges):
                if enew[j]:
                    host_row.setdefault(host, [0, 0])[1] += 1
                if enew[e + j]:
                    dom_row.setdefault(dom, [0, 0])[1] += 1
        take = new.copy()
        groups: dict[tuple[str, int], list[tuple[str, int]]] = {}
        admitted_hosts: dict[str, int] = {}
        first: dict[str, int] = {}
        seq = self._seq
        domain = self._domain
        for i in np.flatnonzero(new[:n]).tolist():
            canonical, depth, host, prio, hops = adds[i]
            if budgets:
                hr = host_row.get(host) or host_row.setdefault(host, [0, 0])
                dom = domain(host)
                dr = dom_row.get(dom) or dom_row.setdefault(dom, [0, 0])
                # a seed (depth 0) is the user's choice: counted, never dropped
                if depth > 0 and (hr[0] >= cfg.host_budget * (1 + hr[1])
                                  or dr[0] >= cfg.domain_budget * (1 + dr[1])):
                    take[i] = False
                    self.dropped["trap"] += 1
                    continue
                hr[0] += 1
                dr[0] += 1
            seq += 1
            group = groups.get((host, prio))
            if group is None:
                group = groups[(host, prio)] = []
                if host not in first:
                    first[host] = seq
            group.append((canonical, hops))
        self._seq = seq
        for (host, _), group in groups.items():
            admitted_hosts[host] = admitted_hosts.get(host, 0) + len(group)
        self.dropped["seen"] += int(n - np.count_nonzero(new[:n]))
        self.admitted += sum(admitted_hosts.values())
        self.seen.log(keys[take])
        db.executemany("INSERT INTO qseg(host, prio, n, data) VALUES(?,?,?,?)",
                       [(host, prio, len(part), encode_segment(part))
                        for (host, prio), group in groups.items()
                        for part in (group[i:i + SEG_MAX] for i in range(0, len(group), SEG_MAX))])
        db.executemany("INSERT INTO hosts(host, pending, rank) VALUES(?, ?, ?) "
                       "ON CONFLICT(host) DO UPDATE SET pending = pending + excluded.pending",
                       [(h, k, first[h]) for h, k in admitted_hosts.items()])
        if budgets:
            db.executemany("INSERT INTO hosts(host, admitted, indeg) VALUES(?, ?, ?) ON CONFLICT(host) DO UPDATE "
                           "SET admitted=excluded.admitted, indeg=excluded.indeg",
                           [(h, r[0], r[1]) for h, r in host_row.items()])
            db.executemany("INSERT INTO domains(domain, admitted, indeg) VALUES(?, ?, ?) ON CONFLICT(domain) "
                           "DO UPDATE SET admitted=excluded.admitted, indeg=excluded.indeg",
                           [(d, r[0], r[1]) for d, r in dom_row.items()])
        for host in admitted_hosts:
            known = self._hosts.get(host)
            if known is not None and known.exhausted:
                known.exhausted = False
                if not known.busy:
                    heapq.heappush(self._heap, (known.next_at, known.rank, host))

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
        rows = self.state.db.execute("SELECT id, part, url, depth, hops FROM outbox ORDER BY id").fetchall()
        return [(int(i), int(p), str(u), int(d), int(h)) for i, p, u, d, h in rows]

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
        if self.in_flight or self._adds:
            return False
        self.flush()
        if self._adds:  # a commit callback can hand links back in
            return False
        row = self.state.db.execute("SELECT 1 FROM hosts WHERE pending > 0 LIMIT 1").fetchone()
        return row is None
