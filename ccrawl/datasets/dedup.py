"""Exact and near duplicate documents in a Markdown Parquet dataset (``ccrawl dedup``); reads, never writes.

**Exact** clusters are documents with identical Markdown. Two such documents have the same
``markdown_length`` and the same ``simhash`` (the fingerprint is a function of the Markdown), so
those two cheap columns pick the candidates and the Markdown itself is read only for the row
groups holding a candidate, and hashed (BLAKE2b-128) only for candidates.

**Near** clusters come from the ``simhash`` column: two documents are near duplicates when their
fingerprints differ in at most ``distance`` bits, and a cluster is a connected component of that
relation (so clusters chain: A~B and B~C put A and C together). One representative per exact
cluster takes part, and documents under 512 bytes (no fingerprint) are left out, since 64 bits
over that little text are decided by noise.

The near search is **exact for the chosen distance**, not a heuristic. The 64 bits are cut into
``m > distance`` bands; by the pigeonhole principle two fingerprints at most ``distance`` bits apart
agree exactly on at least ``m - distance`` bands (``distance`` differing bits touch at most
``distance`` bands). One pass per ``(m - distance)``-subset of bands sorts the distinct fingerprints
by those bits and compares every pair inside a run of equal keys in full (numpy,
``bitwise_count``), so every pair within the distance is found, and only those are kept. ``m`` is
picked by a cost model (:func:`plan_masks`): for a million fingerprints, ``distance`` 3 takes 10
passes (two of five bands agree) and ``distance`` 6 takes 84 (three of nine), because one pass per
band of 9 bits would compare a thousand times more pairs.

A file written before the ``simhash`` column existed is fingerprinted on the fly from its Markdown
(with :func:`ccrawl.extract.simhash.simhash_or_none`, the function the export uses).

Memory: for ``n`` rows about 60 bytes each (length, fingerprint, row ids and the sort arrays of one
band at a time), plus the Markdown of one row group while candidates are hashed, plus the pairs
found: 1,000,000 rows take about 100 MB.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccrawl.errors import InputError, NothingMatched, UsageError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow.parquet as pq
    from numpy.typing import ArrayLike, NDArray
from ccrawl.extract.simhash import MIN_BYTES

#: Columns the report reads (``url`` only for the rows the ``--top`` listing names).
COLUMNS = ("markdown_length", "simhash", "markdown")


@dataclass(slots=True)
class Cluster:
    """One cluster of duplicates: its kind, its members (global row numbers) and their bytes."""

    kind: str
    rows: list[int]
    bytes: int
    urls: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.rows)


@dataclass(slots=True)
class DedupReport:
    """What ``ccrawl dedup`` prints."""

    rows: int
    files: int
    distance: int
    exact_duplicates: int = 0
    exact_clusters: int = 0
    exact_bytes: int = 0
    near_duplicates: int = 0
    near_clusters: int = 0
    near_bytes: int = 0
    no_fingerprint: int = 0
    fingerprinted: int = 0
    top: list[Cluster] = field(default_factory=list)

    @property
    def redundant(self) -> int:
        return self.exact_duplicates + self.near_duplicates

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "files": self.files,
            "distance": self.distance,
            "exact": {"duplicates": self.exact_duplicates, "clusters": self.exact_clusters, "bytes": self.exact_bytes},
            "near": {"duplicates": self.near_duplicates, "clusters": self.near_clusters, "bytes": self.near_bytes},
            "redundant": self.redundant,
            "redundant_share": round(self.redundant / self.rows, 6) if self.rows else 0.0,
            "no_fingerprint": self.no_fingerprint,
            "fingerprinted_on_the_fly": self.fingerprinted,
            "clusters": [{"kind": c.kind, "size": c.size, "bytes": c.bytes, "urls": c.urls} for c in self.top],
        }


def parquet_files(paths: Sequence[str | Path]) -> list[Path]:
    """The Parquet files named, directories searched recursively (hidden entries skipped), sorted."""
    out: list[Path] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.parquet")
                           if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"{given}: no such file or directory")
    if not out:
        raise NothingMatched(f"no Parquet files under {', '.join(str(p) for p in paths)}")
    return list(dict.fromkeys(out))


# -- the near pass -----------------------------------------------------------------------------------


def bands(count: int) -> list[tuple[int, int]]:
    """``count`` (shift, width) bands covering the 64 bits, widths differing by at most one."""
    base, extra = divmod(64, count)
    out, shift = [], 0
    for i in range(count):
        width = base + (1 if i < extra else 0)
        out.append((shift, width))
        shift += width
    return out


#: Cost of sorting one fingerprint in a pass, in units of one pair comparison (measured here: 0.5 us
#: a fingerprint to sort, 0.2 us a pair to compare through numpy fancy indexing).
_SORT_COST = 2.5


def plan_masks(n: int, distance: int) -> list[int]:
    """The bit masks of the passes: two fingerprints within ``distance`` agree on all of one mask.

    With ``m`` bands, ``distance`` differing bits spoil at most ``distance`` of them, so at least
    ``m - distance`` bands agree (pigeonhole), and some ``(m - distance)``-subset of bands agrees in
    full: one pass per subset finds every pair. ``m = distance + 1`` is the classic one pass per
    band; a larger ``m`` means more passes with longer keys and far fewer chance collisions, which
    wins once the distance is past a few bits. The ``m`` with the least expected work for ``n``
    random fingerprints is chosen; the answer is the same whatever ``m`` is.
    """
    from itertools import combinations
    from math import comb

    best: tuple[float, int] | None = None
    for m in range(distance + 1, min(64, distance + 8) + 1):
        need = m - distance
        passes = comb(m, need)
        if passes > 4096:
            break
        bits = need * 64 / m
        cost = passes * (_SORT_COST * n + n * n / 2 ** (bits + 1))
        if best is None or cost < best[0]:
            best = (cost, m)
    # One pass with an empty mask compares every pair once: the cheapest plan for a wide distance.
    if best is None or best[0] >= _SORT_COST * n + n * n / 2:
        return [0]
    m = best[1]
    band_masks = [((1 << width) - 1) << shift for shift, width in bands(m)]
    return [sum(band_masks[i] for i in chosen) for chosen in combinations(range(m), m - distance)]


def near_pairs(fps: ArrayLike, distance: int) -> NDArray[np.int64]:
    """Every pair ``(i, j)``, ``i < j``, of ``fps`` (distinct uint64) at most ``distance`` bits apart.

    Complete by the pigeonhole argument of :func:`plan_masks`; returns a sorted ``(k, 2)`` int64 array.
    """
    import numpy as np

    prints = np.asarray(fps, dtype=np.uint64)
    found: list[NDArray[np.int64]] = []
    if len(prints) < 2:
        return np.empty((0, 2), dtype=np.int64)
    for mask in plan_masks(len(prints), distance):
        key = prints & np.uint64(mask)
        order = np.argsort(key, kind="stable")
        skey = key[order]
        # Positions whose run of equal keys goes on at least k places further (k = 1, 2, ...).
        active = np.nonzero(skey[:-1] == skey[1:])[0]
        k = 1
        while active.size:
            a, b = order[active], order[active + k]
            close = np.bitwise_count(prints[a] ^ prints[b]) <= distance
            if close.any():
                found.append(np.stack([np.minimum(a[close], b[close]), np.maximum(a[close], b[close])], axis=1))
            k += 1
            active = active[active + k < len(skey)]
            active = active[skey[active] == skey[active + k]]
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found).astype(np.int64), axis=0)


def components(n: int, pairs: NDArray[np.int64]) -> NDArray[np.int64]:
    """Connected-component label of each of ``n`` nodes given edge ``pairs`` (union-find, path halving)."""
    import numpy as np

    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in pairs.tolist():
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    return np.fromiter((find(i) for i in range(n)), dtype=np.int64, count=n)


# -- reading ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _File:
    path: Path
    first_row: int
    rows: int
    group_starts: list[int]
    has_simhash: bool


def _open(path: Path) -> pq.ParquetFile:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None


def _lengths_and_fingerprints(
    files: list[Path],
) -> tuple[list[_File], NDArray[np.int64], tuple[NDArray[np.int64], NDArray[np.bool_]], int]:
    """Per row: Markdown bytes and fingerprint (0 with a separate null mask); files fingerprinted on the fly."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ccrawl.extract.simhash import simhash_or_none, utf8_length

    metas: list[_File] = []
    lengths: list[NDArray[np.int64]] = []
    sims: list[NDArray[np.int64]] = []
    valid: list[NDArray[np.bool_]] = []
    first = 0
    fingerprinted = 0
    for path in files:
        pf = _open(path)
        names = set(pf.schema_arrow.names)
        if "markdown" not in names:
            raise InputError(f"{path}: no markdown column; is this a dataset markdown export or refetch wrote?")
        kind = pf.schema_arrow.field("markdown").type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
            raise InputError(f"{path}: the markdown column holds {kind}, not text; is this a dataset markdown export "
                             "or refetch wrote?")
        md = pf.metadata
        starts, at = [], 0
        for g in range(md.num_row_groups):
            starts.append(at)
            at += md.row_group(g).num_rows
        has = "simhash" in names and "markdown_length" in names
        metas.append(_File(path, first, md.num_rows, starts, has))
        first += md.num_rows
        if has:
            table = pf.read(columns=["markdown_length", "simhash"])
            lengths.append(table["markdown_length"].to_numpy(zero_copy_only=False).astype(np.int64))
            col = table["simhash"]
            valid.append(pc.is_valid(col).to_numpy(zero_copy_only=False))
            sims.append(pc.fill_null(col, 0).to_numpy(zero_copy_only=False).astype(np.int64))
            continue
        for batch in pf.iter_batches(columns=["markdown"], batch_size=4096):
            texts = batch.column(0).to_pylist()
            fps = [simhash_or_none(t or "") for t in texts]
            fingerprinted += len(texts)
            lengths.append(np.fromiter((utf8_length(t or "") for t in texts), dtype=np.int64, count=len(texts)))
            valid.append(np.fromiter((f is not None for f in fps), dtype=bool, count=len(texts)))
            sims.append(np.fromiter((f or 0 for f in fps), dtype=np.int64, count=len(texts)))
    if not lengths:
        empty = np.empty(0, dtype=np.int64)
        return metas, empty, (empty, np.empty(0, dtype=bool)), fingerprinted
    return metas, np.concatenate(lengths), (np.concatenate(sims), np.concatenate(valid)), fingerprinted


