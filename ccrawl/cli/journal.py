"""``--journal FILE`` for every command: a ``start`` and an ``end`` event as JSON Lines.

``recrawl run`` writes a journal of its own (start, shard_sealed, ticks, end with the run summary;
see :mod:`ccrawl.recrawl.telemetry`); every other command gets these two events, in the same shape
(``{"ts": ..., "event": ..., ...}``), appended to the same kind of file::

    {"ts": 1764700000.123, "event": "start", "command": "ccrawl crawls list", "argv": [...], "version": "0.1.0"}
    {"ts": 1764700000.456, "event": "end", "command": "ccrawl crawls list", "exit_code": 0, "records": 12,
     "elapsed_s": 0.333}

A command that fails still writes its ``end``, with the exit code and the one-line error.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ccrawl import __version__
from ccrawl.errors import EXIT_ERROR, EXIT_OK, CcrawlError, UsageError

#: commands whose run writes the journal itself (richer events), so the wrapper leaves it alone
SELF_JOURNALED = frozenset({"recrawl run"})


def _write(path: str, event: str, fields: dict[str, Any]) -> None:
    try:
        with Path(path).expanduser().open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"ts": round(time.time(), 3), "event": event, **fields}, default=str) + "\n")
    except OSError as exc:
        raise UsageError(f"--journal {path}: cannot append to it ({exc.strerror or exc})") from exc


def self_journaled(command_path: str) -> bool:
    parts = command_path.split()
    return " ".join(parts[1:]) in SELF_JOURNALED


@contextmanager
def journaled(path: str, command_path: str, records: Callable[[], int]) -> Iterator[None]:
    """Append ``start`` now and ``end`` when the body finishes, fails or is interrupted."""
    started = time.monotonic()
    _write(path, "start", {"command": command_path, "argv": sys.argv[1:], "version": __version__})
    end: dict[str, Any] = {"command": command_path, "exit_code": EXIT_OK}
    try:
        yield
    except CcrawlError as exc:
        end.update(exit_code=exc.exit_code, error=str(exc).replace("\n", " "))
        raise
    except KeyboardInterrupt:
        end.update(exit_code=130, error="interrupted")
        raise
    except SystemExit as exc:
        end["exit_code"] = exc.code if isinstance(exc.code, int) else EXIT_ERROR
        raise
    except Exception as exc:
        end.update(exit_code=EXIT_ERROR, error=f"internal error: {type(exc).__name__}: {exc}")
        raise
    finally:
        end.update(records=records(), elapsed_s=round(time.monotonic() - started, 3))
        _write(path, "end", end)
