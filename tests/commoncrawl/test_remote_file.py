"""A Common Crawl file read as it arrives: the same bytes as the file, resumed across a dropped connection."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from ccrawl.commoncrawl.stream import RemoteFile
from ccrawl.errors import CcrawlError, TemporaryFailure
from ccrawl.testing.fakecc import FakeCCServer

REL = "crawl-data/CC-MAIN-2099-40/segments/1/warc/remote-00000.warc.gz"


@pytest.fixture
def blob(fakecc: FakeCCServer) -> bytes:
    data = random.Random(4).randbytes(3_500_000)  # several of the client's 1 MiB chunks
    path = Path(fakecc.site.root) / REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def _read_all(remote: RemoteFile, sizes: list[int]) -> bytes:
    out, i = bytearray(), 0
    while True:
        chunk = remote.read(sizes[i % len(sizes)])
        i += 1
        if not chunk:
            return bytes(out)
        out += chunk


def test_reads_give_the_file_byte_for_byte_at_any_read_size(fakecc: FakeCCServer, blob: bytes) -> None:
    for sizes in ([1 << 20], [1, 7, 65_536, 3_000_001], [-1]):
        with RemoteFile(REL, fakecc.client_options()) as remote:
            assert _read_all(remote, sizes) == blob
            assert remote.read(10) == b""  # the end stays the end
            assert remote.received == len(blob)


def test_a_dropped_connection_is_resumed_from_the_bytes_already_read(fakecc: FakeCCServer, blob: bytes) -> None:
    fakecc.faults.add("truncate", path=r"remote-00000\.warc\.gz$", times=2)
    with RemoteFile(REL, fakecc.client_options()) as remote:
        assert _read_all(remote, [100_000]) == blob
    ranges = [r.range for r in fakecc.faults.requests(r"remote-00000")]
    assert ranges[0] is None and all(r and r.startswith("bytes=") for r in ranges[1:]) and len(ranges) == 3


def test_a_connection_that_keeps_dropping_is_one_error_where_the_reader_reads(fakecc: FakeCCServer,
                                                                              blob: bytes) -> None:
    fakecc.faults.add("truncate", path=r"remote-00000\.warc\.gz$", times=-1)
    with RemoteFile(REL, {**fakecc.client_options(), "retries": 2}) as remote, \
            pytest.raises(TemporaryFailure, match="kept dropping"):
        _read_all(remote, [1 << 20])


def test_a_missing_file_is_the_clients_error_not_a_hang(fakecc: FakeCCServer) -> None:
    with RemoteFile("crawl-data/none/nothing.warc.gz", fakecc.client_options()) as remote, \
            pytest.raises(CcrawlError, match="404"):
        remote.read(10)


def test_closing_early_stops_the_download(fakecc: FakeCCServer, blob: bytes) -> None:
    fakecc.faults.latency = 0.05
    remote = RemoteFile(REL, fakecc.client_options(), depth=1)
    assert remote.read(1000) == blob[:1000]
    t = time.monotonic()
    remote.close()
    assert time.monotonic() - t < 3
    assert not remote._thread.is_alive()
    assert remote.received < len(blob)  # it stopped, rather than fetching the rest behind the reader's back
