"""What a run says when it is asked to stop and has requests still on the wire."""

from __future__ import annotations

from typing import TextIO


def announce_stop(stream: TextIO, in_flight: int, timeout: float) -> None:
    """One line at the first Ctrl-C/SIGTERM: a drain can take up to a fetch timeout, and silence
    for that long reads as a hang (issue #13). Written from the signal handler, so kept to one
    write of a short line. Nothing is said when nothing is in flight: that stop is immediate."""
    if in_flight <= 0:
        return
    try:
        stream.write(f"stopping: waiting for {in_flight} requests, up to {timeout:g} s; Ctrl-C again to abort\n")
        stream.flush()
    except (OSError, ValueError, RuntimeError):
        pass  # a closed or reentered stderr must not turn a clean stop into a crash
