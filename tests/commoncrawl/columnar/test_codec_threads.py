"""Page decompression is used from several threads at once (a scan steps heavy parts on a pool)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

from ccrawl.commoncrawl.columnar.native import _decompressor


def test_gzip_pages_decompressed_on_many_threads_at_once_come_out_intact() -> None:
    rng = random.Random(7)
    codec = pa.Codec("gzip")
    pages = []
    for i in range(16):
        raw = "".join(f"com,host{rng.randrange(10**6)})/p/{i}/{j}\n" for j in range(4000)).encode()
        pages.append((raw, codec.compress(raw, asbytes=True)))

    def check(k: int) -> bool:
        unpack = _decompressor("GZIP")
        raw, packed = pages[k % len(pages)]
        return bool(unpack(packed, len(raw)) == raw)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(check, range(800)))
    assert all(results), f"{results.count(False)} of {len(results)} pages came out corrupt"
