"""Collapsed stacks to pprof protobuf, written by hand (no maintained pprof writer is on PyPI).

A collapsed line is ``root;caller;leaf count``, as py-spy's ``--format raw`` writes it, with
frames like ``function (path/file.py:123)``. The profile has one sample type, ``samples/count``;
every distinct frame becomes one Function and one Location (line numbers kept on the Line), and
a sample lists its locations leaf first, as pprof expects.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

_FRAME = re.compile(r"^(?P<name>.*?)(?: \((?P<file>[^():]*?)(?::(?P<line>\d+))?\))?$")


def parse_collapsed(lines: Iterable[str]) -> Iterator[tuple[list[str], int]]:
    """(frames root first, count) for each well-formed line; blank and malformed lines are skipped."""
    for line in lines:
        line = line.rstrip("\n")
        stack, sep, count = line.rpartition(" ")
        if not sep or not count.isdigit() or not stack:
            continue
        yield stack.split(";"), int(count)


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value) if value else b""


def _field_bytes(number: int, payload: bytes) -> bytes:
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


def _packed(number: int, values: Iterable[int]) -> bytes:
    body = b"".join(_varint(v) for v in values)
    return _field_bytes(number, body) if body else b""


class _Strings:
    def __init__(self) -> None:
        self.table: list[str] = [""]
        self.index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.table)
            self.table.append(text)
        return self.index[text]


def collapsed_to_pprof(lines: Iterable[str], *, period_ns: int = 10_000_000, duration_ns: int = 0) -> bytes:
    """The gzipped pprof protobuf for collapsed-stack ``lines``."""
    strings = _Strings()
    sample_type = _field_varint(1, strings("samples")) + _field_varint(2, strings("count"))
    period_type = _field_varint(1, strings("cpu")) + _field_varint(2, strings("nanoseconds"))
    functions: dict[tuple[str, str], int] = {}
    locations: dict[tuple[int, int], int] = {}
    out = bytearray(_field_bytes(1, sample_type))
    for frames, count in parse_collapsed(lines):
        location_ids = []
        for frame in reversed(frames):  # pprof wants the leaf first
            m = _FRAME.match(frame)
            assert m is not None  # the pattern matches any string
            name, filename, line = m.group("name") or frame, m.group("file") or "", int(m.group("line") or 0)
            fid = functions.setdefault((name, filename), len(functions) + 1)
            lid = locations.setdefault((fid, line), len(locations) + 1)
            location_ids.append(lid)
        sample = _packed(1, location_ids) + _packed(2, [count])
        out += _field_bytes(2, sample)
    for (fid, line), lid in locations.items():
        line_msg = _field_varint(1, fid) + _field_varint(2, line)
        out += _field_bytes(4, _field_varint(1, lid) + _field_bytes(4, line_msg))
    for (name, filename), fid in functions.items():
        n = strings(name)
        fn = _field_varint(1, fid) + _field_varint(2, n) + _field_varint(3, n) + _field_varint(4, strings(filename))
        out += _field_bytes(5, fn)
    for text in strings.table:
        out += _field_bytes(6, text.encode("utf-8"))
    out += _field_varint(10, duration_ns)
    out += _field_bytes(11, period_type)
    out += _field_varint(12, period_ns)
    return gzip.compress(bytes(out), mtime=0)


def convert_file(collapsed: Path, pprof: Path, *, rate_hz: int = 100, duration_s: float = 0.0) -> None:
    """Write ``pprof`` (``.pb.gz``) from the collapsed file ``collapsed``."""
    with open(collapsed, encoding="utf-8", errors="replace") as fh:
        data = collapsed_to_pprof(fh, period_ns=int(1e9 / rate_hz), duration_ns=int(duration_s * 1e9))
    pprof.write_bytes(data)
