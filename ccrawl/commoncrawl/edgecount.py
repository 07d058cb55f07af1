"""Edge tally: a web graph's ``from<TAB>to`` lines counted into in- and out-degree arrays.

``EdgeTally(din, dout, atomic=False)`` takes the inflated bytes of one edge file block by block
(:meth:`~EdgeTallyPy.feed`; a line cut between blocks waits for the rest) and :meth:`~EdgeTallyPy.finish`
at the end of the file. ``din`` and ``dout`` are two uint32 arrays as long as the graph has vertices:
memory is 8 bytes a vertex, nothing an edge. Each line adds one to ``dout[from]`` and ``din[to]``;
``atomic`` is for arrays in shared memory that several processes count into at once.

What a line may be, and what happens otherwise (the same in both implementations, byte for byte):

* ``digits TAB digits``, an optional CR before the newline, the last newline optional: counted;
* an empty line: skipped and counted in ``blank``;
* a vertex id at or past the vertex count: :class:`~ccrawl.errors.InputError` "a vertex id is beyond
  the graph's N vertices";
* anything else (a sign, a space, a third column, a letter), or a line longer than
  :data:`TAIL_MAX` bytes: :class:`~ccrawl.errors.InputError` naming the line number and its start.

The compiled implementation (``csrc/edgecount.pyx``) parses without the GIL and, with ``atomic``,
adds with relaxed atomic increments; :class:`EdgeTallyPy` is its pure-Python twin, which counts a
block at a time with ``numpy.add.at`` (under :func:`set_shared_lock`'s lock when ``atomic``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ccrawl import accel
from ccrawl.errors import InputError

__all__ = ["TAIL_MAX", "EdgeTally", "EdgeTallyPy", "line_error", "set_shared_lock"]

TAIL_MAX = 64
"""The longest line accepted: two 20-digit numbers, a tab and a CR fit well inside it."""

OK, BAD_LINE, BEYOND, TOO_LONG = 0, 1, 2, 3
_EXCERPT = 60

_shared_lock: Any = None


def set_shared_lock(lock: Any) -> None:
    """The lock the twin holds while it adds into shared arrays (the compiled tally adds atomically)."""
    global _shared_lock
    _shared_lock = lock


def line_error(code: int, lineno: int, raw: bytes, vertices: int) -> InputError:
    """The error of line ``lineno`` (1-based), which starts with ``raw``: one line, both implementations."""
    if code == BEYOND:
        reason = f"a vertex id is beyond the graph's {vertices:,} vertices"
    elif code == TOO_LONG:
        reason = f"longer than {TAIL_MAX} bytes, not a from<TAB>to line"
    else:
        reason = "not a from<TAB>to line of vertex ids"
    excerpt = raw[:_EXCERPT].decode("utf-8", "replace")
    return InputError(f"line {lineno:,}: {reason}: {excerpt!r}")


class EdgeTallyPy:
    """The twin of the compiled ``EdgeTally``: same arguments, same counts, same errors."""

    def __init__(self, din: npt.NDArray[np.uint32], dout: npt.NDArray[np.uint32], atomic: bool = False) -> None:
        if len(din) != len(dout):
            raise ValueError("din and dout must have the same length (the vertex count)")
        self._din = np.asarray(din, dtype=np.uint32)
        self._dout = np.asarray(dout, dtype=np.uint32)
        self.vertices = len(din)
        self.atomic = atomic
        self.edges = 0
        self.lines = 0
        self.blank = 0
        self._tail = b""

    def _check(self, line: bytes) -> tuple[int, int] | None:
        """(from, to) of one line without its newline, None for a blank one; raises for a bad one."""
        self.lines += 1
        if len(line) > TAIL_MAX:
            raise line_error(TOO_LONG, self.lines, line, self.vertices)
        body = line[:-1] if line.endswith(b"\r") else line
        if not body:
            self.blank += 1
            return None
        a, tab, b = body.partition(b"\t")
        if not tab or not a.isdigit() or not b.isdigit():
            raise line_error(BAD_LINE, self.lines, line, self.vertices)
        src, dst = int(a), int(b)
        if src >= self.vertices or dst >= self.vertices:
            raise line_error(BEYOND, self.lines, line, self.vertices)
        return src, dst

    def _count(self, lines: list[bytes]) -> None:
        froms: list[int] = []
        tos: list[int] = []
        try:
            for line in lines:
                pair = self._check(line)
                if pair is not None:
                    froms.append(pair[0])
                    tos.append(pair[1])
        finally:  # the lines before a bad one are counted, as the compiled tally counts them
            self._add(froms, tos)

    def _add(self, froms: list[int], tos: list[int]) -> None:
        if not froms:
            return
        if self.atomic and _shared_lock is not None:
            with _shared_lock:
                np.add.at(self._dout, froms, 1)
                np.add.at(self._din, tos, 1)
        else:
            np.add.at(self._dout, froms, 1)
            np.add.at(self._din, tos, 1)
        self.edges += len(froms)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Count the whole lines of ``data`` (inflated bytes); a line cut at the end waits for the next block."""
        chunk = bytes(data)
        if not chunk:
            return
        *lines, tail = (self._tail + chunk).split(b"\n")
        self._tail = tail
        self._count(lines)
        if len(self._tail) > TAIL_MAX:
            self._tail = self._tail[: TAIL_MAX + 1]  # already too long: its start is all the error shows

    def finish(self) -> None:
        """The end of the file: count a last line that has no newline."""
        tail, self._tail = self._tail, b""
        if tail:
            self._count([tail])


_native = accel.native("edgecount")
EdgeTally: Any = _native.EdgeTally if _native else EdgeTallyPy
