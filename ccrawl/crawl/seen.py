"""The URL-seen set: DRUM's shape (IRLbot), fixed 8-byte keys, batched checks, sorted runs on disk.

A key is the first 8 bytes of blake3 of the canonical URL, read as a little-endian ``uint64``
(:func:`url_keys`). Keys live in three places:

* **the log**: every key admitted since the last spill, one ``seen_log`` row (a blob of packed keys)
  per frontier flush, written in the same SQLite transaction as the queue rows of those URLs, so the
  state file's commit is the one point where a URL becomes seen and queued together;
* **memory**: the same keys as a few sorted ``numpy`` arrays (a binary counter of sizes, so keeping
  them sorted costs O(log) per key, not a re-sort per flush);
* **runs**: sorted, duplicate-free files ``<state>.seen/run-N.u64`` of packed keys, with a fence file
  ``run-N.fence`` (the first key of every 512-byte page, kept in memory: 12.5 MB per 100M keys).

A batch of keys (one flush: seeds, links, redirect targets) is checked in one pass (:meth:`SeenStore.check`):
deduplicated and sorted, tested against a hash set of the memory keys (:mod:`ccrawl.crawl.seenmem`), then against
each run. For a run the fences name the page each key would be on; the pages named are gathered from a
read-only mapping of the run in one vectorised step and searched at once: a small batch touches a page
per key, a batch as large as the run reads the run once, in order (DRUM's merge pass). The mapping lives
for one check, so the process keeps no run page resident between checks: memory is
the in-memory keys (``mem_keys``, 8 bytes each) plus the fences, whatever the run sizes.

When the memory keys pass ``mem_keys`` they are **spilled**: written sorted to a new run (a ``.tmp``
file renamed into place), then one transaction names the run in the manifest (``meta`` key
``seen_runs``) and deletes the log rows it holds. Runs are then **merged**: the newest runs in which
each is at most ``ratio`` times the size of everything newer, by a streaming k-way merge into a new
run (2 MB windows, each merged by :func:`ccrawl.crawl.keys.merge_into`, compiled) in a thread of its own
(the inputs keep answering checks meanwhile), adopted at the next :meth:`SeenStore.settle` after it ends:
one transaction swapping the manifest, then the old files
unlinked. The manifest in the state file is
the truth: at open, any file in the directory it does not name (a run written by a killed spill or
merge, the inputs a killed merge had not unlinked yet, ``.tmp`` files) is deleted, and the log rows are
loaded back into memory. A SIGKILL at any point of a spill or merge therefore loses no key and keeps
none twice. Like the state file (``synchronous=NORMAL``) nothing is fsynced: a killed process loses
nothing, a power cut may lose the last commits.

Costs: 8 bytes a key on disk (plus 1/64 for fences), ``mem_keys`` x 8 bytes of memory (32 MB by
default) and up to 16 more a key for their hash set, a key rewritten about log_ratio(N / mem_keys) times over
its life. 8-byte keys collide: with N keys, a new URL is wrongly taken as seen with probability N / 2^64
(5e-12 at 100M).
"""

from __future__ import annotations

import mmap
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ccrawl.crawl.keys import fence_pages, merge_into, page_search
from ccrawl.crawl.seenmem import KeySet
from ccrawl.errors import CcrawlError

Keys = npt.NDArray[np.uint64]

PAGE_KEYS = 64
"""Keys per 512-byte page of a run; the fences hold the first key of every page (a check reads a page per
key at most, so smaller pages read less: 512 bytes, 12.5 MB of fences per 100M keys in memory)."""
WINDOW_KEYS = 1 << 18
"""Keys per window (2 MB over all the inputs) when runs are merged: a window's output still in the CPU's
cache when it is written cut the page-cache write of a 60M-key merge from ~0.5 to ~0.18 CPU-s (16 MB windows)."""
MAP_KEYS = 1 << 23
"""Keys a check maps of a run at once (64 MB): the pages it touches leave with the mapping, so a check of
a batch as large as a run of 100M keys never holds more than this much of it."""
MEM_KEYS = 1 << 22
"""Keys kept in memory before a spill to a run (32 MB)."""
RATIO = 4
"""A run is merged into the newer one while it is at most this many times its size."""



MERGE_STALL_S = 120.0
"""Seconds a merge may go without finishing a window before it is called stuck (``CCRAWL_MERGE_STALL_S``):
a window is 2 MB, so a healthy merge finishes one every few milliseconds even on a busy machine."""