def _read_column(metas: list[_File], wanted: ArrayLike, column: str) -> dict[int, object]:
    """``column`` of the given global rows, reading only the row groups that hold one."""
    import numpy as np

    out: dict[int, object] = {}
    rows = np.sort(np.asarray(wanted, dtype=np.int64))
    for meta in metas:
        lo, hi = np.searchsorted(rows, [meta.first_row, meta.first_row + meta.rows])
        mine = rows[lo:hi] - meta.first_row
        if not mine.size:
            continue
        pf = _open(meta.path)
        if column not in pf.schema_arrow.names:
            continue
        bounds = [*meta.group_starts, meta.rows]
        groups = sorted(set(np.searchsorted(bounds, mine, side="right").tolist()))
        for g1 in groups:
            g = g1 - 1
            values = pf.read_row_group(g, columns=[column]).column(0)
            start = bounds[g]
            for r in mine[(mine >= start) & (mine < bounds[g + 1])].tolist():
                out[meta.first_row + r] = values[r - start].as_py()
    return out


def _digest(text: str | None) -> bytes:
    return hashlib.blake2b((text or "").encode("utf-8", "surrogatepass"), digest_size=16).digest()


# -- the report ------------------------------------------------------------------------------------


def _runs_of(order: NDArray[np.intp], change: NDArray[np.bool_]) -> list[NDArray[np.intp]]:
    """Index arrays of the runs of ``order`` two long or more; ``change[i]`` is True where a run ends
    between sorted positions ``i`` and ``i + 1``."""
    import numpy as np

    if not len(order):
        return []
    starts = np.flatnonzero(np.concatenate([[True], change]))
    sizes = np.diff(np.concatenate([starts, [len(order)]]))
    multi = sizes > 1
    if not multi.any():
        return []
    selected = order[np.repeat(multi, sizes)]
    return np.split(selected, np.cumsum(sizes[multi])[:-1])


