"""Gzip member scanning: offsets equal fastwarc's and warcio's, breaks are named, twins agree."""

from __future__ import annotations

import gzip
import io
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastwarc.stream_io import GzipWriter
from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcRecord, WarcRecordType
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator as WarcioIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ccrawl import accel
from ccrawl.errors import InputError
from ccrawl.warc import members
from tests.conftest import native_or_skip

Scan = Callable[..., Iterator[tuple[int, int]]]

# Corpus files with one gzip member per record, where members and records are the same thing.
WELL_FORMED = [
    "example.warc.gz",
    "example-resource.warc.gz",
    "example-space-in-target-uri.warc.gz",
    "example-wget-bad-target-uri.warc.gz",
    "post-test.warc.gz",
]


@pytest.fixture(scope="module", params=["python", "native"])
def scan(request: pytest.FixtureRequest) -> Scan:
    if request.param == "python":
        return members.iter_members_py
    return native_or_skip("gzmembers").iter_members  # type: ignore[no-any-return]


def run(scan: Scan, data: bytes, chunk_size: int = members.DEFAULT_CHUNK_SIZE) -> tuple[list[tuple[int, int]], str]:
    """Members yielded before the scan ended, and the error message it ended with ('' for none)."""
    found: list[tuple[int, int]] = []
    try:
        for item in scan(io.BytesIO(data), chunk_size):
            found.append(item)
    except InputError as exc:
        return found, str(exc)
    return found, ""


def fastwarc_offsets(path: Path) -> list[int]:
    with path.open("rb") as fh:
        return [r.stream_pos for r in FastIterator(fh, parse_http=False)]


def warcio_members(path: Path) -> list[tuple[int, int]]:
    with path.open("rb") as fh:
        it = WarcioIterator(fh)
        return [(it.get_record_offset(), it.get_record_length()) for _ in it]


def write_with_warcio(path: Path, payloads: list[bytes]) -> None:
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i, payload in enumerate(payloads):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            record = writer.create_warc_record(
                f"http://example.com/{i}", "response", payload=io.BytesIO(payload), http_headers=http
            )
            writer.write_record(record)


def write_with_fastwarc(path: Path, payloads: list[bytes]) -> None:
    with path.open("wb") as fh:
        out = GzipWriter(fh)
        for i, payload in enumerate(payloads):
            record = WarcRecord()
            record.init_headers(WarcRecordType.resource)
            record.headers["WARC-Target-URI"] = f"http://example.com/{i}"
            record.set_bytes_content(payload)
            record.write(out)
            out.finish()  # ends the gzip member: one member per record
        out.close()


