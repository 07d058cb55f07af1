"""``--shard auto``: this task's shard index and count, read from the environment its engine sets.

One function, :func:`resolve_shard`, serves every command that takes ``--shard/--shards``. Engines, in the
order they are looked for (the first whose index variable is set wins):

- Slurm job arrays: ``SLURM_ARRAY_TASK_ID`` offset by ``SLURM_ARRAY_TASK_MIN`` (``--array=1-8`` gives
  shards 0..7), count ``SLURM_ARRAY_TASK_COUNT``. A stepped array (``--array=0-15:2``) has ids that are not
  consecutive, so ``id - min`` would leave holes: that is refused.
- Kubernetes Indexed Jobs: ``JOB_COMPLETION_INDEX``; the Job does not export its completions count, so
  ``--shards`` gives the count and must be given.
- Generic ranks (torchrun, MPI launchers, Ray's and others' wrappers): ``RANK`` and ``WORLD_SIZE``.

An explicit ``--shards`` must agree with the engine's count. No engine, a disagreement, or a malformed
variable is a :class:`~ccrawl.errors.UsageError` (exit 2) naming the variables looked at.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ccrawl.errors import UsageError

#: What ``--shard auto`` reads, in order, for the error that says none was found.
LOOKED_FOR = ("SLURM_ARRAY_TASK_ID (+ SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN)",
              "JOB_COMPLETION_INDEX (+ --shards)", "RANK (+ WORLD_SIZE)")


@dataclass(frozen=True, slots=True)
class ShardAssignment:
    """This task's slice of the work: ``index`` of ``count``, and where the two numbers came from."""

    index: int
    count: int
    source: str
    """``flag`` for ``--shard I``, else the engine: ``slurm``, ``kubernetes`` or ``rank``."""
    detail: str = ""
    """The variables read, e.g. ``SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=8``."""

    def describe(self) -> str:
        """One phrase for summaries: ``shard 3 of 8 (from slurm: SLURM_ARRAY_TASK_ID=4 ...)``."""
        where = f"from {self.source}" + (f": {self.detail}" if self.detail else "")
        return f"shard {self.index} of {self.count} ({where})"

    def as_dict(self) -> dict[str, object]:
        return {"shard": self.index, "shards": self.count, "shard_source": self.source,
                "shard_detail": self.detail}


def _int(env: Mapping[str, str], name: str) -> int:
    raw = env[name].strip()
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(f"--shard auto: {name}={env[name]!r} is not a whole number") from None
    if value < 0:
        raise UsageError(f"--shard auto: {name}={value} is negative")
    return value


def _slurm(env: Mapping[str, str]) -> tuple[int, int | None, str]:
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    low = _int(env, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in env else 0
    step = _int(env, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in env else 1
    if step != 1:
        raise UsageError(f"--shard auto: SLURM_ARRAY_TASK_STEP={step}: a stepped array leaves holes between "
                         "shards; submit --array=LOW-HIGH with step 1")
    if task < low:
        raise UsageError(f"--shard auto: SLURM_ARRAY_TASK_ID={task} is below SLURM_ARRAY_TASK_MIN={low}")
    count = _int(env, "SLURM_ARRAY_TASK_COUNT") if "SLURM_ARRAY_TASK_COUNT" in env else None
    detail = f"SLURM_ARRAY_TASK_ID={task} SLURM_ARRAY_TASK_MIN={low}"
    if count is not None:
        detail += f" SLURM_ARRAY_TASK_COUNT={count}"
        if "SLURM_ARRAY_TASK_MAX" in env:
            high = _int(env, "SLURM_ARRAY_TASK_MAX")
            if high - low + 1 != count:
                # --array=0,3,7 or 0-9,20-29: ids are not LOW..LOW+COUNT-1, so id - min is no shard index
                raise UsageError(f"--shard auto: the array's ids are not consecutive (MIN={low} MAX={high} "
                                 f"COUNT={count}); submit --array=LOW-HIGH")
    return task - low, count, detail


def resolve_shard(shard: str, shards: int | None, env: Mapping[str, str] | None = None) -> ShardAssignment:
    """``--shard`` (an index or ``auto``) and ``--shards`` (None when not given) as one assignment.

    ``--shard I`` keeps today's meaning (``--shards`` defaults to 1). ``--shard auto`` reads the engine's
    variables from ``env`` (default :data:`os.environ`).
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    text = str(shard).strip().lower()
    if text != "auto":
        try:
            index = int(text)
        except ValueError:
            raise UsageError(f"--shard {shard!r}: give a 0-based index or auto") from None
        count = 1 if shards is None else shards
        _check(index, count, "--shard", "--shards")
        return ShardAssignment(index, count, "flag")
    if "SLURM_ARRAY_TASK_ID" in environ:
        index, engine_count, detail = _slurm(environ)
        source = "slurm"
        count_name = "SLURM_ARRAY_TASK_COUNT"
    elif "JOB_COMPLETION_INDEX" in environ:
        index = _int(environ, "JOB_COMPLETION_INDEX")
        engine_count, source, count_name = None, "kubernetes", ""
        detail = f"JOB_COMPLETION_INDEX={index}"
        if shards is None:
            raise UsageError("--shard auto: JOB_COMPLETION_INDEX is set but a Kubernetes Job does not export its "
                             "completions; give --shards equal to the Job's spec.completions")
    elif "RANK" in environ:
        index = _int(environ, "RANK")
        if "WORLD_SIZE" not in environ:
            raise UsageError("--shard auto: RANK is set but WORLD_SIZE is not; set both")
        engine_count = _int(environ, "WORLD_SIZE")
        source, count_name = "rank", "WORLD_SIZE"
        detail = f"RANK={index} WORLD_SIZE={engine_count}"
    else:
        raise UsageError("--shard auto: no engine found in the environment; looked for "
                         + ", ".join(LOOKED_FOR) + " (or give --shard I --shards N)")
    if engine_count is not None and shards is not None and shards != engine_count:
        raise UsageError(f"--shard auto: --shards {shards} disagrees with {count_name}={engine_count} "
                         f"from {source}; drop --shards or make them equal")
    total = engine_count if engine_count is not None else shards
    if total is None:
        raise UsageError(f"--shard auto: {source} gave no count of tasks ({detail}); give --shards N")
    _check(index, total, f"--shard auto ({detail})", "count")
    return ShardAssignment(index, total, source, detail)


def _check(index: int, count: int, what: str, count_what: str) -> None:
    if count < 1:
        raise UsageError(f"{count_what} must be at least 1, not {count}")
    if not 0 <= index < count:
        raise UsageError(f"{what}: shard {index} is outside 0..{count - 1} for {count} shards")


def take(items: list[int], assignment: ShardAssignment) -> list[int]:
    """This task's share of ``items``: every ``count``-th one from ``index`` (round robin, so equal shares)."""
    return items[assignment.index :: assignment.count]