def _groups_of(*keys: NDArray[np.generic]) -> list[NDArray[np.intp]]:
    """Index arrays of the rows sharing every key, for key tuples held by two rows or more."""
    import numpy as np

    order = np.lexsort(keys[::-1])
    change = np.zeros(max(len(order) - 1, 0), dtype=bool)
    for key in keys:
        sk = key[order]
        change |= sk[1:] != sk[:-1]
    return _runs_of(order, change)


def dedup_report(paths: Sequence[str | Path], *, distance: int = 3, top: int = 10) -> DedupReport:
    """The duplicate report of the Parquet files (or directories) ``paths``."""
    import numpy as np

    if not 0 <= distance <= 64:
        raise UsageError(f"--distance {distance}: give 0 to 64 bits")
    if top < 0:
        raise UsageError(f"--top {top}: give 0 or more")
    files = parquet_files(paths)
    metas, lengths, (sims, valid), fingerprinted = _lengths_and_fingerprints(files)
    n = len(lengths)
    report = DedupReport(rows=n, files=len(files), distance=distance, fingerprinted=fingerprinted)
    rep_of = np.arange(n, dtype=np.int64)  # each row's exact-cluster representative (itself when unique)
    clusters: list[Cluster] = []

    # Exact: same length and fingerprint first (cheap), then the Markdown's digest.
    if n:
        candidates = _groups_of(lengths, np.where(valid, sims, np.int64(-1)), valid)
        if candidates:
            cand_rows = np.concatenate(candidates)
            texts = _read_column(metas, cand_rows, "markdown")
            for group in candidates:
                by_digest: dict[bytes, list[int]] = {}
                for r in group.tolist():
                    text = texts.get(r)
                    by_digest.setdefault(_digest(text if isinstance(text, str) else None), []).append(r)
                for members in by_digest.values():
                    if len(members) < 2:
                        continue
                    members.sort()
                    rep_of[members] = members[0]
                    size = int(lengths[members[0]])
                    clusters.append(Cluster("exact", members, size * (len(members) - 1)))
                    report.exact_clusters += 1
                    report.exact_duplicates += len(members) - 1
                    report.exact_bytes += size * (len(members) - 1)

    # Near: representatives with a fingerprint over 512 bytes, distinct fingerprints compared by band.
    eligible = valid & (lengths >= MIN_BYTES)
    report.no_fingerprint = int(n - eligible.sum())
    reps = np.nonzero(eligible & (rep_of == np.arange(n)))[0]
    if reps.size > 1:
        fps = sims[reps].view(np.uint64)
        uniq, inverse = np.unique(fps, return_inverse=True)
        labels = components(len(uniq), near_pairs(uniq, distance))[inverse.ravel()]
        for group in _groups_of(labels):
            members = sorted(reps[group].tolist())
            extra = int(lengths[members[1:]].sum())
            clusters.append(Cluster("near", members, extra))
            report.near_clusters += 1
            report.near_duplicates += len(members) - 1
            report.near_bytes += extra

    if top and clusters:
        clusters.sort(key=lambda c: (-c.size, -c.bytes, c.rows[0]))
        report.top = clusters[:top]
        wanted = [r for c in report.top for r in c.rows[:3]]
        urls = _read_column(metas, wanted, "url")
        for c in report.top:
            c.urls = [str(urls[r]) for r in c.rows[:3] if urls.get(r) is not None]
    return report


