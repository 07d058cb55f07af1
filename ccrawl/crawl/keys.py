"""The frontier's batch kernels: seen keys and hosts of canonical URLs, queue segment bodies.

Each has a compiled twin in ``csrc/crawlkeys.pyx`` (chosen through :func:`ccrawl.accel.native`) with
identical output; the pure-Python functions here are the definition.

* :func:`keys_hosts`: for every canonical URL of a batch, its seen key (the first 8 bytes of blake3 of
  its UTF-8 bytes, read as a little-endian uint64: ``SeenStore``'s key) and its host (what lies between
  ``://`` and the next ``/`` or ``?``), as a numpy ``uint64`` array and a pyarrow string array.
* :func:`fence_pages`: the page of a run each key of a sorted batch would be on, from the run's fences.
* :func:`page_search`: which keys a sorted run holds, each searched in the one page of the run the fences
  named for it (:meth:`ccrawl.crawl.seen._Run.contains`).
* :func:`join_lines`: the body of each queue segment, the lines ``url`` (or ``url<TAB>hops`` for a
  redirect target) of a group of rows joined by newlines.
* :func:`merge_into`: the k-way merge of sorted key arrays into a preallocated one, each distinct key once
  (a window of a seen-set merge, :meth:`ccrawl.crawl.seen.SeenStore._merge_body`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import blake3
import numpy as np
import numpy.typing as npt

from ccrawl import accel

if TYPE_CHECKING:
    import pyarrow as pa

Keys = npt.NDArray[np.uint64]
Index = npt.NDArray[np.int64]


def _rows(urls: object) -> list[str | None]:
    import pyarrow as pa

    if isinstance(urls, pa.Array | pa.ChunkedArray):
        rows: list[str | None] = urls.to_pylist()
        return rows
    assert isinstance(urls, Sequence)
    return list(urls)


def host_of(canonical: str) -> str | None:
    """The host of a canonical URL: after the first ``://``, up to the next ``/`` or ``?``; None without ``://``."""
    at = canonical.find("://")
    if at < 0:
        return None
    rest = canonical[at + 3:]
    end = len(rest)
    for sep in "/?":
        i = rest.find(sep, 0, end)
        if i >= 0:
            end = i
    return rest[:end]


def keys_hosts_py(urls: object, hosts: bool = True) -> tuple[Keys, pa.StringArray | None]:
    """``(keys, hosts)`` of canonical URLs (a pyarrow string array or a sequence of str or None).

    ``keys``: numpy uint64, 0 for a null row; ``hosts``: a pyarrow string array (null for a null row or a
    URL without ``://``), or None when ``hosts`` is false."""
    import pyarrow as pa

    rows = _rows(urls)
    digest = blake3.blake3
    packed = b"".join([b"\0" * 8 if u is None else digest(u.encode("utf-8", "surrogatepass")).digest(length=8)
                       for u in rows])
    keys = np.frombuffer(packed, dtype="<u8").astype(np.uint64)
    if not hosts:
        return keys, None
    return keys, pa.array([None if u is None else host_of(u) for u in rows], pa.string())


def join_lines_py(urls: object, order: Index, bounds: Index, hops: Index) -> list[bytes]:
    """For each group ``g``, rows ``order[bounds[g]:bounds[g + 1]]`` of ``urls`` (no nulls) as lines ``url``,
    or ``url<TAB>hops`` where ``hops[row]`` is not 0, joined by newlines."""
    rows = _rows(urls)
    if len(hops) != len(rows):
        raise ValueError("hops must have one value per row")
    out = []
    hop_list = hops.tolist()
    order_list = order.tolist()
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        lines = []
        for row in order_list[a:b]:
            url = rows[row]
            if url is None:
                raise ValueError("a row out of range or null")
            lines.append(f"{url}\t{hop_list[row]}" if hop_list[row] else url)
        out.append("\n".join(lines).encode("utf-8"))
    return out


def string_array_py(urls: list[str]) -> pa.StringArray:
    """``urls`` as a pyarrow string array."""
    import pyarrow as pa

    return pa.array(urls, pa.string())


def _string_array_native(urls: list[str]) -> pa.StringArray:
    assert _native is not None
    got = _native.as_string_array(urls)
    return string_array_py(urls) if got is None else got  # None: a lone surrogate, which pyarrow refuses too


