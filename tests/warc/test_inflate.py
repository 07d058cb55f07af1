"""The whole-member inflater (libdeflate) against its twin, and the WARC reader with and without it."""

from __future__ import annotations

import gzip
import io
import os
import random
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.warc import inflate, source
from ccrawl.warc.inflate import FAST_CAP, InflaterPy
from ccrawl.warc.reader import iter_records
from tests.conftest import native_or_skip
from tests.warc.hostile import gzip_bomb, http_response, members, warc_record

CAP = 4096


def _makers() -> list[Any]:
    """The twin, and the compiled inflater unless this pass runs the twins only."""
    if accel.extensions_disabled():
        return [InflaterPy]
    return [InflaterPy, native_or_skip("gzinflate").Inflater]


def _all(raw: bytes, pos: int = 0, cap: int = CAP, prefix: bytes = b"") -> Any:
    """(result, buffer) from every implementation, which must agree; returns the one answer."""
    out = []
    for make in _makers():
        buf = bytearray(prefix)
        out.append((make(cap).member(raw, pos, buf), bytes(buf)))
    assert all(o == out[0] for o in out), out
    return out[0]


def _header(flags: int, extra: bytes = b"") -> bytes:
    return b"\x1f\x8b\x08" + bytes([flags]) + b"\0\0\0\0\0\xff" + extra


def _member(data: bytes, level: int = 6, header: bytes | None = None) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return (header or _header(0)) + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def test_a_whole_member_is_inflated_onto_the_buffer_and_its_compressed_size_returned() -> None:
    data = b"hello world " * 200
    raw = _member(data) + b"NEXT"
    assert _all(raw, prefix=b"kept:") == ((True, len(raw) - 4, len(data)), b"kept:" + data)


def test_a_member_at_an_offset_and_an_empty_member_are_taken() -> None:
    raw = b"junk" + gzip.compress(b"", mtime=0) + gzip.compress(b"x" * 10, mtime=0)
    assert _all(raw, pos=4) == ((True, 20, 0), b"")
    assert _all(raw, pos=24) == ((True, len(raw) - 24, 10), b"x" * 10)


@pytest.mark.parametrize(
    ("name", "flags", "extra"),
    [
        ("a file name", 0x08, b"name.warc\0"),
        ("a comment", 0x10, b"a comment\0"),
        ("an extra field", 0x04, b"\x04\0abcd"),
        ("all three", 0x1C, b"\x02\0xyname\0comment\0"),
    ],
)
def test_optional_header_fields_are_read_past(name: str, flags: int, extra: bytes) -> None:
    data = b"payload " * 50
    raw = _member(data, header=_header(flags, extra))
    assert _all(raw) == ((True, len(raw), len(data)), data), name


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("a header CRC (the streaming inflater checks it)", _member(b"abc", header=_header(0x02) + b"\0\0")),
        ("a reserved flag", _member(b"abc", header=_header(0x20))),
        ("not gzip", b"WARC/1.1\r\n" + b"x" * 40),
        ("a method other than deflate", b"\x1f\x8b\x07" + _member(b"abc")[3:]),
        ("a wrong CRC", _member(b"abc")[:-8] + struct.pack("<II", 1, 3)),
        ("a wrong length", _member(b"abc")[:-8] + struct.pack("<II", zlib.crc32(b"abc"), 4)),
        ("too short to be a member", gzip.compress(b"", mtime=0)[:17]),
    ],
)
def test_members_it_cannot_vouch_for_are_left_untouched(name: str, raw: bytes) -> None:
    assert _all(raw, prefix=b"before") == ((False, 0, 0), b"before"), name


def test_every_cut_of_a_member_is_refused() -> None:
    raw = _member(bytes(random.Random(1).randbytes(3000)), level=1)
    for cut in range(len(raw)):
        assert _all(raw[:cut]) == ((False, 0, 0), b""), cut


def test_a_member_over_the_cap_is_refused_and_one_exactly_at_it_is_taken() -> None:
    exact = _member(b"z" * CAP)
    assert _all(exact) == ((True, len(exact), CAP), b"z" * CAP)
    over = _member(b"z" * (CAP + 1))
    assert _all(over) == ((False, 0, 0), b"")


def test_a_bomb_costs_the_cap_not_what_it_inflates_to() -> None:
    bomb = gzip_bomb(64)
    assert _all(bomb, cap=FAST_CAP) == ((False, 0, 0), b"")


def test_a_position_outside_the_input_is_refused() -> None:
    raw = _member(b"abc")
    for pos in (-1, len(raw), len(raw) + 100):
        assert _all(raw, pos=pos) == ((False, 0, 0), b""), pos


