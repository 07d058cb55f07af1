"""The streaming member splitter: same members as the gzip scanner, any chunking, bombs and corruption
bounded, and a dropped connection resumed at the last whole record by a ranged request."""

from __future__ import annotations

import asyncio
import gzip
import os
import random
import zlib
from pathlib import Path

import pytest

from ccrawl.commoncrawl.news.shard import index_stream
from ccrawl.commoncrawl.news.stream import MemberSplitter
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.news import NewsSite
from ccrawl.warc.members import iter_members, iter_members_py

from .conftest import client_options


def _split(data: bytes, sizes: list[int], **kw: object) -> list[tuple[int, int, bytes]]:
    s = MemberSplitter(**kw)  # type: ignore[arg-type]
    out = []
    pos = 0
    i = 0
    while pos < len(data):
        n = sizes[i % len(sizes)]
        out += [(m.offset, m.length, m.data) for m in s.feed(data[pos : pos + n])]
        pos += n
        i += 1
    assert s.pending == 0
    return out


@pytest.mark.parametrize("use_zlib", [False, True])
def test_members_match_the_gzip_scanner_under_any_chunking(news_site: NewsSite, news_server: FakeCCServer,
                                                           use_zlib: bool) -> None:
    path = news_server.site.root / news_site.months["2026/07"][0]
    data = path.read_bytes()
    import io

    want = list(iter_members(io.BytesIO(data)))
    assert want == list(iter_members_py(io.BytesIO(data)))
    rng = random.Random(7)
    for sizes in ([len(data)], [1 << 20], [4096], [rng.randint(1, 5000) for _ in range(50)]):
        got = _split(data, sizes, use_zlib=use_zlib)
        assert [(o, n) for o, n, _ in got] == want
        assert got[1][2] == gzip.decompress(data[got[1][0] : got[1][0] + got[1][1]])


def test_empty_members_and_a_bomb_are_bounded() -> None:
    empty = gzip.compress(b"", mtime=0)
    bomb = gzip.compress(b"\0" * (8 << 20), mtime=0)  # 8 MiB of zeros in a few KB
    small = gzip.compress(b"WARC/1.0\r\n\r\n", mtime=0)
    data = empty + bomb + small + empty
    got = MemberSplitter(max_record=1 << 20).feed(data)
    assert [(m.offset, m.length) for m in got] == [
        (0, len(empty)), (len(empty), len(bomb)), (len(empty) + len(bomb), len(small)),
        (len(empty) + len(bomb) + len(small), len(empty)),
    ]
    assert got[0].data == b"" and not got[0].oversized
    assert got[1].oversized and got[1].data == b""
    assert got[2].data == b"WARC/1.0\r\n\r\n"


def test_corrupt_bytes_raise_after_the_whole_members() -> None:
    good = gzip.compress(b"one", mtime=0)
    s = MemberSplitter()
    assert [m.data for m in s.feed(good)] == [b"one"]
    with pytest.raises(ValueError, match=f"offset {len(good)}"):
        s.feed(b"\x1f\x8bjunkjunkjunk" + os.urandom(64))
    with pytest.raises((ValueError, zlib.error)):
        MemberSplitter().feed(b"not gzip at all")


def test_a_dropped_stream_resumes_at_the_last_whole_record(fakecc: FakeCCServer, news_site: NewsSite,
                                                           tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from ccrawl.net.client import CCClient

    path = news_site.months["2026/07"][5]

    async def index(dest: Path) -> object:
        async with CCClient(**client_options(fakecc, tmp_path)) as cc:
            return await index_stream(cc, path, dest)

    clean = asyncio.run(index(tmp_path / "clean.parquet"))
    fakecc.faults.add("truncate", path=path.rsplit("/", 1)[1] + "$", times=1)  # half the body, then close
    resumed = asyncio.run(index(tmp_path / "resumed.parquet"))
    assert resumed.resumes == 1 and clean.resumes == 0  # type: ignore[attr-defined]
    resumed_rows = pq.read_table(tmp_path / "resumed.parquet").to_pylist()
    assert resumed_rows == pq.read_table(tmp_path / "clean.parquet").to_pylist()
    ranges = [r.range for r in fakecc.faults.requests(path.rsplit("/", 1)[1] + "$") if r.range]
    assert len(ranges) == 1
    start = int(ranges[0].split("=")[1].rstrip("-"))
    offsets = {r["offset"] for r in news_site.records if r["filename"] == path}
    size = (fakecc.site.root / path).stat().st_size
    assert start in offsets and 0 < start < size  # a record boundary, not the start of the file


def test_a_file_that_ends_mid_record_keeps_its_whole_records(fakecc: FakeCCServer, news_site: NewsSite,
                                                             tmp_path: Path) -> None:
    from ccrawl.net.client import CCClient

    path = news_site.months["2026/07"][2]  # the fake cuts each month's third file
    cut = [r for r in news_site.records if r["filename"] == path and r.get("whole") is False]
    assert len(cut) == 1

    async def index() -> object:
        async with CCClient(**client_options(fakecc, tmp_path)) as cc:
            return await index_stream(cc, path, tmp_path / "cut.parquet")

    result = asyncio.run(index())
    assert result.truncated_at == cut[0]["offset"]  # type: ignore[attr-defined]
    whole = [r for r in news_site.responses() if r["filename"] == path]
    assert result.rows == len(whole)  # type: ignore[attr-defined]
