"""Compiled frontier batch kernels; the twins are in ``ccrawl.crawl.keys``."""

from collections.abc import Iterable
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa

_Urls: TypeAlias = Iterable[str | None] | pa.Array | pa.ChunkedArray

def key_of(data: bytes) -> int | None: ...
def keys_hosts(
    urls: _Urls, hosts: bool = True
) -> tuple[npt.NDArray[np.uint64], pa.StringArray | None]: ...
def join_lines(
    urls: _Urls, order: npt.NDArray[np.int64], bounds: npt.NDArray[np.int64], hops: npt.NDArray[np.int64]
) -> list[bytes]: ...
def as_string_array(urls: _Urls) -> pa.StringArray: ...
def lines_array(block: bytes, first_line: int = 1) -> tuple[pa.StringArray, pa.StringArray]: ...
def string_array(n: int, values: dict[int, str]) -> pa.StringArray: ...
def pair_keys(
    prefix: bytes, left: list[str], li: npt.NDArray[np.int64], right: list[str], ri: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint64]: ...