def test_a_cap_that_is_not_positive_is_refused() -> None:
    for make in _makers():
        with pytest.raises(ValueError, match="cap must be positive"):
            make(0)


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=6000),
    level=st.integers(0, 9),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=3),
    cut=st.integers(0, 10_000),
    tail=st.binary(max_size=30),
)
def test_the_twins_agree_on_damaged_and_cut_members(
    data: bytes, level: int, flips: list[tuple[int, int]], cut: int, tail: bytes
) -> None:
    raw = bytearray(_member(data, level) + tail)
    for at, mask in flips:
        raw[at % len(raw)] ^= mask
    raw_b = bytes(raw[: max(cut, len(raw) // 2)])
    (ok, used, made), buf = _all(raw_b, cap=8192)
    if ok:  # what it took is one valid member, and exactly what zlib inflates it to
        d = zlib.decompressobj(31)
        assert d.decompress(raw_b[:used]) == buf and d.eof and not d.unused_data and made == len(buf)


# The reader: the same records, locations and seams with the fast path and without it.


def _read(path: Path | bytes, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[str]]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(source, "native_inflater", lambda *a, **k: None)
        skips: list[str] = []
        rows: list[Any] = []
        stream = io.BytesIO(path) if isinstance(path, bytes) else path
        try:
            for r in iter_records(stream, skip_bad_records=True, on_skip=skips.append):  # type: ignore[arg-type]
                rows.append((r.offset, r.length, r.warc_type, r.headers, r.block, r.payload))
        except Exception as exc:  # the same error either way is part of the contract
            rows.append(("error", type(exc).__name__, str(exc)))
        return rows, skips


def _hostile_files() -> Iterator[tuple[str, bytes]]:
    recs = [warc_record(i) for i in range(6)]
    good = members(recs)
    yield "plain members", b"".join(good)
    yield "empty members between", b"".join(m + gzip.compress(b"", mtime=0) for m in good)
    yield "a corrupt member", b"".join(good[:2]) + good[2][:15] + b"\xff" * 20 + good[2][35:] + b"".join(good[3:])
    yield "cut inside the last member", b"".join(good)[:-9]
    yield "trailing junk", b"".join(good) + b"junk after the last member"
    big = http_response(9, body=random.Random(2).randbytes(3 << 20))  # inflates past FAST_CAP
    yield "a member over the fast cap", b"".join(good[:2]) + gzip.compress(warc_record(9, big), mtime=0) + good[3]
    yield "several records in one member", good[0] + gzip.compress(b"".join(recs[1:4]), mtime=0) + good[4]
    # Members of ~300 KB of incompressible bytes: several straddle each 1 MiB read of the file.
    noisy = [gzip.compress(warc_record(i, http_response(i, random.Random(i).randbytes(300_000))), mtime=0)
             for i in range(12)]
    yield "members across read boundaries", b"".join(noisy)
    yield "a bomb", gzip_bomb(16) + good[0]


@pytest.mark.parametrize(("name", "data"), list(_hostile_files()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_reader_frames_the_same_records_with_and_without_the_fast_path(
    name: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_or_skip("gzinflate")
    fast = _read(data, True, monkeypatch)
    slow = _read(data, False, monkeypatch)
    assert fast == slow, name
    assert fast[0], name


def test_the_corpus_warcs_read_the_same_with_and_without_the_fast_path(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_or_skip("gzinflate")
    files = sorted((corpus_dir / "warc").glob("*.gz")) + sorted((corpus_dir / "warc").glob("*.gz.bad"))
    assert files
    for path in files:
        fast = _read(path, True, monkeypatch)
        assert fast == _read(path, False, monkeypatch), path.name


def test_the_fast_path_takes_common_crawl_shaped_members() -> None:
    """Not only equal output: the compiled inflater really is the one that took the members."""
    native_or_skip("gzinflate")
    data = b"".join(members([warc_record(i) for i in range(5)]))
    src = source.GzipSource(io.BytesIO(data), b"")
    assert src.fast is not None
    calls: list[tuple[bool, int, int]] = []
    real = src.fast

    class Counting:
        def member(self, raw: bytes, pos: int, buf: bytearray) -> tuple[bool, int, int]:
            calls.append(real.member(raw, pos, buf))
            return calls[-1]

    src.fast = Counting()
    while src._more():
        pass
    assert [c[0] for c in calls] == [True] * 5
    assert src.inflater is None  # the streaming inflater was never needed
    sizes = [len(m) for m in members([warc_record(i) for i in range(5)])]
    assert sorted(src.starts.values()) == [sum(sizes[:k]) for k in range(5)]


def _in_subprocess(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_without_libdeflate_the_reader_streams_and_says_which_inflater_it_has(tmp_path: Path) -> None:
    native_or_skip("gzinflate")
    path = tmp_path / "x.warc.gz"
    path.write_bytes(b"".join(members([warc_record(i) for i in range(3)])))
    code = (
        "import sys; from ccrawl import accel; from ccrawl.warc import inflate; "
        "from ccrawl.warc.reader import iter_records; "
        f"rows = [r.offset for r in iter_records({str(path)!r})]; "
        "print(accel.implementations()['gzinflate'], inflate.native_inflater() is None, rows)"
    )
    gone = _in_subprocess(code, {"CCRAWL_LIBDEFLATE": str(tmp_path / "no-such-libdeflate.so")})
    here = _in_subprocess(code, {})
    assert gone.returncode == 0 and here.returncode == 0, gone.stderr + here.stderr
    offsets = here.stdout.split(" ", 2)[2]
    assert gone.stdout == f"python True {offsets}"
    assert here.stdout.startswith("native False ")


def test_the_twin_is_what_a_build_without_the_native_core_exports() -> None:
    if inflate._native is None:
        assert inflate.Inflater is InflaterPy and inflate.native_inflater() is None
    else:
        assert inflate.Inflater is inflate._native.Inflater

