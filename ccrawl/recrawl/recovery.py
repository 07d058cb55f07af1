"""Start-of-run repair of the output directory, driven by the checkpoint.

A killed run can leave three kinds of files behind, and the checkpoint says which is which:

* a sealed shard whose rows the checkpoint covers but whose rename did not happen
  (``pending_renames``): renamed now, so its rows are not fetched again;
* a WARC file that was growing (``warc_files``: temp name -> durable length): truncated to the
  length the checkpoint covers (records are whole gzip members, so the cut is clean) and
  finished under its final name;
* any other ``<prefix>-*.tmp``: rows no checkpoint covers, deleted; the run fetches them again.
"""

from __future__ import annotations

import os
from pathlib import Path

from ccrawl.durable import IN_PROGRESS
from ccrawl.errors import InputError
from ccrawl.recrawl.checkpoint import Checkpoint
from ccrawl.recrawl.sinks import finalize


def recover_outputs(out: Path, prefix: str, cp: Checkpoint | None) -> dict[str, list[str]]:
    """Finish what the checkpoint promised, sweep the rest; returns what was done, by action."""
    done: dict[str, list[str]] = {"renamed": [], "truncated": [], "swept": []}
    if cp is not None:
        for tmp, final in cp.pending_renames:
            if os.path.exists(tmp):
                finalize(tmp, final)
                done["renamed"].append(final)
        for tmp, size in cp.warc_files.items():
            if os.path.exists(tmp):
                actual = os.path.getsize(tmp)
                if size > actual:
                    # truncate() would pad with zeros: the file is not the one the checkpoint saw
                    raise InputError(
                        f"{tmp} holds {actual} bytes but the checkpoint says {size} are durable in it; "
                        "something else changed the file: move it aside and run again"
                    )
                with open(tmp, "r+b") as f:
                    f.truncate(size)
                    f.flush()
                    os.fsync(f.fileno())
                if size:
                    finalize(tmp, tmp[: -len(IN_PROGRESS)])
                    done["truncated"].append(tmp[: -len(IN_PROGRESS)])
    for path in sorted(out.glob(f"{prefix}-*{IN_PROGRESS}")):
        path.unlink()
        done["swept"].append(str(path))
    return done