_native = accel.native("crawlkeys")
keys_hosts: Callable[..., tuple[Keys, pa.StringArray | None]] = (
    _native.keys_hosts if _native is not None else keys_hosts_py)
join_lines: Callable[[object, Index, Index, Index], list[bytes]] = (
    _native.join_lines if _native is not None else join_lines_py)
string_array: Callable[[list[str]], pa.StringArray] = _string_array_native if _native is not None else string_array_py


def pair_keys_py(prefix: bytes, left: list[str], li: Index, right: list[str], ri: Index) -> Keys:
    """The seen keys of ``prefix + left[li[k]] + " " + right[ri[k]]`` for every k (the trap budgets' edges)."""
    if len(li) != len(ri):
        raise ValueError("li and ri must have the same length")
    lb = [s.encode("utf-8", "surrogatepass") for s in left]
    rb = [s.encode("utf-8", "surrogatepass") for s in right]
    digest = blake3.blake3
    packed = b"".join([digest(prefix + lb[a] + b" " + rb[b]).digest(length=8)
                       for a, b in zip(li.tolist(), ri.tolist(), strict=True)])
    return np.frombuffer(packed, dtype="<u8").astype(np.uint64)


pair_keys: Callable[[bytes, list[str], Index, list[str], Index], Keys] = (
    _native.pair_keys if _native is not None else pair_keys_py)


def fence_pages_py(fences: Keys, want: Keys) -> Index:
    """For each key of ``want`` (sorted): the index of the last of the sorted ``fences`` at most the key, -1
    when the key is below the first (the page of a run it would be on)."""
    if len(want) > 1 and bool((want[1:] < want[:-1]).any()):
        raise ValueError("want must be sorted")
    return np.searchsorted(fences, want, side="right").astype(np.int64) - 1


fence_pages: Callable[[Keys, Keys], Index] = _native.fence_pages if _native is not None else fence_pages_py


def page_search_py(keys: Keys, at: Index, want: Keys, page_keys: int) -> npt.NDArray[np.bool_]:
    """For each k: whether ``want[k]`` is among ``keys[at[k] : at[k] + page_keys]``, a page of a sorted run
    whose first key is at most ``want[k]`` (a fence): a binary search in the page, vectorised over the
    keys (a step of one gather each, ``log2(page_keys)`` steps)."""
    if len(at) != len(want):
        raise ValueError("at and want must have the same length")
    if page_keys < 1:
        raise ValueError("page_keys must be at least 1")
    m = len(keys)
    if len(at) and (int(at.min()) < 0 or int(at.max()) >= m):
        raise IndexError("page start out of range")
    lo = np.array(at, dtype=np.int64)
    end = np.minimum(lo + page_keys, m)
    step = 1 << max(0, (page_keys - 1).bit_length() - 1)
    while step:
        nxt = lo + step
        ok = nxt < end
        np.minimum(nxt, m - 1, out=nxt)
        ok &= keys[nxt] <= want
        np.copyto(lo, nxt, where=ok)
        step //= 2
    found: npt.NDArray[np.bool_] = keys[lo] == want
    return found


page_search: Callable[[Keys, Index, Keys, int], npt.NDArray[np.bool_]] = (
    _native.page_search if _native is not None else page_search_py)


def merge_into_py(parts: list[Keys], out: Keys, scratch: Keys | None = None) -> int:
    """Merge the sorted uint64 arrays ``parts`` into ``out`` (room for all their keys), each distinct key once,
    in order; returns the keys written. A concatenation sorted stably (numpy's timsort finds the sorted
    parts: a merge) and one comparison pass dropping repeats. ``scratch`` is the compiled merge's spare
    buffer (unused here)."""
    views = [np.asarray(p, dtype=np.uint64) for p in parts]
    total = sum(len(v) for v in views)
    if total > len(out):
        raise ValueError(f"out holds {len(out)} keys, the parts {total}")
    if not total:
        return 0
    whole = out[:total]
    np.concatenate(views, out=whole)
    whole.sort(kind="stable")
    if total == 1:
        return 1
    keep = np.empty(total, dtype=bool)
    keep[0] = True
    np.not_equal(whole[1:], whole[:-1], out=keep[1:])
    if keep.all():
        return total
    n = int(keep.sum())
    out[:n] = whole[keep]  # the selection is a copy: no overlap with what it overwrites
    return n


merge_into: Callable[[list[Keys], Keys, Keys | None], int] = (
    _native.merge_into if _native is not None else merge_into_py)