def payloads(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = [b"", b"<html>tiny</html>", rng.randbytes(3 * 1024 * 1024)]  # incompressible, > one chunk
    out += [("<p>" + "word " * rng.randrange(1, 20_000) + "</p>").encode() for _ in range(20)]
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("name", WELL_FORMED)
def test_offsets_equal_fastwarc_and_warcio_on_corpus_files(scan: Scan, corpus_dir: Path, name: str) -> None:
    path = corpus_dir / "warc" / name
    with path.open("rb") as fh:
        found = list(scan(fh))
    assert [offset for offset, _ in found] == fastwarc_offsets(path)
    assert found == warcio_members(path)
    assert sum(length for _, length in found) == path.stat().st_size


def test_one_member_holding_many_records_is_one_member(scan: Scan, corpus_dir: Path) -> None:
    # This file gzips every record into a single member: a member scan sees one, not six.
    path = corpus_dir / "warc" / "example-bad-non-chunked.warc.gz"
    with path.open("rb") as fh:
        assert list(scan(fh)) == [(0, path.stat().st_size)]


def test_uncompressed_warc_is_refused_at_offset_zero(scan: Scan, corpus_dir: Path) -> None:
    path = corpus_dir / "warc" / "example.warc"
    with path.open("rb") as fh, pytest.raises(InputError) as info:
        list(scan(fh))
    message = str(info.value)
    assert str(path) in message
    assert "corrupt gzip member at offset 0: incorrect header check" in message
    assert "expected a .warc.gz" in message


@pytest.mark.parametrize("writer", [write_with_warcio, write_with_fastwarc])
@pytest.mark.parametrize("chunk_size", [4096, 65_536, members.DEFAULT_CHUNK_SIZE])
def test_offsets_equal_the_readers_on_generated_warcs(
    scan: Scan, tmp_path: Path, writer: Callable[[Path, list[bytes]], None], chunk_size: int
) -> None:
    path = tmp_path / "gen.warc.gz"
    writer(path, payloads(11))
    with path.open("rb") as fh:
        found = list(scan(fh, chunk_size))
    assert len(found) >= 23
    assert [offset for offset, _ in found] == fastwarc_offsets(path)
    assert found == warcio_members(path)


def test_truncated_file_yields_the_whole_members_then_names_the_broken_one(scan: Scan, tmp_path: Path) -> None:
    path = tmp_path / "gen.warc.gz"
    write_with_warcio(path, payloads(12))
    whole = run(scan, path.read_bytes())[0]
    third_offset, third_length = whole[2]
    cut = path.read_bytes()[: third_offset + third_length // 2]
    found, error = run(scan, cut, chunk_size=4096)
    assert found == whole[:2]
    assert error.startswith(f"truncated gzip member at offset {third_offset}: the stream ends at byte {len(cut)}")


def test_corrupt_member_yields_the_members_before_it(scan: Scan) -> None:
    parts = [gzip.compress(f"record {i} ".encode() * 500) for i in range(4)]
    broken = bytearray(parts[2])
    broken[len(broken) // 2] ^= 0xFF  # inside the deflate data
    broken[len(broken) // 2 + 1] ^= 0x55
    data = parts[0] + parts[1] + bytes(broken) + parts[3]
    found, error = run(scan, data)
    assert found == [(0, len(parts[0])), (len(parts[0]), len(parts[1]))]
    offset = len(parts[0]) + len(parts[1])
    assert error.startswith(f"corrupt gzip member at offset {offset}: ")
    assert f"the members before offset {offset} are whole" in error


def test_trailing_junk_after_the_last_member_is_an_error_at_its_offset(scan: Scan) -> None:
    a, b = gzip.compress(b"a" * 100), gzip.compress(b"b" * 300)
    data = a + b
    found, error = run(scan, data + b"junk that is not gzip")
    assert found == [(0, len(a)), (len(a), len(b))]
    assert error.startswith(f"corrupt gzip member at offset {len(data)}: incorrect header check")


def test_empty_stream_has_no_members(scan: Scan) -> None:
    assert run(scan, b"") == ([], "")


def test_start_is_added_to_every_offset(scan: Scan) -> None:
    data = gzip.compress(b"x") + gzip.compress(b"yy")
    first = len(gzip.compress(b"x"))
    assert list(scan(io.BytesIO(data), 1024, 5000)) == [(5000, first), (5000 + first, len(data) - first)]


@pytest.mark.parametrize("chunk_size", [0, -1, members.MAX_CHUNK_SIZE + 1])
def test_chunk_size_out_of_range_is_refused(scan: Scan, chunk_size: int) -> None:
    with pytest.raises(ValueError, match="chunk_size must be between 1 and"):
        scan(io.BytesIO(b""), chunk_size)


class CountingReader:
    """A stream that records every read, to prove the scan streams in bounded chunks."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)
        self.sizes: list[int] = []
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        self.sizes.append(size)
        chunk = self._inner.read(size)
        self.consumed += len(chunk)
        return chunk


def test_scan_streams_without_reading_the_whole_file(scan: Scan) -> None:
    rng = random.Random(5)
    data = b"".join(gzip.compress(rng.randbytes(50_000)) for _ in range(40))
    reader = CountingReader(data)
    it = scan(reader, 65_536)
    first = next(it)
    assert first[0] == 0
    assert reader.consumed <= 65_536  # the first member came out of the first chunk
    rest = list(it)
    assert len(rest) == 39
    assert all(0 < size <= 65_536 for size in reader.sizes)
    assert reader.consumed == len(data)


def test_module_uses_the_native_implementation_when_built() -> None:
    if accel.extensions_disabled():
        assert members.iter_members is members.iter_members_py
    else:
        assert members.iter_members is native_or_skip("gzmembers").iter_members


# --- parity: the native scan and its twin agree on members, errors and messages -----------------

member_bodies = st.lists(st.binary(max_size=3000), min_size=0, max_size=8)


def build(bodies: list[bytes], levels: list[int]) -> bytes:
    return b"".join(gzip.compress(b, compresslevel=levels[i % len(levels)]) for i, b in enumerate(bodies))


@settings(max_examples=150, deadline=None)
@given(
    member_bodies,
    st.lists(st.integers(0, 9), min_size=1, max_size=3),
    st.integers(1, 5000),
    st.one_of(st.none(), st.integers(0, 50_000)),
    st.one_of(st.none(), st.tuples(st.integers(0, 50_000), st.integers(1, 255))),
)
def test_native_matches_twin_on_any_member_sequence(
    bodies: list[bytes], levels: list[int], chunk_size: int, cut: int | None, flip: tuple[int, int] | None
) -> None:
    native = native_or_skip("gzmembers")
    data = bytearray(build(bodies, levels))
    if flip is not None and data:
        data[flip[0] % len(data)] ^= flip[1]
    if cut is not None:
        data = data[:cut]
    expected = run(members.iter_members_py, bytes(data), chunk_size)
    assert run(native.iter_members, bytes(data), chunk_size) == expected


@settings(max_examples=60, deadline=None)
@given(member_bodies, st.integers(1, 4096))
def test_twin_finds_exactly_the_members_it_was_given(bodies: list[bytes], chunk_size: int) -> None:
    parts = [gzip.compress(b) for b in bodies]
    expected, offset = [], 0
    for part in parts:
        expected.append((offset, len(part)))
        offset += len(part)
    assert run(members.iter_members_py, b"".join(parts), chunk_size) == (expected, "")


def test_native_matches_twin_on_every_corpus_file(corpus_dir: Path) -> None:
    native = native_or_skip("gzmembers")
    for path in sorted((corpus_dir / "warc").iterdir()):
        data = path.read_bytes()
        for chunk_size in (7, 1000, members.DEFAULT_CHUNK_SIZE):
            assert run(native.iter_members, data, chunk_size) == run(members.iter_members_py, data, chunk_size), path
