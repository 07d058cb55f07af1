"""The URL-seen store on its own: batched checks against memory and sorted runs, spills, merges,
reopening, the migration of a state file whose seen set was a SQLite table, and SIGKILLs at every
phase of a spill and a merge (the store's process killed itself at a named point)."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ccrawl.crawl.frontier import Frontier, FrontierConfig, url_key
from ccrawl.crawl.keys import merge_into_py
from ccrawl.crawl.seen import PAGE_KEYS, SeenStore, unique, url_keys
from ccrawl.crawl.state import SCHEMA, StateFile
from ccrawl.errors import UsageError
from ccrawl.url.canon import canonicalize

ROOT = Path(__file__).resolve().parents[2]


def _store(tmp_path: Path, **kw: int) -> tuple[sqlite3.Connection, SeenStore]:
    db = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    return db, SeenStore(db, tmp_path / "s.seen", **kw)


def _add(db: sqlite3.Connection, store: SeenStore, keys: np.ndarray) -> np.ndarray:
    new = store.check(keys)
    db.execute("BEGIN")
    store.log(keys[new])
    db.execute("COMMIT")
    store.settle()
    return new


def test_checks_match_a_set_through_spills_merges_and_a_reopen(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    universe = rng.integers(0, 2**64, size=30_000, dtype=np.uint64)
    db, store = _store(tmp_path, mem_keys=700, ratio=2)
    held: set[int] = set()
    for _ in range(60):
        batch = universe[rng.integers(0, len(universe), size=rng.integers(1, 3000))]
        new = _add(db, store, batch)
        expect = []
        seen_here: set[int] = set()
        for k in batch.tolist():
            expect.append(k not in held and k not in seen_here)
            seen_here.add(k)
        assert new.tolist() == expect
        held |= seen_here
    assert store.count == len(held) and len(store.runs) >= 2
    # a run's pages: fences are the first key of every page
    run = store.runs[0]
    keys = np.empty(run.count, dtype=np.uint64)
    run.read_into(0, keys)
    assert run.fences.tolist() == keys[::PAGE_KEYS].tolist() and np.all(np.diff(keys.astype(np.int64)) != 0)
    store.close()
    db.close()
    db, again = _store(tmp_path, mem_keys=700, ratio=2)
    assert again.count == len(held)
    probe = universe[:5000]
    assert (~again.check(probe)).tolist() == [k in held for k in probe.tolist()]
    fresh = np.array([k for k in rng.integers(0, 2**64, size=100, dtype=np.uint64).tolist() if k not in held],
                     dtype=np.uint64)
    assert again.check(fresh).all()
    held_arr = np.array(sorted(held), dtype=np.uint64)
    assert not again.check(held_arr).any()


def test_checks_and_inserts_go_on_while_a_merge_runs_in_its_thread(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge held at its start by a gate: the caller keeps checking and inserting (spilling new runs
    after the merge's inputs), every answer right; once let go, the merge is adopted at the next settle
    in the inputs' place, and a reopen sees the same set."""
    import threading

    gate = threading.Event()
    threads: list[str] = []
    body = SeenStore._merge_body

    def held(self: SeenStore, runs: list, name: str) -> None:
        threads.append(threading.current_thread().name)
        gate.wait(30)
        body(self, runs, name)

    monkeypatch.setattr(SeenStore, "_merge_body", held)
    rng = np.random.default_rng(11)
    db, store = _store(tmp_path, mem_keys=1000, ratio=4)
    held_keys: set[int] = set()
    for _ in range(3):
        batch = rng.integers(0, 2**64, size=1200, dtype=np.uint64)
        _add(db, store, batch)
        held_keys |= set(batch.tolist())
    assert store._merging is not None and threads and threads[0] != threading.current_thread().name
    merging = [r.name for r in store._merging[0]]
    for _ in range(4):  # the merge is held: spills go on, checks see every run
        batch = np.concatenate((rng.integers(0, 2**64, size=1100, dtype=np.uint64),
                                np.array(sorted(held_keys)[:300], dtype=np.uint64)))
        new = _add(db, store, batch)
        assert not new[1100:].any() and new[:1100].all()
        held_keys |= set(batch.tolist())
    assert [r.name for r in store.runs][:len(merging)] == merging and len(store.runs) > len(merging)
    gate.set()
    store._merge_done.wait(30)
    store.settle()
    names = [r.name for r in store.runs]
    assert not set(merging) & set(names) and store.count == len(held_keys)
    assert store._manifest() == names
    probe = np.array(sorted(held_keys), dtype=np.uint64)
    assert not store.check(probe).any()
    store.close()
    db.close()
    db, again = _store(tmp_path, mem_keys=1000, ratio=4)
    assert again.count == len(held_keys) and not again.check(probe).any()
    again.close()


