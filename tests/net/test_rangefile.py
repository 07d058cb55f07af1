"""The one ranged-read file: what it fetches, what it refuses, and pyarrow reading through it."""

from __future__ import annotations

import io
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.errors import InputError
from ccrawl.net.rangefile import RangeFile


class Server:
    """Bytes served by range, every request recorded."""

    def __init__(self, data: bytes, short_by: int = 0) -> None:
        self.data = data
        self.short_by = short_by
        self.calls: list[tuple[int, int]] = []

    def __call__(self, start: int, length: int) -> bytes:
        self.calls.append((start, length))
        out = self.data[start : start + length]
        return out[: max(0, len(out) - self.short_by)]


def parquet_bytes(rows: int = 5000) -> bytes:
    table = pa.table({"url": [f"https://h{i}.example/p" for i in range(rows)], "n": list(range(rows))})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=1000)
    return buf.getvalue()


def test_pyarrow_reads_one_column_through_it_and_only_the_tail_and_that_column_are_fetched() -> None:
    data = parquet_bytes()
    server = Server(data)
    rf = RangeFile(server, len(data), name="part-0", tail=16 * 1024)
    pf = pq.ParquetFile(rf, metadata=rf.parquet_metadata(), pre_buffer=False)
    assert pf.read(columns=["n"]).column(0).to_pylist() == list(range(5000))
    assert rf.bytes_fetched < len(data)  # the url column was never fetched
    assert server.calls[0] == (len(data) - 16 * 1024, 16 * 1024)


def test_a_short_reply_is_an_error_naming_the_file() -> None:
    data = b"x" * 1000
    rf = RangeFile(Server(data, short_by=1), len(data), name="repo/part-7.parquet")
    rf.seek(100)
    with pytest.raises(InputError, match=r"part-7\.parquet: asked 50 bytes at 100, got 49"):
        rf.read(50)


def test_reads_inside_prefetched_blocks_and_the_tail_cost_no_request() -> None:
    data = bytes(range(256)) * 40
    server = Server(data)
    rf = RangeFile(server, len(data), name="f", blocks={100: data[100:600]}, tail=1000)
    assert len(server.calls) == 1  # the tail
    rf.seek(200)
    assert rf.read(300) == data[200:500]
    rf.seek(len(data) - 10)
    assert rf.read() == data[-10:]
    assert len(server.calls) == 1
    rf.seek(700)
    assert rf.read(10) == data[700:710]
    assert server.calls[-1] == (700, 10)


def test_read_ahead_serves_many_small_reads_with_few_requests() -> None:
    data = bytes(range(256)) * 400
    server = Server(data)
    rf = RangeFile(server, len(data), name="f", block_size=8192)
    got = b"".join(rf.read(100) for _ in range(80))
    assert got == data[:8000]
    assert len(server.calls) <= 2


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"not parquet at all, no trailer", "no PAR1 trailer"),
        (b"PAR1" + b"\0" * 20 + struct.pack("<I", 10**9) + b"PAR1", "footer claims 1000000000 bytes"),
    ],
)
def test_a_file_that_is_not_parquet_or_lies_about_its_footer_is_one_clear_error(payload: bytes, message: str) -> None:
    rf = RangeFile(Server(payload), len(payload), name="bad.parquet", tail=64)
    with pytest.raises(InputError, match=message):
        rf.parquet_metadata()


def test_seek_and_read_past_the_end_return_nothing() -> None:
    data = b"abc"
    rf = RangeFile(Server(data), 3, name="f")
    assert rf.seek(0, io.SEEK_END) == 3
    assert rf.read(10) == b""
    buf = bytearray(4)
    rf.seek(1)
    assert rf.readinto(buf) == 2 and bytes(buf[:2]) == b"bc"
