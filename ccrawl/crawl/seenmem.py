"""The seen set's in-memory keys as a hash set: a membership test that reads one cache line group a key.

:class:`ccrawl.crawl.seen.SeenStore` keeps the keys admitted since its last spill as sorted arrays (what a
spill writes as a run) and, beside them, this set, which answers its checks: a flush's ~800 keys
binary-searched in a few sorted arrays of up to 4M keys paid ~20 dependent cache misses a key per
array, growing with the keys held (bench/README.md, "`crawl run` as its seen set grows"); here a key
costs its home slot's line and, rarely, the next.

The table is a numpy ``uint64`` array whose length is a power of two, 0 marking an empty slot (the key
0 is kept apart in a flag). A key's home slot is the top bits of ``key * 0x9E3779B97F4A7C15``
(Fibonacci hashing, so keys that are not uniform, such as a test's small integers, still spread), and a
key sits at the first empty slot from its home on (linear probing). :class:`KeySet` doubles the table
before it is more than 5/8 full: at most 16 bytes a key (64 MB for the 4M keys of ``MEM_KEYS``).

:func:`set_add` and :func:`set_has` have compiled twins in ``csrc/seenmem.pyx`` (chosen through
:func:`ccrawl.accel.native`); the functions here are the definition. The compiled ``set_add`` inserts
key by key and this one a batch at a time, so a table's slots may be laid out differently, but every
answer of :func:`set_has` and every count is the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ccrawl import accel

Keys = npt.NDArray[np.uint64]

MUL = np.uint64(0x9E3779B97F4A7C15)
MIN_SLOTS = 1 << 12
"""Slots of an empty set's table (32 KB)."""


def _shift(size: int) -> int:
    if size < 2 or size & (size - 1):
        raise ValueError("the table's length must be a power of two, at least 2")
    return 64 - (size.bit_length() - 1)


def _home(keys: Keys, shift: int) -> npt.NDArray[np.int64]:
    return (np.multiply(keys, MUL) >> np.uint64(shift)).astype(np.int64)


def set_add_py(table: Keys, keys: Keys) -> int:
    """Insert ``keys`` into ``table`` (0 skipped, a key held already skipped); returns the count inserted.

    A batch at a time: every key still looking reads its current slot; a key that finds itself is done;
    of the keys that find the same empty slot the first in the batch takes it, the others look at it
    again (a repeat of the winner then finds itself); a key that finds another key moves one slot on.
    The caller keeps the table at most 5/8 full."""
    size = len(table)
    mask = size - 1
    k = np.ascontiguousarray(keys, dtype=np.uint64)
    k = k[k != 0]
    slot = _home(k, _shift(size))
    added = 0
    while len(k):
        v = table[slot]
        done = v == k
        empty = np.flatnonzero(v == 0)
        if len(empty):
            order = np.argsort(slot[empty], kind="stable")  # batch order within a slot: the first wins
            at = slot[empty][order]
            first = np.ones(len(at), dtype=bool)
            np.not_equal(at[1:], at[:-1], out=first[1:])
            win = empty[order[first]]
            table[slot[win]] = k[win]
            added += len(win)
            done[win] = True
        move = (v != 0) & ~done  # a slot taken by another key: the next one
        slot[move] = (slot[move] + 1) & mask
        keep = ~done
        k, slot = k[keep], slot[keep]
    return added


def set_has_py(table: Keys, keys: Keys) -> npt.NDArray[np.bool_]:
    """For each of ``keys``: whether ``table`` holds it (0 never: the caller answers for it)."""
    size = len(table)
    mask = size - 1
    k = np.ascontiguousarray(keys, dtype=np.uint64)
    out = np.zeros(len(k), dtype=bool)
    idx = np.flatnonzero(k != 0)
    slot = _home(k[idx], _shift(size))
    while len(idx):
        v = table[slot]
        hit = v == k[idx]
        out[idx[hit]] = True
        go = (v != 0) & ~hit
        idx, slot = idx[go], (slot[go] + 1) & mask
    return out


_native = accel.native("seenmem")
set_add: Callable[[Keys, Keys], int] = _native.set_add if _native is not None else set_add_py
set_has: Callable[[Keys, Keys], npt.NDArray[np.bool_]] = _native.set_has if _native is not None else set_has_py


class KeySet:
    """A growing hash set of ``uint64`` keys (see the module docstring)."""

    def __init__(self) -> None:
        self.table: Keys = np.zeros(MIN_SLOTS, dtype=np.uint64)
        self.count = 0
        self.zero = False

    def __len__(self) -> int:
        return self.count

    def add(self, keys: Keys) -> int:
        """Insert ``keys`` (repeats and keys held already are skipped); returns how many were new."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if (self.count + len(keys)) * 8 > len(self.table) * 5:
            self._grow(self.count + len(keys))
        added = int(set_add(self.table, keys))
        if not self.zero and len(keys) and not keys.all():
            self.zero = True
            added += 1
        self.count += added
        return added

    def has(self, keys: Keys) -> npt.NDArray[np.bool_]:
        """For each of ``keys``: whether the set holds it."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        out = set_has(self.table, keys)
        if self.zero:
            out |= keys == 0
        return out

    def _grow(self, need: int) -> None:
        size = len(self.table)
        while need * 8 > size * 5:
            size *= 2
        old = self.table[self.table != 0]
        self.table = np.zeros(size, dtype=np.uint64)
        set_add(self.table, old)
