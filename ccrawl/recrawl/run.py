"""``run_recrawl``: the library entry point of ``ccrawl recrawl run``; every flag is a keyword.

::

    from ccrawl.recrawl import run_recrawl
    summary = run_recrawl("worklist/", column="url", out="captures/", state="recrawl.json",
                          workers=64, max_pages=1000)
    print("\\n".join(summary.lines()))

It opens the work list, loads (or refuses) the checkpoint, repairs the output directory from
it, runs the pipeline and writes the final checkpoint. It returns a :class:`RunSummary`; the
CLI prints :meth:`RunSummary.lines` on stderr.
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from ccrawl import __version__
from ccrawl.errors import TemporaryFailure, UsageError
from ccrawl.recrawl.checkpoint import Checkpoint, ProgressTracker, load_checkpoint
from ccrawl.recrawl.diskfail import disk_failure
from ccrawl.recrawl.feeder import FeedCounts, feed
from ccrawl.recrawl.mainguard import check_main_guard
from ccrawl.recrawl.outlock import OutputLock
from ccrawl.recrawl.params import RunParams, default_state_path
from ccrawl.recrawl.pipeline import Pipeline
from ccrawl.recrawl.recovery import recover_outputs
from ccrawl.recrawl.summary import RunSummary
from ccrawl.recrawl.telemetry import Telemetry
from ccrawl.recrawl.worklist import WorkList, identity_digest, open_worklist

CANON_VERSION = "canon/1"


def _provenance(params: RunParams, worklist_id: str, run_id: str, extractor: str) -> dict[str, str]:
    return {
        "ccrawl.version": __version__,
        "ccrawl.software": f"ccrawl/{__version__}",
        "ccrawl.extractor": extractor,
        "ccrawl.canon": CANON_VERSION,
        "ccrawl.command": params.command_line or shlex.join(sys.argv),
        "ccrawl.worklist_id": worklist_id,
        "ccrawl.shard": f"{params.shard}/{params.shards}",
        "ccrawl.run_id": run_id,
        "ccrawl.robots": "on" if params.robots else "off",
    }


def _warcinfo_fields(prov: dict[str, str]) -> dict[str, str]:
    fields = {
        "software": prov["ccrawl.software"],
        "format": "WARC File Format 1.0",
        "conformsTo": "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf",
        "robots": "obey" if prov["ccrawl.robots"] == "on" else "ignore",
    }
    fields.update({k.replace("ccrawl.", "ccrawl-"): v for k, v in prov.items()})
    return fields


def run_recrawl(source: str, **kwargs: Any) -> RunSummary:
    """Run one recrawl of ``source`` (``--from``); keywords are the fields of :class:`RunParams`.

    Called from a script, it must run under ``if __name__ == "__main__":`` (the pipeline's processes
    are spawned and re-import the script); a call outside it is refused here, once, before anything starts.
    """
    check_main_guard("recrawl run")
    try:
        params = RunParams(source=source, **kwargs)
    except TypeError as exc:
        raise UsageError(f"recrawl run: {exc}") from exc
    params.validate()
    # the work list first: a run that cannot read it must not create (or lock) --out
    worklist = open_worklist(params.source, release=params.release, column=params.column, hub=params.hub,
                             hub_endpoint=params.hub_endpoint)
    lock = _own_output_dir(params.out)
    default_state = bool(params.out) and not params.state
    if default_state and params.out:
        # the same command resumes without --state: the checkpoint lives in --out (wget -c, Heritrix)
        params.state = default_state_path(params.out, params.shard, params.shards)
    try:
        return _run_locked(params, worklist, default_state=default_state)
    finally:
        if lock is not None:
            lock.release()


def _own_output_dir(out: str | None) -> OutputLock | None:
    """Create ``--out`` and lock it for this run (see :mod:`ccrawl.recrawl.outlock`)."""
    if not out:
        return None
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--out {out} is a file, not a directory") from None
    except OSError as exc:
        raise UsageError(f"--out {out} cannot be created ({exc.strerror or exc}): name a directory you can write") \
            from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out} is not writable: name a directory you can write")
    try:
        return OutputLock(out).acquire()
    except PermissionError:
        raise UsageError(f"--out {out} is not writable: name a directory you can write") from None


def _run_locked(params: RunParams, worklist: WorkList, *, default_state: bool = False) -> RunSummary:
    identity = worklist.identity()
    try:
        loaded = (
            load_checkpoint(params.state, worklist=identity, shard=params.shard, shards=params.shards,
                            out=params.out or None, rows_per_part=[p.rows for p in worklist.parts()])
            if params.state
            else None
        )
    except UsageError as exc:
        if not default_state:
            raise
        raise UsageError(f"{exc} (no --state was given, so this is the checkpoint kept in --out {params.out}: "
                         "give this work list its own --out, or name a --state)") from None
    if params.out:
        recover_outputs(Path(params.out), params.prefix, loaded)
    if loaded is not None and loaded.done:
        return RunSummary(part=loaded.part, row=loaded.row, done=True, stopped_by="nothing", state=params.state or "")
    cp = loaded or Checkpoint(worklist=identity, shard=params.shard, shards=params.shards, out=params.out or "")
    start = (cp.part, cp.row)
    skip = cp.durable_rows()
    tracker = ProgressTracker(start, skip)
    validators = None
    if params.previous:
        from ccrawl.recrawl.previous import load_validators

        validators = load_validators(params.previous)
    extractor = ""
    if params.extracting:
        from ccrawl.recrawl.extractproc import engine_label

        extractor = engine_label(params.extractor)
    counts = FeedCounts()
    feed_iter = feed(
        worklist, tracker, start=start, skip=skip, shard=params.shard, shards=params.shards,
        fetchers=params.fetchers or 1, validators=validators, counts=counts,
    )
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)
    shard_part = f"-s{params.shard}of{params.shards}" if params.shards > 1 else ""
    stem = f"{params.prefix}{shard_part}-{run_id}"
    prov = _provenance(params, identity_digest(identity), run_id, extractor)
    telemetry = Telemetry(progress=params.progress, journal=params.journal, metrics_addr=params.metrics_addr)
    sizes = [p.rows for p in worklist.parts()]
    try:
        pipe = Pipeline(
            params,
            tracker=tracker,
            feed_iter=feed_iter,
            counts=counts,
            checkpoint=cp if params.state else None,
            stem=stem,
            provenance=_warcinfo_fields(prov) if params.format == "warc" else prov,
            telemetry=telemetry,
            total_rows=sum(sizes),
            rows_before=sum(sizes[: start[0]]) + (start[1] if start[0] < len(sizes) else 0),
        )
        pipe.set_base_fetched(cp.fetched)
        summary = pipe.run()
        if counts.issued and not pipe.durable_rows and summary.stopped_by != "signal":
            # every URL becomes a row (a failure is a row): work issued and nothing written is a lost
            # pipeline, never a success (issue #37); what was durable before this run stays checkpointed
            pipe.finish_checkpoint(False)
            telemetry.event("failed", reason="nothing written", issued=counts.issued)
            raise TemporaryFailure(
                f"recrawl: {counts.issued} URLs were handed to the pipeline and no row was written; "
                + ("run the same command again to resume" if params.state else
                   "nothing was checkpointed (no --out or --state), so a rerun starts from the beginning")
            )
        done = summary.stopped_by == "end" and tracker.pending() == 0
        pipe.finish_checkpoint(done)
        summary.done = done
        summary.part, summary.row = tracker.position()
        telemetry.event("end", **summary.as_dict())
    except OSError as exc:  # the parent's own writes: the checkpoint, the renames
        failure = disk_failure(exc, params.out or str(Path(params.state or ".").parent))
        if failure is None:
            raise
        raise failure.error() from exc
    finally:
        telemetry.close()
    return summary
