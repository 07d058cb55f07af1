"""Compare two runs' CPU profiles role by role: which functions gained or lost share of samples.

Shares, not sample counts, are compared, so runs of different lengths compare fairly. A
function's *self* share counts the samples where it is the leaf; its *total* share counts the
samples where it is anywhere on the stack (once per sample).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ccrawl.jsontypes import Record
from ccrawl.profiling.pprof import parse_collapsed


def shares(path: Path) -> tuple[dict[str, float], dict[str, float], int]:
    """(self share, total share, samples) per function of one collapsed file."""
    self_counts: Counter[str] = Counter()
    total_counts: Counter[str] = Counter()
    samples = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for frames, count in parse_collapsed(fh):
            samples += count
            self_counts[frames[-1]] += count
            for frame in set(frames):
                total_counts[frame] += count
    if samples == 0:
        return {}, {}, 0
    return (
        {k: v / samples for k, v in self_counts.items()},
        {k: v / samples for k, v in total_counts.items()},
        samples,
    )


def _roles(prefix: Path) -> dict[str, Path]:
    out = {}
    for path in prefix.parent.glob(f"{prefix.name}.*.collapsed"):
        out[path.name[len(prefix.name) + 1 : -len(".collapsed")]] = path
    return out


def diff_runs(a: str | Path, b: str | Path, *, top: int = 15) -> Iterator[Record]:
    """Rows (role, function, self_a, self_b, delta, total_a, total_b) for the largest self-share changes."""
    roles_a, roles_b = _roles(Path(a)), _roles(Path(b))
    for role in sorted(set(roles_a) | set(roles_b)):
        self_a, total_a, _ = shares(roles_a[role]) if role in roles_a else ({}, {}, 0)
        self_b, total_b, _ = shares(roles_b[role]) if role in roles_b else ({}, {}, 0)
        funcs = set(self_a) | set(self_b)
        ranked = sorted(funcs, key=lambda f: abs(self_b.get(f, 0.0) - self_a.get(f, 0.0)), reverse=True)
        for func in ranked[:top]:
            yield {
                "role": role,
                "function": func,
                "self_a": round(self_a.get(func, 0.0), 4),
                "self_b": round(self_b.get(func, 0.0), 4),
                "delta": round(self_b.get(func, 0.0) - self_a.get(func, 0.0), 4),
                "total_a": round(total_a.get(func, 0.0), 4),
                "total_b": round(total_b.get(func, 0.0), 4),
            }