class MergeStuck(CcrawlError):
    """A seen-set merge made no progress for the stall deadline (its thread hangs): named, not waited on."""


def crash_point(name: str) -> None:
    """SIGKILL this process at the named point when ``CCRAWL_CRASH_AT`` names it (kill tests).

    ``CCRAWL_CRASH_AT=name`` kills at the first pass, ``name:N`` at the N-th. ``CCRAWL_HANG_AT=name``
    (tests of the stall deadline) blocks the thread passing there for good instead."""
    if os.environ.get("CCRAWL_HANG_AT") == name:
        threading.Event().wait()
    want = os.environ.get("CCRAWL_CRASH_AT")
    if not want:
        return
    point, _, nth = want.partition(":")
    if point != name:
        return
    seen = _crash_counts.get(name, 0) + 1
    _crash_counts[name] = seen
    if seen >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


_crash_counts: dict[str, int] = {}


def url_keys(canonicals: Sequence[str]) -> Keys:
    """The seen keys of canonical URLs: 8 bytes of blake3 each, as little-endian uint64."""
    from ccrawl.crawl.keys import keys_hosts

    return keys_hosts(list(canonicals), False)[0]


Scalar = TypeVar("Scalar", bound=np.generic)


def unique(values: npt.NDArray[Scalar]) -> npt.NDArray[Scalar]:
    """The distinct values, sorted: a sort and one comparison pass (what ``np.unique`` did before numpy 2.3).

    numpy 2.3 and later answer ``np.unique`` of integers without ``return_index``/``return_inverse``
    from a hash table, 40-120x slower than this on 20 000 - 4M random 64-bit keys (0.7-2 us a key
    against 0.015-0.03 on this machine): the cause of the frontier's rate falling with the URLs held
    (bench/README.md, "Frontier to 100M"). Every distinct-values step of the crawl goes through here."""
    return _drop_repeats(np.sort(values))


def _drop_repeats(out: npt.NDArray[Scalar]) -> npt.NDArray[Scalar]:
    """A sorted array without its repeated values (one comparison pass)."""
    if len(out) > 1:
        keep = np.empty(len(out), dtype=bool)
        keep[0] = True
        np.not_equal(out[1:], out[:-1], out=keep[1:])
        if not keep.all():
            out = out[keep]
    return out


def _write_keys(out: object, keys: Keys) -> None:
    """``keys`` to a binary file as little-endian uint64, from the array's own buffer (no bytes copy)."""
    data = keys if sys.byteorder == "little" and keys.flags.c_contiguous else np.ascontiguousarray(keys, dtype="<u8")
    out.write(data.data.cast("B"))  # type: ignore[attr-defined]


class _Run:
    """One sorted run on disk: its descriptor, key count and fences."""

    def __init__(self, directory: Path, name: str) -> None:
        self.name = name
        self.path = directory / f"{name}.u64"
        self.fd = os.open(self.path, os.O_RDONLY)
        self.count = os.fstat(self.fd).st_size // 8
        self.fences: Keys = np.fromfile(directory / f"{name}.fence", dtype="<u8").astype(np.uint64)

    def read_into(self, first: int, dest: Keys) -> None:
        """Keys ``first`` .. ``first + len(dest)`` of the run into ``dest`` (contiguous), read in place."""
        view = memoryview(dest).cast("B")  # type: ignore[arg-type]
        done = 0
        while done < len(view):
            got = os.preadv(self.fd, [view[done:]], first * 8 + done)
            if got <= 0:
                raise OSError(f"{self.path}: {len(view) - done} bytes short at key {first + done // 8:,}")
            done += got
        if sys.byteorder != "little":
            dest.byteswap(inplace=True)

    def contains(self, q: Keys) -> npt.NDArray[np.bool_]:
        """For sorted unique ``q``: which keys the run holds.

        The fences name the page each key would be on (the last page whose first key is at most the key:
        :func:`ccrawl.crawl.keys.fence_pages`, compiled, a gallop from one key's page to the next's, 0.02-0.14 us a
        key against numpy's 0.05-0.17 for 200 000-20 000 keys and 1.56 M fences); a binary search inside that page
        (:func:`ccrawl.crawl.keys.page_search`, compiled, or its twin's six vectorised steps), in a read-only mapping
        of the run (64 MB of it at a time), finds the largest key of the page not above it. A key reads about 7 of its
        page's 64 keys, not the whole page (gathering whole pages copied 512 bytes a key: 100 MB a check of 200 000
        keys). The mapping lives for one window only: the pages it touched leave the process with it, so memory stays
        the fences and one window's mapped pages, whatever the run and batch sizes.
        """
        found = np.zeros(len(q), dtype=bool)
        if not self.count or not len(q):
            return found
        page = fence_pages(self.fences, q)
        lo = int(np.searchsorted(page, 0))  # keys below the run's first key are not in it
        span = MAP_KEYS // PAGE_KEYS  # pages a mapping covers (a multiple of the OS page: MAP_KEYS is)
        k0 = lo
        while k0 < len(q):
            first = int(page[k0]) // span * span  # the window holding the next key's page
            k1 = int(np.searchsorted(page, first + span))  # the keys of this window: page is sorted
            keys_in = min(self.count - first * PAGE_KEYS, span * PAGE_KEYS)
            with mmap.mmap(self.fd, keys_in * 8, prot=mmap.PROT_READ, offset=first * PAGE_KEYS * 8) as mm:
                keys = np.frombuffer(mm, dtype="<u8")
                at = (page[k0:k1] - first) * PAGE_KEYS  # keys[at] <= q: the page's first key (a fence)
                found[k0:k1] = page_search(keys, at, q[k0:k1], PAGE_KEYS)
                del keys
            k0 = k1
        return found

    def close(self) -> None:
        os.close(self.fd)


