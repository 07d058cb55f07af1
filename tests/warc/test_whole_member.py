"""A record that fills its gzip member is framed where the inflater put it: same records, fewer copies.

The reader's whole-member path (``GzipSource.inflate_member`` and ``reader._whole_member``) must give
exactly what the window path gives, record for record, on good and hostile files, with the compiled
inflater and with its twin; what it does not recognise it hands to the window path untouched.
"""

from __future__ import annotations

import gzip
import io
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.errors import InputError
from ccrawl.warc import source
from ccrawl.warc.inflate import FAST_CAP, InflaterPy
from ccrawl.warc.reader import iter_records
from tests.conftest import native_or_skip
from tests.warc.hostile import http_response, members, warc_record


def _inflaters() -> list[Any]:
    """The twin, and the compiled inflater unless this pass runs the twins only."""
    if accel.extensions_disabled():
        return [InflaterPy]
    return [InflaterPy, native_or_skip("gzinflate").Inflater]


def _rows(data: bytes, fast: Any, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[list[Any], list[str]]:
    """Every record's fields (and the error, if any) with ``fast`` as the whole-member inflater (None: none)."""
    with monkeypatch.context() as m:
        m.setattr(source, "native_inflater", lambda *a, **k: None if fast is None else fast(FAST_CAP))
        skips: list[str] = []
        rows: list[Any] = []
        try:
            for r in iter_records(io.BytesIO(data), skip_bad_records=kw.get("skip", True), on_skip=skips.append,
                                  verify_digests=kw.get("verify", False), parse_http=kw.get("parse_http", True)):
                rows.append((r.index, r.offset, r.length, r.warc_type, r.headers, r.http_status, r.http_headers,
                             r.http_head, r.payload, r.block))
        except InputError as exc:
            rows.append(("error", str(exc)))
        return rows, skips


def _record(i: int, block: bytes | None = None, trailer: bytes = b"\r\n\r\n", length: bytes | None = None) -> bytes:
    """A response record with a chosen trailer and Content-Length text."""
    block = http_response(i) if block is None else block
    head = warc_record(i, block)[: -len(block) - 4]
    if length is not None:
        head = head.replace(b"Content-Length: %d\r\n\r\n" % len(block), b"Content-Length: " + length + b"\r\n\r\n")
    return head + block + trailer


def _z(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _hostile() -> Iterator[tuple[str, bytes]]:
    good = members([warc_record(i) for i in range(4)])
    yield "plain members", b"".join(good)
    yield "a short trailer (CRLF only)", good[0] + _z(_record(1, trailer=b"\r\n")) + good[2]
    yield "no trailer at all", good[0] + _z(_record(1, trailer=b"")) + good[2]
    yield "a longer trailer", good[0] + _z(_record(1, trailer=b"\r\n\r\n\r\n")) + good[2]
    yield "the trailer split over two members", good[0] + _z(_record(1, trailer=b"\r\n")) + _z(b"\r\n") + good[2]
    yield "the next member starts with line breaks", good[0] + _z(b"\r\n" + warc_record(1)) + good[2]
    yield "two records in one member", good[0] + _z(warc_record(1) + warc_record(2)) + good[3]
    yield "junk after the record in its member", good[0] + _z(warc_record(1) + b"junk") + good[2]
    yield "a record cut short in its member", good[0] + _z(warc_record(1)[:-40]) + good[2]
    yield "a Content-Length that lies long", good[0] + _z(_record(1, length=b"99999")) + good[2]
    yield "a Content-Length that lies short", good[0] + _z(_record(1, length=b"20")) + good[2]
    yield "a Content-Length in superscript digits", good[0] + _z(_record(1, length="²³".encode())) + good[2]
    yield "a Content-Length folded over two lines", good[0] + _z(_record(1, length=b"12\r\n 34")) + good[2]
    yield "no Content-Length", good[0] + _z(warc_record(1).replace(b"Content-Length", b"Content-Lenth")) + good[2]
    yield "not a WARC record", good[0] + _z(b"HTTP/1.1 200 OK\r\n\r\nhello\r\n\r\n") + good[2]
    yield "empty members", b"".join(m + gzip.compress(b"", mtime=0) for m in good)
    yield "an HTTP block without a blank line", good[0] + _z(warc_record(1, b"HTTP/1.1 200 OK\r\nX: y")) + good[2]
    yield "HTTP headers ended by LF LF", good[0] + _z(warc_record(1, b"HTTP/1.1 200 OK\nA: b\n\nbody")) + good[2]
    yield "LF LF before a CRLF CRLF", good[0] + _z(warc_record(1, b"HTTP/1.1 200 OK\nA: b\n\nx\r\n\r\ny")) + good[2]
    yield "a block that is not HTTP", good[0] + _z(warc_record(1, b"<html>no status line</html>")) + good[2]
    yield "an empty block", good[0] + _z(warc_record(1, b"")) + good[2]
    meta = warc_record(1, b"fetchTimeMs: 12\r\n").replace(b"WARC-Type: response", b"WARC-Type: metadata")
    yield "a metadata record", good[0] + _z(meta) + good[2]
    digested = warc_record(1).replace(b"WARC-Date:", b"WARC-Block-Digest: sha1:" + b"A" * 32 + b"\r\nWARC-Date:")
    yield "a block digest that does not match", good[0] + _z(digested) + good[2]
    yield "a damaged member after a whole one", good[0] + good[1][:20] + b"\xff" * 30 + good[1][50:] + good[2]
    yield "the file ends inside a member", b"".join(good)[:-7]
    noisy = [_z(warc_record(i, http_response(i, random.Random(i).randbytes(300_000)))) for i in range(8)]
    yield "members across read boundaries", b"".join(noisy)


@pytest.mark.parametrize(("name", "data"), list(_hostile()), ids=lambda v: v if isinstance(v, str) else "")
def test_whole_member_framing_gives_the_window_paths_records_on_hostile_files(
    name: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = _rows(data, None, monkeypatch)
    assert slow[0], name
    for fast in _inflaters():
        assert _rows(data, fast, monkeypatch) == slow, (name, fast)
        for kw in ({"verify": True}, {"parse_http": False}, {"skip": False}):
            assert _rows(data, fast, monkeypatch, **kw) == _rows(data, None, monkeypatch, **kw), (name, fast, kw)


def test_a_record_filling_its_member_keeps_its_location_when_the_next_member_starts_with_line_breaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Before, the reader ran the first record's trailer on into the next member's line breaks and
    # lost its length; a record that fills its member is located by it, on either path.
    first, second = _z(warc_record(0)), _z(b"\r\n" + warc_record(1))
    for fast in [None, *_inflaters()]:
        rows, skips = _rows(first + second, fast, monkeypatch)
        # the second starts two bytes into its member: no (offset, length) can name it alone
        assert [(r[1], r[2]) for r in rows] == [(0, len(first)), (None, None)], fast
        assert [s for s in skips if "cannot locate" not in s] == []


def test_a_content_length_in_other_digits_is_a_bad_record_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _z(_record(0, length="١٢".encode())) + _z(warc_record(1))
    for fast in [None, *_inflaters()]:
        rows, skips = _rows(data, fast, monkeypatch)
        assert [r[0] for r in rows] == [1] and "no Content-Length" in skips[0], fast
        (error,), _ = _rows(data, fast, monkeypatch, skip=False)
        assert error[0] == "error" and "offset 0 (record 1)" in error[1]


def test_the_block_is_the_http_head_and_the_payload_as_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    block = http_response(3, body=b"<p>x</p>" * 100)
    for fast in [None, *_inflaters()]:
        (row,), _ = _rows(_z(warc_record(3, block)), fast, monkeypatch)
        http_head, payload, whole = row[7], row[8], row[9]
        assert whole == block and http_head + payload == block and http_head.endswith(b"\r\n\r\n")
        assert payload == b"<p>x</p>" * 100 and row[5] == 200


def test_common_crawl_members_are_framed_without_the_window() -> None:
    """Not only equal output: each member was framed from the inflater, and the window never held it."""
    recs = [warc_record(i) for i in range(5)]
    data = b"".join(members(recs))
    for make in _inflaters():
        spills: list[int] = []
        src_type = source.GzipSource
        real_spill = src_type.spill_member

        def counting(self: source.GzipSource, _real: Any = real_spill, _spills: list[int] = spills) -> None:
            _spills.append(1)
            _real(self)

        with pytest.MonkeyPatch.context() as m:
            m.setattr(source, "native_inflater", lambda *a, _make=make, **k: _make(FAST_CAP))
            m.setattr(src_type, "spill_member", counting)
            got = list(iter_records(io.BytesIO(data)))
        assert [r.payload for r in got] == [http_response(i)[http_response(i).index(b"\r\n\r\n") + 4 :]
                                           for i in range(5)]
        assert not spills, make


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=3000), needle=st.binary(min_size=1, max_size=4),
       start=st.integers(-5, 3100), stop=st.integers(-5, 3100))
def test_the_twins_agree_on_find_and_slice_over_the_inflated_member(
    data: bytes, needle: bytes, start: int, stop: int
) -> None:
    member = gzip.compress(data, mtime=0)
    seen = []
    for make in _inflaters():
        inf = make(FAST_CAP)
        ok = inf.inflate(member, 0)
        buf = bytearray(b"x")
        inf.spill(buf)
        seen.append((ok, inf.made, inf.find(needle, start, stop), inf.slice(start, stop), bytes(buf)))
    assert all(s == seen[0] for s in seen), seen
    ok, made, at, part, buf = seen[0]
    assert ok == (True, len(member), len(data)) and made == len(data) and buf == b"x" + data
    clip = data[max(start, 0) : max(stop, 0)]
    assert part == clip
    assert at == data.find(needle, max(start, 0), max(stop, 0))


def test_a_member_the_inflater_refuses_leaves_nothing_held() -> None:
    for make in _inflaters():
        inf = make(FAST_CAP)
        assert inf.inflate(gzip.compress(b"abc", mtime=0), 0)[0]
        assert inf.inflate(b"not gzip at all, not at all", 0) == (False, 0, 0)
        assert inf.made == 0 and inf.slice(0, 10) == b"" and inf.find(b"a", 0, 10) == -1


def test_member_bounds_behind_the_reader_are_forgotten_on_the_whole_member_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file of many members keeps a bounded table of member bounds, whichever path frames them."""
    data = b"".join(members([warc_record(i, b"x") for i in range(3000)]))
    seen: list[source.GzipSource] = []
    real_init = source.GzipSource.__init__

    def keep(self: source.GzipSource, *a: Any, **k: Any) -> None:
        real_init(self, *a, **k)
        seen.append(self)

    monkeypatch.setattr(source.GzipSource, "__init__", keep)
    for fast in [None, *_inflaters()]:
        seen.clear()
        with monkeypatch.context() as m:
            m.setattr(source, "native_inflater", lambda *a, _f=fast, **k: None if _f is None else _f(FAST_CAP))
            assert sum(1 for _ in iter_records(io.BytesIO(data))) == 3000
        (src,) = seen
        assert len(src.member_starts) <= 1025 and len(src.starts) <= 1025 and len(src.ends) <= 1025, fast