def test_a_batch_as_large_as_the_run_is_answered_whole(tmp_path: Path) -> None:
    db, store = _store(tmp_path, mem_keys=10)
    keys = np.arange(1, 40_001, dtype=np.uint64) * 3
    _add(db, store, keys)
    assert store.count == 40_000 and len(store.runs) == 1
    probe = np.arange(0, 130_000, dtype=np.uint64)
    assert np.flatnonzero(~store.check(probe)).tolist() == (keys.astype(np.int64)).tolist()


@pytest.mark.parametrize("map_keys", [512, 1 << 23])
@pytest.mark.parametrize("size", [1, PAGE_KEYS - 1, PAGE_KEYS, PAGE_KEYS + 1, 10 * PAGE_KEYS + 17, 5000, 4096])
def test_a_run_answers_as_a_set_does_at_page_edges(
    tmp_path: Path, size: int, map_keys: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys on the first, a middle and the last (partial) page, below the first key and above the last,
    with the run mapped whole or in windows of 8 pages (a page edge at every window edge)."""
    import ccrawl.crawl.seen as seen
    from ccrawl.crawl.seen import _Run

    monkeypatch.setattr(seen, "MAP_KEYS", map_keys)

    rng = np.random.default_rng(size)
    keys = np.unique(rng.integers(1 << 10, 1 << 62, size, dtype=np.uint64))
    assert len(keys) == size
    keys.astype("<u8").tofile(tmp_path / "r.u64")
    keys[::PAGE_KEYS].astype("<u8").tofile(tmp_path / "r.fence")
    run = _Run(tmp_path, "r")
    probe = np.unique(np.concatenate([
        keys, keys + 1, keys - 1, np.array([0, 1, (1 << 64) - 1], dtype=np.uint64),
        rng.integers(0, 1 << 63, 500, dtype=np.uint64),
    ]))
    assert run.contains(probe).tolist() == np.isin(probe, keys).tolist()
    run.close()


def merge_unique(parts: list[npt.NDArray[np.uint64]]) -> npt.NDArray[np.uint64]:
    """The distinct keys of sorted arrays as a new array, through the merge's numpy twin."""
    out = np.empty(sum(len(p) for p in parts), dtype=np.uint64)
    return out[: merge_into_py(parts, out)]


@pytest.mark.parametrize("n", [0, 1, 2, 1000, 70_000])
def test_unique_and_merge_unique_give_what_np_unique_gives(n: int) -> None:
    """The sort-based distinct values (numpy >= 2.3's np.unique hashes, 40-120x slower here) give the same
    sorted distinct values, for uint64 keys with repeats and int64 codes; merge_unique of sorted parts too."""
    gen = np.random.default_rng(n)
    keys = gen.integers(0, 2**64, n, dtype=np.uint64)
    keys = np.concatenate((keys, keys[: n // 3]))
    codes = gen.integers(-5, 50, n, dtype=np.int64)
    for arr in (keys, codes):
        got = unique(arr)
        assert got.dtype == arr.dtype
        assert np.array_equal(got, np.unique(arr))
    parts = [np.sort(keys[i::3]) for i in range(3)]
    assert np.array_equal(merge_unique(parts), np.unique(keys))
    assert np.array_equal(merge_unique(parts[:1]), np.unique(parts[0]))


def test_url_keys_are_the_frontier_keys() -> None:
    urls = ["http://example.com/a", "http://example.com/b?x=1"]
    assert url_keys(urls).astype("<u8").tobytes() == b"".join(url_key(u) for u in urls)


def test_a_state_file_with_the_old_seen_table_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA + "CREATE TABLE seen(key BLOB PRIMARY KEY) WITHOUT ROWID;")
    import blake3

    old = [canonicalize(f"http://h{i}.example/p{i}") for i in range(500)]
    db.executemany("INSERT INTO seen VALUES(?)", [(blake3.blake3(u.encode()).digest()[:10],) for u in old])
    db.commit()
    db.close()
    f = Frontier(StateFile(path), FrontierConfig(host_budget=0))
    assert f.state.counts()["seen"] == 500
    assert f.state.db.execute("SELECT 1 FROM sqlite_master WHERE name='seen'").fetchone() is None
    for u in old[:10]:
        f.add(u, 0, seed=True)
    f.add("http://new.example/", 0, seed=True)
    f.flush()
    assert f.admitted == 1 and f.dropped["seen"] == 10
    f.state.close()


def test_a_layout_3_file_gets_its_segment_lookup_from_the_old_index_and_the_index_goes(tmp_path: Path) -> None:
    """Layout 3 found a host's segments through an index on qseg(host, prio, id); layout 4 through qidx and
    qnew. Opening a layout 3 file fills qidx from qseg and drops the index, in one transaction; every URL
    is then handed out once, by host, depth and admission, and new admissions join them."""
    from ccrawl.crawl.state import encode_segment

    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA + "CREATE INDEX qseg_host ON qseg(host, prio, id);")
    db.execute("INSERT INTO meta VALUES('seen_format', '3')")
    urls = {f"h{h}.example": [f"http://h{h}.example/p{i}" for i in range(7)] for h in range(5)}
    for host, group in urls.items():
        for prio, part in ((1, group[:4]), (2, group[4:])):
            db.execute("INSERT INTO qseg(host, prio, n, data) VALUES(?,?,?,?)",
                       (host, prio, len(part), encode_segment([(u, 0) for u in part])))
        db.execute("INSERT INTO hosts(host, pending) VALUES(?, 7)", (host,))
    db.commit()
    db.close()
    st = StateFile(path)
    assert st.get("seen_format") == "4"
    assert st.db.execute("SELECT 1 FROM sqlite_master WHERE name='qseg_host'").fetchone() is None
    assert st.db.execute("SELECT count(*) FROM qidx").fetchone()[0] == 10
    f = Frontier(st, FrontierConfig(host_budget=0, delay=0.0, max_depth=3))
    f.add("http://h0.example/new", 1)
    f.flush()
    got: dict[str, list[str]] = {}
    while (item := f.take(now=0.0)) is not None:
        assert not isinstance(item, float)
        got.setdefault(item.host, []).append(item.url)
        f.done(item, started=0.0, file="w.warc.gz")
    assert got["h0.example"] == [*urls["h0.example"][:4], "http://h0.example/new", *urls["h0.example"][4:]]
    assert {h: v for h, v in got.items() if h != "h0.example"} == {h: v for h, v in urls.items() if h != "h0.example"}
    f.flush()
    assert st.db.execute("SELECT count(*) FROM qseg").fetchone()[0] == 0
    assert st.db.execute("SELECT count(*) FROM qidx").fetchone()[0] == 0
    assert st.db.execute("SELECT count(*) FROM qnew").fetchone()[0] == 0
    st.close()


def test_a_state_file_from_a_newer_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    StateFile(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET v='9' WHERE k='seen_format'")
    db.commit()
    db.close()
    with pytest.raises(UsageError, match="newer ccrawl"):
        StateFile(path)


_CHILD = r"""
import sys
import time
from ccrawl.crawl.frontier import Frontier, FrontierConfig
from ccrawl.crawl.state import StateFile
f = Frontier(StateFile(sys.argv[1]), FrontierConfig(host_budget=0, flush_every=97))
urls = open(sys.argv[2]).read().split()
for u in urls:
    f.add(u, 0, seed=True)
f.flush()
f.state.put("done", 1)
f.state.close()
"""

POINTS = ["frontier-committed:3", "seen-spill-written:2", "seen-spill-committed:2", "seen-merge-writing:1",
          "seen-merge-written:1", "seen-merge-committed:1", "seen-merge-unlinking:1", "seen-merge-unlinking:2"]


@pytest.mark.parametrize("merge", ["background", "sync"])
@pytest.mark.parametrize("point", POINTS)
def test_a_sigkill_at_every_phase_of_a_spill_and_a_merge_loses_and_repeats_nothing(tmp_path: Path,
                                                                                   point: str, merge: str) -> None:
    """Merges in their own thread (the default: the kill lands in that thread while the caller goes on
    admitting, or at the adoption on the caller's thread) and on the caller's thread."""
    rng = random.Random(point)
    urls = [f"http://h{rng.randrange(50)}.example/p/{i}" for i in range(3000)]
    urls += rng.sample(urls, 600)  # repeats, some across batches
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(urls))
    state = tmp_path / "state.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CCRAWL_SEEN_MEM_KEYS": "150", "CCRAWL_CRASH_AT": point,
           "CCRAWL_SEEN_MERGE": merge}
    killed = subprocess.run([sys.executable, "-c", _CHILD, str(state), str(seeds)], env=env, capture_output=True)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    st = StateFile(state)
    try:
        # whatever the kill point: a URL is queued exactly when it is seen
        queued = [u for _, u, _, _ in st.waiting()]
        assert len(queued) == len(set(queued)) and st.seen.count == len(queued) > 0
        assert not st.seen.check(url_keys(queued)).any()
        assert st.get("done") != "1"
    finally:
        st.close()
    env.pop("CCRAWL_CRASH_AT")
    subprocess.run([sys.executable, "-c", _CHILD, str(state), str(seeds)], env=env, check=True)
    st = StateFile(state)
    try:
        queued = [u for _, u, _, _ in st.waiting()]
        assert sorted(queued) == sorted({canonicalize(u) for u in urls})  # each once, none lost
        assert st.seen.count == len(queued)
        names = {p.name for p in st.seen.dir.iterdir()}
        assert names == {f"{r.name}{s}" for r in st.seen.runs for s in (".u64", ".fence")}  # no orphan left
    finally:
        st.close()


@pytest.mark.parametrize("point", ["seen-merge-writing", "seen-merge-written"])
def test_a_merge_that_hangs_is_named_at_close_within_the_stall_deadline(tmp_path: Path, point: str) -> None:
    """A merge thread that stops (CCRAWL_HANG_AT blocks it for good) is not waited on forever: closing the
    state raises MergeStuck naming the merge, its runs and the stage it stopped at, once it has made no
    progress for CCRAWL_MERGE_STALL_S; the state is whole (each URL queued once, seen once) and the next run
    ends it."""
    rng = random.Random(point)
    urls = [f"http://h{rng.randrange(50)}.example/p/{i}" for i in range(3000)]
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(urls))
    state = tmp_path / "state.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CCRAWL_SEEN_MEM_KEYS": "150", "CCRAWL_HANG_AT": point,
           "CCRAWL_MERGE_STALL_S": "1.5"}
    child = _CHILD.replace("f.state.close()", "import time; t = time.monotonic(); f.state.close()")
    child = child.replace('f.state.put("done", 1)', 'f.state.put("done", 1)\n'
                          'import atexit; atexit.register(lambda: print(f"waited {time.monotonic() - t:.1f}"))')
    started = time.monotonic()
    hung = subprocess.run([sys.executable, "-c", child, str(state), str(seeds)], env=env, capture_output=True,
                          timeout=120)
    err = hung.stderr.decode()
    assert hung.returncode == 1 and "MergeStuck" in err, err[-2000:]
    line = next(x for x in err.splitlines() if x.startswith("ccrawl.crawl.seen.MergeStuck"))
    stage = "writing run-" if point == "seen-merge-writing" else "finishing run-"
    assert "seen set's merge of " in line and " into run-" in line and f"stuck {stage}" in line, line
    assert "has made no progress for " in line and "rerun the same command" in line
    waited = float(hung.stdout.decode().split()[-1])
    assert 1.0 <= waited < 10.0 and time.monotonic() - started < 100  # the deadline, not forever
    env.pop("CCRAWL_HANG_AT")
    subprocess.run([sys.executable, "-c", _CHILD, str(state), str(seeds)], env=env, check=True, timeout=120)
    st = StateFile(state)
    try:
        queued = [u for _, u, _, _ in st.waiting()]
        assert sorted(queued) == sorted({canonicalize(u) for u in urls}) and st.seen.count == len(queued)
        assert not [p for p in st.seen.dir.iterdir() if p.suffix == ".tmp"]
    finally:
        st.close()


