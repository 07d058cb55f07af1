"""Stub for the compiled edge tally (csrc/edgecount.pyx); the twin is ccrawl.commoncrawl.edgecount."""

import numpy as np
import numpy.typing as npt

class EdgeTally:
    vertices: int
    atomic: bool
    edges: int
    lines: int
    blank: int
    def __init__(self, din: npt.NDArray[np.uint32], dout: npt.NDArray[np.uint32], atomic: bool = False) -> None: ...
    def feed(self, data: bytes | bytearray | memoryview) -> None: ...
    def finish(self) -> None: ...