def render_text(report: DedupReport | Mapping[str, Any]) -> str:
    """The table the seed prints, from the report or its :meth:`DedupReport.as_dict` (the operation's record)."""
    from ccrawl.output import format_size

    def kb(n: int) -> str:
        return format_size(n, step=1000, units=("B", "kB", "MB", "GB", "TB"))

    d = report.as_dict() if isinstance(report, DedupReport) else report
    exact, near, rows = d["exact"], d["near"], d["rows"]
    share = 100.0 * d["redundant"] / rows if rows else 0.0
    lines = [
        f"{rows:,} rows in {d['files']} files",
        f"  exact duplicates {exact['duplicates']:>12,} in {exact['clusters']:,} clusters, "
        f"{kb(exact['bytes'])}",
        f"  near duplicates  {near['duplicates']:>12,} in {near['clusters']:,} clusters, "
        f"{kb(near['bytes'])}  (distance <= {d['distance']})",
        f"  redundant        {d['redundant']:>12,}  ({share:.1f}% of rows)",
        f"  no fingerprint   {d['no_fingerprint']:>12,}  (too short to hash, left alone)",
    ]
    if d["fingerprinted_on_the_fly"]:
        lines.append(f"  fingerprinted    {d['fingerprinted_on_the_fly']:>12,}  (files without a simhash column)")
    if d["clusters"]:
        lines.append("")
        lines.append("largest clusters")
        for c in d["clusters"]:
            lines.append(f"  {c['kind']:<5} {c['size']:>6,} docs {kb(c['bytes']):>10}  {' '.join(c['urls'])}")
    return "\n".join(lines) + "\n"


def brute_force_pairs(fps: Iterable[int], distance: int) -> set[tuple[int, int]]:
    """Every pair within ``distance``, by comparing all of them (the reference the tests and bench use)."""
    import numpy as np

    arr = np.asarray([f & 0xFFFF_FFFF_FFFF_FFFF for f in fps], dtype=np.uint64)
    out: set[tuple[int, int]] = set()
    step = 512
    for lo in range(0, len(arr), step):
        block = arr[lo : lo + step]
        dist = np.bitwise_count(block[:, None] ^ arr[None, :])
        ii, jj = np.nonzero(dist <= distance)
        for i, j in zip((ii + lo).tolist(), jj.tolist(), strict=True):
            if i < j:
                out.add((i, j))
    return out