def test_segments_folded_from_qnew_into_qidx_are_still_found_in_order(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With qnew folded into qidx every few segments, a host's URLs still come out once each, by depth then
    admission, across folds, and a done segment leaves both tables."""
    import ccrawl.crawl.state as state_mod

    monkeypatch.setattr(state_mod, "QNEW_MAX", 3)
    st = StateFile(tmp_path / "state.db")
    f = Frontier(st, FrontierConfig(host_budget=0, delay=0.0, max_depth=3, flush_every=10_000))
    want: dict[str, list[tuple[int, str]]] = {}
    for batch in range(6):
        for h in range(4):
            for i in range(3):
                url = f"http://h{h}.example/b{batch}/{i}"
                depth = 1 + (batch + i) % 3
                f.add(url, depth)
                want.setdefault(f"h{h}.example", []).append((depth, url))
        f.flush()
    assert st.db.execute("SELECT count(*) FROM qidx").fetchone()[0] > 0
    got: dict[str, list[str]] = {}
    while (item := f.take(now=0.0)) is not None:
        assert not isinstance(item, float)
        got.setdefault(item.host, []).append(item.url)
        f.done(item, started=0.0, file="w.warc.gz")
    f.flush()
    assert got == {h: [u for _, u in sorted(v, key=lambda x: x[0])] for h, v in want.items()}
    assert [st.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("qseg", "qidx", "qnew")] == [0, 0, 0]
    st.close()


@pytest.mark.parametrize("page_keys", [1, 2, 5, 64])
def test_page_search_twin_and_native_agree_with_a_set(page_keys: int) -> None:
    """page_search (compiled when built) and its twin answer "is the key in the page the fences name" the
    same as a set would, at page edges, the run's last partial page, and keys below and above every key."""
    from ccrawl import accel
    from ccrawl.crawl.keys import page_search_py

    gen = np.random.default_rng(page_keys)
    run = unique(gen.integers(0, 2**64, size=1000, dtype=np.uint64))[:997]
    fences = run[::page_keys]
    probe = np.concatenate((run[::3], run - np.uint64(1), run + np.uint64(1),
                            np.array([run[-1] + np.uint64(5), run[0]], dtype=np.uint64)))
    probe = unique(probe[probe >= run[0]])  # a key below the first fence is never searched
    at = (np.searchsorted(fences, probe, side="right").astype(np.int64) - 1) * page_keys
    held = set(run.tolist())
    want = np.array([k in held for k in probe.tolist()])
    native = accel.native("crawlkeys")
    kernels = [page_search_py] + ([native.page_search] if native is not None else [])
    for kernel in kernels:
        assert np.array_equal(kernel(run, at, probe, page_keys), want), kernel
        with pytest.raises(IndexError):
            kernel(run, np.array([len(run)], dtype=np.int64), probe[:1], page_keys)
        with pytest.raises(ValueError):
            kernel(run, at[:1], probe[:2], page_keys)


@pytest.mark.parametrize("gap", [1, 3, 1000])
def test_fence_pages_twin_and_native_agree_with_numpy(gap: int) -> None:
    """fence_pages (compiled when built) and its twin name the same page as numpy's searchsorted for batches
    sparse and dense against the fences, with repeats, keys below the first fence (-1), equal to a fence,
    and above the last; an unsorted batch is refused."""
    from ccrawl import accel
    from ccrawl.crawl.keys import fence_pages_py

    gen = np.random.default_rng(gap)
    fences = unique(gen.integers(1, 2**64 - 2, size=5000, dtype=np.uint64))
    probe = np.sort(np.concatenate((fences[::gap], fences[::gap] + np.uint64(1), fences[::gap] - np.uint64(1),
                                    gen.integers(0, 2**64, size=20_000 // gap, dtype=np.uint64),
                                    np.array([0, fences[0], fences[-1], 2**64 - 1, 2**64 - 1], dtype=np.uint64))))
    want = np.searchsorted(fences, probe, side="right").astype(np.int64) - 1
    assert want[0] == -1 and want[-1] == len(fences) - 1
    native = accel.native("crawlkeys")
    kernels = [fence_pages_py] + ([native.fence_pages] if native is not None else [])
    for kernel in kernels:
        assert np.array_equal(kernel(fences, probe), want), kernel
        assert np.array_equal(kernel(fences[:0], probe[:3]), np.full(3, -1)), kernel
        assert len(kernel(fences, probe[:0])) == 0
        with pytest.raises(ValueError, match="sorted"):
            kernel(fences, probe[::-1].copy())


def test_a_merge_holds_a_window_not_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge's memory is a few windows and the output's fences, not the keys it wrote (its fences were
    views that kept every merged window alive: 8 bytes a key merged, 800 MB at 100M URLs)."""
    import tracemalloc

    from ccrawl.crawl import seen

    monkeypatch.setattr(seen, "WINDOW_KEYS", 1 << 14)
    db = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    db.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    n = 1 << 21
    store = SeenStore(db, tmp_path / "seen", mem_keys=n, background=False)
    gen = np.random.default_rng(9)
    parts = [unique(gen.integers(0, 2**64, size=n, dtype=np.uint64)) for _ in range(2)]
    db.execute("BEGIN")
    store.log(parts[0])
    db.execute("COMMIT")
    store.settle()  # one run, nothing to merge
    db.execute("BEGIN")
    store.log(parts[1])
    db.execute("COMMIT")
    tracemalloc.start()
    try:
        store.settle()  # the second run, then the merge of both (on this thread)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(store.runs) == 1 and store.runs[0].count == len(unique(np.concatenate(parts)))
    assert store.merged_keys == store.runs[0].count and store.spilled_keys == 2 * n
    assert peak < 4 * n, f"the merge held {peak:,} bytes for {2 * n:,} keys merged"  # the output alone is 8 * 2n
    store.close()


def _merge_cases() -> list[list[np.ndarray]]:
    gen = np.random.default_rng(39)
    top = np.uint64(2**64 - 1)
    rand = [np.sort(gen.integers(0, 2**64, size=n, dtype=np.uint64)) for n in (5000, 1200, 300, 7)]
    small = [np.sort(gen.integers(0, 40, size=n, dtype=np.uint64)) for n in (50, 33, 1, 200)]  # many repeats
    edge = np.array([0, 0, 1, 2**63, 2**64 - 2, 2**64 - 1, 2**64 - 1], dtype=np.uint64)
    whole = unique(gen.integers(0, 2**64, size=3000, dtype=np.uint64))
    return [
        [],
        [np.zeros(0, dtype=np.uint64)],
        [np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint64)],
        rand,  # random runs of uneven sizes
        rand[:1],
        rand[:2],
        [whole[0::2], whole[1::2]],  # disjoint, perfectly interleaved
        [whole, whole, whole[::7]],  # overlapping: all of one in the others
        [whole[:2000], whole[1000:]],  # overlapping halves
        [whole[2000:], whole[:1000]],  # disjoint, the later range first
        small,
        [np.full(100, 7, dtype=np.uint64), np.full(3, 7, dtype=np.uint64)],  # all-equal keys
        [np.full(10, top, dtype=np.uint64), np.zeros(10, dtype=np.uint64)],  # 2**64-1 and 0
        [edge, edge[::-1][::-1].copy(), np.array([top], dtype=np.uint64), np.zeros(0, dtype=np.uint64)],
        [np.array([5], dtype=np.uint64)] * 9,
        [np.array([k], dtype=np.uint64) for k in range(20, 0, -1)],  # twenty one-key parts, descending
    ]


@pytest.mark.parametrize("case", range(len(_merge_cases())))
def test_merge_into_twin_and_native_give_the_distinct_keys_in_order(case: int) -> None:
    """merge_into (compiled when built) and its numpy twin write the same sorted distinct keys into a
    preallocated buffer: empty parts, all-equal keys, overlapping and disjoint runs, 0 and 2**64-1."""
    from ccrawl import accel

    parts = _merge_cases()[case]
    want = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)
    native = accel.native("crawlkeys")
    kernels = [merge_into_py] + ([native.merge_into] if native is not None else [])
    total = sum(len(p) for p in parts)
    if parts:  # the numpy merge the twin's sort is
        assert np.array_equal(merge_unique(parts), want)
    for kernel in kernels:
        out = np.full(total + 3, 123, dtype=np.uint64)
        n = kernel(parts, out)
        assert np.array_equal(out[:n], want), kernel
        assert (out[total:] == 123).all()  # nothing written past the room the parts need
        with pytest.raises(ValueError):
            kernel([*parts, np.zeros(4, dtype=np.uint64)], np.zeros(total + 3, dtype=np.uint64))
