"""The seen set's in-memory hash set (ccrawl.crawl.seenmem): compiled kernels against their twins, and the
store's checks through it across spills and a reopen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ccrawl import accel
from ccrawl.crawl import seenmem
from ccrawl.crawl.seen import SeenStore

native = accel.native("seenmem")
needs_native = pytest.mark.skipif(native is None, reason="the compiled seenmem module is not built (or disabled)")


def _batches(seed: int) -> list[np.ndarray]:
    """Key batches of three kinds: uniform 64-bit, small integers (one home region, long probe chains),
    and keys whose low bits are equal (a hash on the low bits would put them all in one slot); 0 in some."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2**64 - 1, size=300, dtype=np.uint64, endpoint=True),
            rng.integers(0, 40, size=300, dtype=np.uint64),
            (rng.integers(0, 1 << 20, size=300, dtype=np.uint64) << np.uint64(40)),
            np.array([0, 0, 5, 5, 2**64 - 1, 2**64 - 1], dtype=np.uint64)]


@needs_native
@pytest.mark.parametrize("seed", range(6))
def test_compiled_kernels_agree_with_the_twins(seed: int) -> None:
    assert native is not None
    rng = np.random.default_rng(100 + seed)
    for keys in _batches(seed):
        size = 1 << int(rng.integers(10, 12))  # at least twice the batch: the callers' bound
        a = np.zeros(size, dtype=np.uint64)
        b = np.zeros(size, dtype=np.uint64)
        added_py = seenmem.set_add_py(a, keys)
        added_c = native.set_add(b, keys)
        want = {int(k) for k in keys.tolist() if k}
        assert added_py == added_c == len(want)
        assert {int(k) for k in a[a != 0].tolist()} == want == {int(k) for k in b[b != 0].tolist()}
        probe = np.concatenate((keys, rng.integers(0, 2**64 - 1, size=200, dtype=np.uint64, endpoint=True),
                                np.arange(60, dtype=np.uint64)))
        expect = np.array([int(k) in want for k in probe.tolist()])
        for table in (a, b):  # each table read by both lookups (their layouts may differ, never the answers)
            assert (seenmem.set_has_py(table, probe) == expect).all()
            assert (native.set_has(table, probe) == expect).all()


def test_table_lengths_are_checked() -> None:
    for fn in [seenmem.set_add_py, seenmem.set_has_py] + ([native.set_add, native.set_has] if native else []):
        with pytest.raises(ValueError, match="power of two"):
            fn(np.zeros(12, dtype=np.uint64), np.array([1], dtype=np.uint64))


def test_keyset_grows_and_answers_like_a_set() -> None:
    rng = np.random.default_rng(7)
    held = seenmem.KeySet()
    want: set[int] = set()
    for step in range(60):
        keys = rng.integers(0, 2**64 - 1 if step % 3 else 5000, size=int(rng.integers(1, 2000)), dtype=np.uint64)
        before = len(want)
        want |= {int(k) for k in keys.tolist()}
        assert held.add(keys) == len(want) - before
        assert len(held) == len(want)
        assert len(held.table) * 5 >= len(held) * 8  # at most 5/8 full
        probe = np.concatenate((keys[:50], rng.integers(0, 5000, size=100, dtype=np.uint64), np.zeros(1, np.uint64)))
        assert (held.has(probe) == np.array([int(k) in want for k in probe.tolist()])).all()


def _store(tmp_path: Path, db: sqlite3.Connection, mem_keys: int) -> SeenStore:
    return SeenStore(db, tmp_path / "seen", mem_keys=mem_keys, background=False)


def test_store_checks_through_spills_and_a_reopen(tmp_path: Path) -> None:
    """Keys logged stay seen across spills (the hash set is rebuilt from what memory holds after each) and a
    reopen (the set rebuilt from the log); a repeat inside a batch is new once, the first of its value."""
    db = sqlite3.connect(str(tmp_path / "s.db"), isolation_level=None)
    db.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
    store = _store(tmp_path, db, 700)
    rng = np.random.default_rng(3)
    want: set[int] = set()
    spills = 0
    for _ in range(40):
        old = np.array(sorted(want), dtype=np.uint64)
        keys = np.concatenate((rng.integers(1, 2**63, size=150, dtype=np.uint64),
                               old[rng.integers(0, len(old), size=min(len(old), 100))] if len(old) else old))
        keys = np.concatenate((keys, keys[:10]))  # repeats in the batch
        new = store.check(keys)
        seen_in_batch: set[int] = set()
        expect = []
        for k in keys.tolist():
            expect.append(k not in want and k not in seen_in_batch)
            seen_in_batch.add(k)
        assert new.tolist() == expect
        db.execute("BEGIN")
        store.log(keys[new])
        db.execute("COMMIT")
        want |= {int(k) for k in keys[new].tolist()}
        runs = len(store.runs)
        store.settle()
        spills += len(store.runs) != runs or store._mem_count == 0
        assert store.count == len(want)
    assert spills >= 3
    store.close()
    again = _store(tmp_path, db, 700)
    probe = np.concatenate((np.array(sorted(want), dtype=np.uint64), rng.integers(1, 2**63, size=500, dtype=np.uint64)))
    assert (~again.check(probe)).tolist() == [int(k) in want for k in probe.tolist()]
    again.close()