class SeenStore:
    """The seen set of one state file (see the module docstring). Spills and merges run in
    :meth:`settle`, outside the frontier's transaction; :meth:`log` runs inside it."""

    def __init__(self, db: sqlite3.Connection, directory: Path, *, mem_keys: int = MEM_KEYS,
                 ratio: int = RATIO, name: str = "seen", background: bool | None = None) -> None:
        """``name``: the log table is ``<name>_log``, the manifest the meta key ``<name>_runs`` (the
        state file has two stores: ``seen`` for URLs, ``edges`` for the trap budgets' linking domains)."""
        self.db = db
        self.table = f"{name}_log"
        self.key = f"{name}_runs"
        self.dir = directory
        # CCRAWL_SEEN_MERGE=sync: merges on the caller's thread (tests compare both ways)
        self.background = os.environ.get("CCRAWL_SEEN_MERGE") != "sync" if background is None else background
        self._merging: tuple[list[_Run], str] | None = None  # (inputs, output name) of the merge under way
        self._merge_done = threading.Event()
        self._merge_error: BaseException | None = None
        self._merge_stage = ""  # what the merge thread does now, for the stall message
        self._merge_beat = 0.0  # time.monotonic() of its last progress
        self._merge_started = 0.0
        self.spilled_keys = 0
        """Keys written to runs by spills in this process."""
        self.merged_keys = 0
        """Keys written to runs by merges in this process (their thread's count): with :attr:`spilled_keys`
        the store's write amplification."""
        self.merge_cpu_s = 0.0
        """CPU seconds the merges of this process took in their thread."""
        self.stall_s = float(os.environ.get("CCRAWL_MERGE_STALL_S") or MERGE_STALL_S)
        self.mem_keys = max(1, mem_keys)
        self.ratio = max(2, ratio)
        self.dir.mkdir(exist_ok=True)
        db.execute(f"CREATE TABLE IF NOT EXISTS {self.table}(id INTEGER PRIMARY KEY, keys BLOB NOT NULL)")
        self.runs: list[_Run] = []
        names = [n for n in self._manifest() if n]
        keep = {f"{n}.u64" for n in names} | {f"{n}.fence" for n in names}
        for p in self.dir.iterdir():
            if p.name not in keep:  # what a killed spill or merge left behind
                p.unlink()
        for name in names:
            self.runs.append(_Run(self.dir, name))
        self._next = 1 + max([int(n.split("-")[1]) for n in names] or [0])
        self._mem: list[Keys] = []
        """The keys not spilled yet, one sorted array a log row (a spill sorts them together: the runs found)."""
        self._mem_count = 0
        self._set = KeySet()
        """The same keys as a hash set, which answers :meth:`check` for them: a probe a key."""
        self._log_hi = 0
        rows = db.execute(f"SELECT id, keys FROM {self.table} ORDER BY id").fetchall()
        if rows:
            self._log_hi = int(rows[-1][0])
            self._push(unique(np.frombuffer(b"".join(r[1] for r in rows), dtype="<u8").astype(np.uint64)))

    # -- the manifest ----------------------------------------------------------------------

    def _manifest(self) -> list[str]:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (self.key,)).fetchone()
        return str(row[0]).split(",") if row and row[0] else []

    def _set_manifest(self, names: list[str]) -> None:
        self.db.execute("INSERT INTO meta(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v",
                        (self.key, ",".join(names)))

    @property
    def count(self) -> int:
        """Keys held (runs and memory are disjoint)."""
        return self._mem_count + sum(r.count for r in self.runs)

    @property
    def disk_bytes(self) -> int:
        return sum(os.path.getsize(p) for p in self.dir.iterdir())

    # -- checks and inserts ----------------------------------------------------------------

    def check(self, keys: Keys) -> npt.NDArray[np.bool_]:
        """Which of ``keys`` are new: not held, and the first of their value in the batch."""
        if not len(keys):
            return np.zeros(0, dtype=bool)
        order = np.argsort(keys, kind="stable")  # equal keys keep their batch order: the first is first
        ordered = keys[order]
        lead = np.empty(len(keys), dtype=bool)
        lead[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=lead[1:])
        q, first = ordered[lead], order[lead]
        held = self._set.has(q)
        for run in self.runs:
            rest = np.flatnonzero(~held)
            if not len(rest):
                break
            held[rest] |= run.contains(q[rest])
        new = np.zeros(len(keys), dtype=bool)
        new[first[~held]] = True
        return new

    def log(self, keys: Keys) -> None:
        """Insert new keys (checked new by :meth:`check`): one log row, inside the caller's transaction."""
        if not len(keys):
            return
        cur = self.db.execute(f"INSERT INTO {self.table}(keys) VALUES(?)", (keys.astype("<u8").tobytes(),))
        self._log_hi = int(cur.lastrowid or 0)
        self._push(np.sort(keys))

    def _push(self, arr: Keys) -> None:
        self._mem.append(arr)
        self._mem_count += len(arr)
        self._set.add(arr)

    # -- spills and merges -----------------------------------------------------------------

    def settle(self, *, force: bool = False) -> None:
        """After a commit: adopt a merge that has finished, spill memory to a run when it is over
        ``mem_keys`` (or ``force``), then start the merge the runs call for.

        A merge runs in a thread of its own (``background``): it only reads its input runs (which stay
        in :attr:`runs`, answering checks, until it is adopted) and writes a file no manifest names, so the
        event loop goes on checking and inserting meanwhile; numpy's sorts and the file reads and writes let
        go of the GIL. Adopting it (the manifest swapped in one transaction, then the inputs unlinked) is
        done here, on the caller's thread, which owns the state file's connection."""
        self._adopt(wait=False)
        if self._mem_count >= self.mem_keys or (force and self._mem_count):
            self._spill()
        if self._merging is None:
            inputs = self._merge_inputs()
            if inputs:
                self._start_merge(inputs)

    def _spill(self) -> None:
        if len(self._mem) == 1:
            arr = self._mem[0]
        else:
            arr = np.concatenate(self._mem)
            arr.sort(kind="stable")  # in place: timsort merges the sorted log rows without a second copy
        name = self._write(self._new_name(), lambda out: _write_keys(out, arr), arr[::PAGE_KEYS])
        self.spilled_keys += len(arr)
        crash_point("seen-spill-written")
        self.db.execute("BEGIN IMMEDIATE")
        self._set_manifest([r.name for r in self.runs] + [name])
        self.db.execute(f"DELETE FROM {self.table} WHERE id <= ?", (self._log_hi,))
        self.db.execute("COMMIT")
        crash_point("seen-spill-committed")
        self.runs.append(_Run(self.dir, name))
        self._mem = []
        self._mem_count = 0
        self._set = KeySet()

    def _merge_inputs(self) -> list[_Run]:
        """The newest runs to merge into one: the longest suffix in which each run is at most ``ratio``
        times the size of everything newer (what merging the newest two while the rule holds would take)."""
        if len(self.runs) < 2:
            return []
        i = len(self.runs) - 1
        newer = self.runs[i].count
        while i > 0 and self.runs[i - 1].count <= self.ratio * newer:
            i -= 1
            newer += self.runs[i].count
        return self.runs[i:] if i < len(self.runs) - 1 else []

    def _start_merge(self, inputs: list[_Run]) -> None:
        name = self._new_name()
        self._merging = (inputs, name)
        self._merge_error = None
        self._merge_done.clear()
        self._merge_started = self._merge_beat = time.monotonic()
        self._merge_stage = "starting"
        if not self.background:  # the suffix rule leaves nothing more to merge after this one
            self._merge_body(inputs, name)
            self._adopt(wait=True)
            return
        threading.Thread(target=self._merge_body, args=(inputs, name), name=f"seen-merge-{name}",
                         daemon=True).start()

    def _merge_body(self, runs: list[_Run], name: str) -> None:
        """Merge ``runs`` into the new run ``name`` (a streaming k-way merge, 2 MB windows): the files only."""
        cpu0 = time.thread_time()
        written = [0]
        try:
            fences: list[Keys] = []

            total = sum(r.count for r in runs)

            # keys read from each input at once: a window holds about WINDOW_KEYS over all the inputs,
            # however many there are (a merge of k runs at WINDOW_KEYS each held k windows)
            chunk = max(1 << 16, WINDOW_KEYS // len(runs))

            # each input's keys in a buffer of its own (1.5 chunk, refilled in place by preadv), each window
            # merged into one output buffer (ccrawl.crawl.keys.merge_into, compiled): no array allocated,
            # concatenated or sorted per window
            stores = [np.empty(min(chunk + chunk // 2, r.count), dtype=np.uint64) for r in runs]
            merged = np.empty(sum(len(b) for b in stores), dtype=np.uint64)
            scratch = np.empty(len(merged), dtype=np.uint64) if len(runs) > 2 else None  # merge_into's spare buffer

            def body(out: object) -> None:
                pos = [0] * len(runs)
                lo = [0] * len(runs)
                hi = [0] * len(runs)
                while True:
                    for i, run in enumerate(runs):
                        if hi[i] - lo[i] < chunk // 2 and pos[i] < run.count:
                            left = hi[i] - lo[i]
                            store = stores[i]
                            if lo[i]:
                                store[:left] = store[lo[i]:hi[i]]  # at most chunk / 2 keys moved to the front
                            n = min(len(store) - left, run.count - pos[i])
                            self._stage_now(f"reading {run.name} at key {pos[i]:,} of {run.count:,}")
                            run.read_into(pos[i], store[left:left + n])
                            lo[i], hi[i] = 0, left + n
                            pos[i] += n
                    live = [i for i in range(len(runs)) if hi[i] > lo[i]]
                    if not live:
                        break
                    # everything up to the smallest last-buffered key of a run with more to read is final
                    open_ends = [stores[i][hi[i] - 1] for i in live if pos[i] < runs[i].count]
                    cut = min(open_ends) if open_ends else None
                    take = []
                    for i in live:
                        part = stores[i][lo[i]:hi[i]]
                        k = len(part) if cut is None else int(np.searchsorted(part, cut, side="right"))
                        take.append(part[:k])
                        lo[i] += k
                    self._stage_now(f"merging a window ({written[0]:,} of at most {total:,} keys written)")
                    got = merge_into(take, merged, scratch)
                    del take
                    start = written[0]
                    # fences: the first key of every page of the output, copied (the buffer is reused)
                    offs = (-start) % PAGE_KEYS
                    fences.append(merged[offs:got:PAGE_KEYS].copy())
                    self._stage_now(f"writing {name}.u64.tmp ({written[0]:,} of at most {total:,} keys written)")
                    _write_keys(out, merged[:got])
                    written[0] += got
                    crash_point("seen-merge-writing")

            self._write(name, body, None)
            self._stage_now(f"writing {name}.fence")
            # the fences are known only once the body is written (the run is still unnamed by the manifest)
            tmp = self.dir / f"{name}.fence.tmp"
            with open(tmp, "wb") as out:
                _write_keys(out, np.concatenate(fences) if fences else np.zeros(0, dtype=np.uint64))
            os.replace(tmp, self.dir / f"{name}.fence")
            self._stage_now(f"finishing {name} (written, not handed over yet)")
            crash_point("seen-merge-written")
            self._stage_now("done")
        except BaseException as exc:  # handed to the owning thread at adoption
            self._merge_error = exc
        finally:
            self.merged_keys += written[0]
            self.merge_cpu_s += time.thread_time() - cpu0
            self._merge_done.set()

    def _adopt(self, *, wait: bool) -> None:
        """Name a finished merge's run in the manifest in place of its inputs, then unlink the inputs."""
        if self._merging is None:
            return
        if not self._merge_done.wait(None if wait else 0):
            return
        runs, name = self._merging
        self._merging = None
        if self._merge_error is not None:
            error, self._merge_error = self._merge_error, None
            raise error
        at = self.runs.index(runs[0])
        order = [*[r.name for r in self.runs[:at]], name, *[r.name for r in self.runs[at:] if r not in runs]]
        self.db.execute("BEGIN IMMEDIATE")
        self._set_manifest(order)
        self.db.execute("COMMIT")
        crash_point("seen-merge-committed")
        for run in runs:
            run.close()
            run.path.unlink()
            (self.dir / f"{run.name}.fence").unlink()
            crash_point("seen-merge-unlinking")
        self.runs = [*self.runs[:at], _Run(self.dir, name), *[r for r in self.runs[at:] if r not in runs]]

    def _stage_now(self, stage: str) -> None:
        self._merge_stage = stage
        self._merge_beat = time.monotonic()

    def stalled(self, *, now: float | None = None) -> str | None:
        """A one-line account of the merge under way when it has made no progress for ``stall_s``
        seconds (its thread hangs: a disk that stopped answering, a bug), else None."""
        if self._merging is None or self._merge_done.is_set():
            return None
        now = time.monotonic() if now is None else now
        quiet = now - self._merge_beat
        if quiet < self.stall_s:
            return None
        runs, name = self._merging
        return (f"the {self.table.removesuffix('_log')} set's merge of {len(runs)} runs "
                f"({', '.join(r.name for r in runs)}: {sum(r.count for r in runs):,} keys) into {name} in {self.dir} "
                f"has made no progress for {quiet:.0f} s (stuck {self._merge_stage}; started "
                f"{now - self._merge_started:.0f} s ago)")

    def _wait_merge(self) -> None:
        """Wait for the merge under way while it makes progress; a stall past ``stall_s`` is :class:`MergeStuck`
        (the state is safe: the manifest still names the inputs, and the next open deletes the partial run)."""
        while self._merging is not None and not self._merge_done.wait(min(1.0, self.stall_s / 4)):
            stuck = self.stalled()
            if stuck is not None:
                raise MergeStuck(f"{stuck}; the state file is safe: rerun the same command to resume "
                                 "(the merge starts over)")

    def _new_name(self) -> str:
        name = f"run-{self._next:08d}"
        self._next += 1
        return name

    def _write(self, name: str, body: object, fences: Keys | None) -> str:
        """The run ``name`` from ``body(file)``, renamed into place (fences first when given); returns its name."""
        steps: list[tuple[str, object]] = [(".u64", body)]
        if fences is not None:
            steps.insert(0, (".fence", lambda out: _write_keys(out, fences)))
        for suffix, fill in steps:
            tmp = self.dir / f"{name}{suffix}.tmp"
            with open(tmp, "wb") as out:
                fill(out)  # type: ignore[operator]
            os.replace(tmp, self.dir / f"{name}{suffix}")
        return name

    def import_keys(self, rows: Iterable[tuple[bytes]]) -> None:
        """Keys of an older layout (blobs whose first 8 bytes are the key) written as runs, then a
        transaction begun that names them: the caller finishes it (drops the old table) and commits."""
        names: list[str] = []
        chunk: list[bytes] = []

        def spill() -> None:
            arr = unique(np.frombuffer(b"".join(chunk), dtype="<u8").astype(np.uint64))
            names.append(self._write(self._new_name(), lambda out: _write_keys(out, arr),
                                     arr[::PAGE_KEYS]))
            chunk.clear()

        for (key,) in rows:
            chunk.append(bytes(key[:8]).ljust(8, b"\0"))
            if len(chunk) >= self.mem_keys:
                spill()
        if chunk:
            spill()
        crash_point("seen-import-written")
        self.db.execute("BEGIN IMMEDIATE")
        self._set_manifest([r.name for r in self.runs] + names)
        self.runs += [_Run(self.dir, n) for n in names]

    def close(self) -> None:
        """Finish a merge under way (and adopt it), then close the runs. A merge stalled past ``stall_s``
        is not waited on: :class:`MergeStuck` names it (its inputs stay the truth)."""
        try:
            self._wait_merge()
            self._adopt(wait=True)
        finally:
            for run in self.runs:
                run.close()
            self.runs = []
