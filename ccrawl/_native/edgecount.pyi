"""Stub for the compiled edge tally (csrc/edgecount.pyx); the twin is ccrawl.commoncrawl.edgecount."""

from typing import Any

class EdgeTally:
    vertices: int
    atomic: bool
    edges: int
    lines: int
    blank: int
    def __init__(self, din: Any, dout: Any, atomic: bool = False) -> None: ...
    def feed(self, data: bytes | bytearray | memoryview) -> None: ...
    def finish(self) -> None: ...
