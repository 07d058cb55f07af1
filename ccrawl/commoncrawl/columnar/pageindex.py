"""Page-level reads: the Parquet page index, and decoding a run of pages without the rest of the chunk.

pyarrow writes the page index (ColumnIndex: min/max per page; OffsetIndex: where each page is and
its first row) but cannot read it, nor decode part of a column chunk. Both are small Thrift
structures in the compact protocol, so this module reads them itself:

* :func:`decode` / :func:`encode`: a typed Thrift compact-protocol codec (values keep their wire
  type, so a decoded structure re-encodes byte for byte);
* :func:`footer_chunks`: per row group and column, the page-index offsets pyarrow does not expose;
* :func:`page_rows`: which pages of the sorted ``url_surtkey`` column can hold a prefix, as row spans;
* :func:`read_pages`: the rows ``[lo, hi)`` of one column chunk, fetching only the dictionary page and
  the data pages that cover them: those pages are wrapped in a one-column Parquet file of their own
  (the original footer's schema element and column metadata, offsets rewritten) that pyarrow decodes.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ccrawl import accel
from ccrawl.errors import InputError

# Compact-protocol wire types.
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)

Value = tuple[int, Any]
"""(wire type, value): a struct is ``dict[field id, Value]``, a list ``(element type, [raw values])``."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise InputError("parquet footer: Thrift data ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        data, pos = self.data, self.pos
        shift = result = 0
        try:
            while True:
                b = data[pos]
                pos += 1
                result |= (b & 0x7F) << shift
                if not b & 0x80:
                    self.pos = pos
                    return result
                shift += 7
                if shift > 70:
                    raise InputError("parquet footer: a varint runs on")
        except IndexError:
            raise InputError("parquet footer: Thrift data ends early") from None

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, wtype: int) -> Any:
        if wtype in (I16, I32, I64):
            n = self.varint()
            return (n >> 1) ^ -(n & 1)
        if wtype in (TRUE, FALSE):
            return wtype == TRUE
        if wtype == BYTE:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if wtype == DOUBLE:
            v = struct.unpack("<d", self.data[self.pos : self.pos + 8])[0]
            self.pos += 8
            return v
        if wtype == BINARY:
            n = self.varint()
            v = self.data[self.pos : self.pos + n]
            if len(v) != n:
                raise InputError("parquet footer: a string runs past the end")
            self.pos += n
            return v
        if wtype in (LIST, SET):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if etype in (TRUE, FALSE):
                return (etype, [self.byte() == TRUE for _ in range(size)])
            return (etype, [self.value(etype) for _ in range(size)])
        if wtype == MAP:
            size = self.varint()
            if size == 0:
                return (0, 0, [])
            kv = self.byte()
            kt, vt = kv >> 4, kv & 0x0F
            return (kt, vt, [(self.value(kt), self.value(vt)) for _ in range(size)])
        if wtype == STRUCT:
            sub, self.pos = _struct(self.data, self.pos)
            return sub
        raise InputError(f"parquet footer: unknown Thrift type {wtype}")

    def struct(self) -> dict[int, Value]:
        out: dict[int, Value] = {}
        last = 0
        data = self.data
        while True:
            if self.pos >= len(data):
                raise InputError("parquet footer: Thrift data ends early")
            head = data[self.pos]
            self.pos += 1
            wtype = head & 0x0F
            if wtype == STOP:
                return out
            delta = head >> 4
            fid = last + delta if delta else self.zigzag()
            out[fid] = (wtype, self.value(wtype))
            last = fid


def decode(data: bytes, pos: int = 0) -> tuple[dict[int, Value], int]:
    """A struct from ``data`` at ``pos``, and where it ended."""
    try:
        return _struct(data, pos)
    except IndexError:
        raise InputError("parquet footer: Thrift data ends early") from None


def _struct(data: bytes, pos: int) -> tuple[dict[int, Value], int]:
    # The hot loop of footer decoding: varints and field headers inline, no method calls.
    out: dict[int, Value] = {}
    last = 0
    while True:
        head = data[pos]
        pos += 1
        wtype = head & 0x0F
        if wtype == STOP:
            return out, pos
        delta = head >> 4
        if delta:
            fid = last + delta
        else:
            shift = n = 0
            while True:
                b = data[pos]
                pos += 1
                n |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
            fid = (n >> 1) ^ -(n & 1)
        if wtype in (I32, I64, I16):
            shift = n = 0
            while True:
                b = data[pos]
                pos += 1
                n |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
                if shift > 70:
                    raise InputError("parquet footer: a varint runs on")
            out[fid] = (wtype, (n >> 1) ^ -(n & 1))
        elif wtype == BINARY:
            shift = n = 0
            while True:
                b = data[pos]
                pos += 1
                n |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
                shift += 7
            if pos + n > len(data):
                raise InputError("parquet footer: a string runs past the end")
            out[fid] = (BINARY, data[pos : pos + n])
            pos += n
        elif wtype == STRUCT:
            sub, pos = _struct(data, pos)
            out[fid] = (STRUCT, sub)
        else:
            r = _Reader(data)
            r.pos = pos
            out[fid] = (wtype, r.value(wtype))
            pos = r.pos
        last = fid


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


def _encode_value(wtype: int, v: Any, out: bytearray) -> None:
    if wtype in (TRUE, FALSE):
        return  # carried in the field header
    if wtype == BYTE:
        out += struct.pack("b", v)
    elif wtype in (I16, I32, I64):
        out += _zigzag(int(v))
    elif wtype == DOUBLE:
        out += struct.pack("<d", v)
    elif wtype == BINARY:
        out += _varint(len(v)) + bytes(v)
    elif wtype in (LIST, SET):
        etype, items = v
        out.append((min(len(items), 15) << 4) | etype)
        if len(items) >= 15:
            out += _varint(len(items))
        for item in items:
            if etype in (TRUE, FALSE):
                out.append(TRUE if item else FALSE)
            else:
                _encode_value(etype, item, out)
    elif wtype == MAP:
        kt, vt, items = v
        out += _varint(len(items))
        if items:
            out.append((kt << 4) | vt)
            for k, val in items:
                _encode_value(kt, k, out)
                _encode_value(vt, val, out)
    elif wtype == STRUCT:
        _encode_struct(v, out)
    else:
        raise ValueError(f"unknown Thrift type {wtype}")


def _encode_struct(fields: dict[int, Value], out: bytearray) -> None:
    last = 0
    for fid in sorted(fields):
        wtype, v = fields[fid]
        if wtype in (TRUE, FALSE):
            wtype = TRUE if v else FALSE
        last = _put_header(out, fid, last, wtype)
        _encode_value(wtype, v, out)
    out.append(STOP)


def encode(fields: dict[int, Value]) -> bytes:
    out = bytearray()
    _encode_struct(fields, out)
    return bytes(out)


def _get(s: dict[int, Value], fid: int, default: Any = None) -> Any:
    v = s.get(fid)
    return default if v is None else v[1]


@dataclass(slots=True, frozen=True)
class ChunkIndex:
    """One column chunk's place in the file and its page-index locations (offset, length) or None."""

    chunk: dict[int, Value]
    schema_element: dict[int, Value]
    column_order: Value | None
    offset_index: tuple[int, int] | None
    column_index: tuple[int, int] | None


@dataclass(slots=True, frozen=True)
class Footer:
    """The decoded FileMetaData, kept for rewriting one-column files."""

    meta: dict[int, Value]

    def chunk(self, rg: int, col: int) -> ChunkIndex:
        row_groups = _get(self.meta, 4)[1]
        cc: dict[int, Value] = _get(row_groups[rg], 1)[1][col]
        schema = _get(self.meta, 2)[1]
        orders = _get(self.meta, 7)
        oi = (_get(cc, 4), _get(cc, 5)) if 4 in cc and 5 in cc else None
        ci = (_get(cc, 6), _get(cc, 7)) if 6 in cc and 7 in cc else None
        return ChunkIndex(cc, schema[col + 1], (STRUCT, orders[1][col]) if orders else None, oi, ci)


def footer_of(tail: bytes) -> Footer:
    """The FileMetaData at the end of ``tail`` (which must hold the whole footer)."""
    if tail[-4:] != b"PAR1":
        raise InputError("not a Parquet file (no PAR1 at its end)")
    n = int.from_bytes(tail[-8:-4], "little")
    if n + 8 > len(tail):
        raise InputError("parquet footer longer than the bytes read")
    meta, _ = decode(tail, len(tail) - 8 - n)
    return Footer(meta)


def _skip(data: bytes, pos: int, wtype: int) -> int:
    """Where the value of type ``wtype`` at ``pos`` ends, nothing built (the footer walk's inner loop)."""
    if wtype in (I32, I64, I16):
        while data[pos] & 0x80:
            pos += 1
        return pos + 1
    if wtype == BINARY:
        shift = n = 0
        while True:
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        if pos + n > len(data):
            raise InputError("parquet footer: a string runs past the end")
        return pos + n
    if wtype == STRUCT:
        return _skip_struct(data, pos)
    if wtype in (TRUE, FALSE):
        return pos
    if wtype == BYTE:
        return pos + 1
    if wtype == DOUBLE:
        return pos + 8
    r = _Reader(data)
    r.pos = pos
    r.value(wtype)  # lists, sets and maps: rare in a footer outside row groups' own fields
    return r.pos


def _skip_struct(data: bytes, pos: int) -> int:
    # Field headers, varints, strings and int lists inline: a ColumnMetaData is mostly these.
    while True:
        head = data[pos]
        pos += 1
        wtype = head & 0x0F
        if wtype == STOP:
            return pos
        if not head >> 4:
            while data[pos] & 0x80:
                pos += 1
            pos += 1
        if wtype in (I64, I32, I16):
            while data[pos] & 0x80:
                pos += 1
            pos += 1
        elif wtype == BINARY:
            b = data[pos]
            pos += 1
            if b & 0x80:
                n, shift = b & 0x7F, 7
                while True:
                    b = data[pos]
                    pos += 1
                    n |= (b & 0x7F) << shift
                    if not b & 0x80:
                        break
                    shift += 7
            else:
                n = b
            pos += n
            if pos > len(data):
                raise InputError("parquet footer: a string runs past the end")
        elif wtype == STRUCT:
            pos = _skip_struct(data, pos)
        elif wtype == LIST:
            lh = data[pos]
            pos += 1
            size, etype = lh >> 4, lh & 0x0F
            if size == 15:
                size, pos = _uvarint_at(data, pos)
            if etype in (I32, I64, I16):
                for _ in range(size):
                    while data[pos] & 0x80:
                        pos += 1
                    pos += 1
            elif etype == STRUCT:
                for _ in range(size):
                    pos = _skip_struct(data, pos)
            elif etype in (TRUE, FALSE, BYTE):
                pos += size
            else:
                for _ in range(size):
                    pos = _skip(data, pos, etype)
        elif wtype not in (TRUE, FALSE):
            pos = _skip(data, pos, wtype)


def _uvarint_at(data: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7
        if shift > 70:
            raise InputError("parquet footer: a varint runs on")


def _int_at(data: bytes, pos: int) -> tuple[int, int]:
    n, pos = _uvarint_at(data, pos)
    return (n >> 1) ^ -(n & 1), pos


def _list_head(data: bytes, pos: int) -> tuple[int, int, int]:
    lh = data[pos]
    pos += 1
    size, etype = lh >> 4, lh & 0x0F
    if size == 15:
        size, pos = _uvarint_at(data, pos)
    return size, etype, pos


@dataclass(slots=True)
class FooterIndex:
    """A footer walked, not decoded: per row group and column where its page index and its metadata are.

    The walk skips over every value it does not keep, so it costs a fraction of :func:`footer_of`; a
    chunk's ColumnMetaData is decoded only when asked for (:meth:`chunk`), and a one-column file is
    built from slices of the footer's own bytes (:meth:`template`). ``meta`` (decoded when first
    asked for) holds the top-level fields except the row groups and the key-value metadata.
    """

    data: bytes
    #: (field id, wire type, where its value starts) of the top-level fields but the row groups and key-values
    top: list[tuple[int, int, int]]
    #: [row group][column] -> (offset index, column index, where the ColumnMetaData struct starts or -1)
    places: list[list[tuple[tuple[int, int] | None, tuple[int, int] | None, int]]]
    _chunks: dict[tuple[int, int], ChunkIndex] = field(default_factory=dict)
    _meta: dict[int, Value] | None = None
    _templates: dict[tuple[int, int], MiniTemplate | None] = field(default_factory=dict)
    _shared: dict[str, Any] = field(default_factory=dict)

    @property
    def meta(self) -> dict[int, Value]:
        if self._meta is None:
            meta: dict[int, Value] = {}
            try:
                for fid, wtype, pos in self.top:
                    r = _Reader(self.data)
                    r.pos = pos
                    meta[fid] = (wtype, r.value(wtype))
            except IndexError:
                raise InputError("parquet footer: Thrift data ends early") from None
            self._meta = meta
        return self._meta

    def locations(self, rg: int, col: int) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """(OffsetIndex, ColumnIndex) of a chunk as (offset, length), each None when not written."""
        oi, ci, _ = self.places[rg][col]
        return oi, ci

    def chunk(self, rg: int, col: int) -> ChunkIndex:
        hit = self._chunks.get((rg, col))
        if hit is None:
            oi, ci, at = self.places[rg][col]
            cc: dict[int, Value] = {}
            if at >= 0:
                cc[3] = (STRUCT, decode(self.data, at)[0])
            schema = _get(self.meta, 2)[1]
            orders = _get(self.meta, 7)
            hit = ChunkIndex(cc, schema[col + 1], (STRUCT, orders[1][col]) if orders else None, oi, ci)
            self._chunks[(rg, col)] = hit
        return hit

    def leaf(self, name: str) -> int | None:
        """The column number of top-level leaf ``name`` in a flat schema (None: not there, or a nested schema)."""
        top = {fid: (wtype, pos) for fid, wtype, pos in self.top}
        if top.get(2, (0, 0))[0] != LIST:
            return None
        try:
            etype, schema = _elements(self.data, top[2][1])
            if etype != STRUCT:
                return None
            for col, (start, _) in enumerate(schema[1:]):
                got = {fid: (wtype, a, b) for fid, wtype, a, b in _fields(self.data, start)[0]}
                if 5 in got:  # num_children: a group, so columns are not one element each
                    return None
                if got.get(4, (0,))[0] == BINARY and _binary(self.data, got[4][1]) == name.encode():
                    return col
        except (IndexError, ValueError):
            return None
        return None

    def string_range(self, rg: int, col: int) -> tuple[str, str] | None:
        """The min and max of a string column chunk from its Statistics' min_value/max_value, when the file
        says they follow the type's order (TypeDefinedOrder); None when it does not, or they are not there."""
        top = {fid: (wtype, pos) for fid, wtype, pos in self.top}
        at = self.places[rg][col][2]
        if at < 0 or top.get(7, (0, 0))[0] != LIST:
            return None
        try:
            orders = self._shared.get("order_spans")
            if orders is None:
                orders = self._shared["order_spans"] = _elements(self.data, top[7][1])[1]
            if col >= len(orders) or [f[0] for f in _fields(self.data, orders[col][0])[0]] != [1]:
                return None
            stats = {fid: (wtype, a) for fid, wtype, a, _ in _fields(self.data, at)[0]}.get(12)
            if stats is None or stats[0] != STRUCT:
                return None
            got = {fid: (wtype, a) for fid, wtype, a, _ in _fields(self.data, stats[1])[0]}
            if got.get(5, (0,))[0] != BINARY or got.get(6, (0,))[0] != BINARY:
                return None
            return _binary(self.data, got[6][1]).decode("utf-8"), _binary(self.data, got[5][1]).decode("utf-8")
        except (IndexError, ValueError):  # UnicodeDecodeError is a ValueError
            return None

    def template(self, rg: int, col: int) -> MiniTemplate | None:
        """What a one-column file of this chunk keeps from the footer, as byte slices of it (None: a footer
        this shortcut does not cover, such as one without a schema; :func:`mini_file` then does it)."""
        key = (rg, col)
        if key not in self._templates:
            with thrift_errors("parquet footer"):
                self._templates[key] = self._template(rg, col)
        return self._templates[key]

    def _template(self, rg: int, col: int) -> MiniTemplate | None:
        data = self.data
        at = self.places[rg][col][2]
        top = {fid: (wtype, pos) for fid, wtype, pos in self.top}
        if at < 0 or 1 not in top or 2 not in top or top[2][0] != LIST:
            return None
        shared = self._shared
        if "schema" not in shared:
            etype, schema = _elements(data, top[2][1])
            if etype != STRUCT or not schema:
                return None
            root = decode(data, schema[0][0])[0]
            root[5] = (I32, 1)
            shared["schema"] = schema
            shared["root"] = encode(root)
            orders = top.get(7)
            shared["orders"] = _elements(data, orders[1])[1] if orders is not None and orders[0] == LIST else None
        schema, orders = shared["schema"], shared["orders"]
        if col + 1 >= len(schema) or (orders is not None and col >= len(orders)):
            return None
        version_type, version_at = top[1]
        head = bytearray()
        last = _put_header(head, 1, 0, version_type)
        head += data[version_at : _skip(data, version_at, version_type)]
        last = _put_header(head, 2, last, LIST)
        head.append((2 << 4) | STRUCT)
        head += shared["root"]
        head += data[schema[col + 1][0] : schema[col + 1][1]]
        tail = bytearray()
        last = 4
        if 6 in top:
            wtype, pos = top[6]
            last = _put_header(tail, 6, last, wtype)
            tail += data[pos : _skip(data, pos, wtype)]
        if orders is not None:
            last = _put_header(tail, 7, last, LIST)
            tail.append((1 << 4) | STRUCT)
            tail += data[orders[col][0] : orders[col][1]]
        tail.append(STOP)
        kept = [(fid, wtype, bytes(data[a:b])) for fid, wtype, a, b in _fields(data, at)[0]
                if fid not in _MINI_DROPPED and fid not in _MINI_SET]
        return MiniTemplate(bytes(head), bytes(tail), kept)


#: ColumnMetaData fields a one-column file leaves out (index page, statistics, encoding stats, bloom
#: filter, size statistics) and those it sets (counts, sizes and offsets of its own).
_MINI_DROPPED = frozenset((10, 12, 13, 14, 15, 16))
_MINI_SET = frozenset((5, 6, 7, 9, 11))


@dataclass(slots=True, frozen=True)
class MiniTemplate:
    """A one-column file's footer but for its sizes: FileMetaData fields 1-2 (version; the schema root with
    one child and the column's element) encoded, fields 6-7 (created_by; the column's order) and the end,
    and the column's ColumnMetaData fields that are kept as (id, wire type, value bytes)."""

    head: bytes
    tail: bytes
    kept: list[tuple[int, int, bytes]]


def _binary(data: bytes, pos: int) -> bytes:
    """The Thrift string at ``pos``."""
    n, pos = _uvarint_at(data, pos)
    if pos + n > len(data):
        raise ValueError("parquet footer: a string runs past the end")
    return data[pos : pos + n]


def _put_header(out: bytearray, fid: int, last: int, wtype: int) -> int:
    delta = fid - last
    if 0 < delta <= 15:
        out.append((delta << 4) | wtype)
    else:
        out.append(wtype)
        out += _zigzag(fid)
    return fid


def footer_index(tail: bytes) -> FooterIndex:
    """The FileMetaData at the end of ``tail`` (which must hold the whole footer), walked."""
    if tail[-4:] != b"PAR1":
        raise InputError("not a Parquet file (no PAR1 at its end)")
    n = int.from_bytes(tail[-8:-4], "little")
    if n + 8 > len(tail):
        raise InputError("parquet footer longer than the bytes read")
    data = bytes(tail[len(tail) - 8 - n : len(tail) - 8])
    with thrift_errors("parquet footer"):  # ValueError: the compiled walk's word for a malformed value
        places, top = walk(data)
    return FooterIndex(data, top, places)


Places = list[list[tuple[tuple[int, int] | None, tuple[int, int] | None, int]]]


def _field_head(data: bytes, pos: int, last: int) -> tuple[int, int, int]:
    """A compact-protocol field header at ``pos``: (field id, wire type, position after it); the id is
    ``last`` plus the header's delta, or a zigzag varint after it; wire type STOP ends the struct."""
    head = data[pos]
    wtype = head & 0x0F
    if wtype == STOP:
        return 0, STOP, pos + 1
    delta = head >> 4
    if delta:
        return last + delta, wtype, pos + 1
    fid, pos = _int_at(data, pos + 1)
    return fid, wtype, pos


def walk_py(data: bytes) -> tuple[Places, list[tuple[int, int, int]]]:
    """The footer walk (twin of the compiled ``ccrawl._native.pqfooter.walk``): per row group and column
    (OffsetIndex, ColumnIndex, where the ColumnMetaData starts or -1), and where each other top-level
    field starts, as (field id, wire type, position); the key-value metadata is skipped."""
    places: Places = []
    top: list[tuple[int, int, int]] = []
    pos = last = 0
    while True:
        fid, wtype, pos = _field_head(data, pos, last)
        if wtype == STOP:
            return places, top
        last = fid
        if fid == 4 and wtype == LIST:
            size, _, pos = _list_head(data, pos)
            for _ in range(size):
                row, pos = _walk_row_group(data, pos)
                places.append(row)
        else:
            if fid != 5:
                top.append((fid, wtype, pos))
            pos = _skip(data, pos, wtype)


def _walk_row_group(data: bytes, pos: int) -> tuple[list[tuple[tuple[int, int] | None, tuple[int, int] | None, int]],
                                                       int]:
    row: list[tuple[tuple[int, int] | None, tuple[int, int] | None, int]] = []
    last = 0
    while True:
        fid, wtype, pos = _field_head(data, pos, last)
        if wtype == STOP:
            return row, pos
        last = fid
        if fid == 1 and wtype == LIST:
            size, _, pos = _list_head(data, pos)
            for _ in range(size):
                place, pos = _walk_column_chunk(data, pos)
                row.append(place)
        else:
            pos = _skip(data, pos, wtype)


def _walk_column_chunk(data: bytes, pos: int) -> tuple[tuple[tuple[int, int] | None, tuple[int, int] | None, int],
                                                       int]:
    found: dict[int, int] = {}
    at = -1
    last = 0
    while True:
        fid, wtype, pos = _field_head(data, pos, last)
        if wtype == STOP:
            break
        last = fid
        if 4 <= fid <= 7 and wtype in (I32, I64):
            found[fid], pos = _int_at(data, pos)
        elif fid == 3 and wtype == STRUCT:
            at = pos
            pos = _skip_struct(data, pos)
        else:
            pos = _skip(data, pos, wtype)
    oi = (found[4], found[5]) if 4 in found and 5 in found else None
    ci = (found[6], found[7]) if 6 in found and 7 in found else None
    return (oi, ci, at), pos


@dataclass(slots=True, frozen=True)
class Pages:
    """A column chunk's pages: byte offsets, sizes and first rows, from its OffsetIndex."""

    offsets: list[int]
    sizes: list[int]
    first_rows: list[int]


def offset_index_py(data: bytes) -> tuple[list[int], list[int], list[int]]:
    """(offsets, sizes, first rows) of the pages an OffsetIndex lists (twin of the compiled
    ``ccrawl._native.pqfooter.offset_index``)."""
    s, _ = decode(data)
    locs = _get(s, 1)
    if locs is None:
        raise ValueError("parquet page index: an OffsetIndex without page locations")
    if locs[0] != STRUCT:
        raise ValueError("parquet page index: page locations are not structs")
    out: tuple[list[int], list[int], list[int]] = ([], [], [])
    for p in locs[1]:
        got = [p.get(fid) for fid in (1, 2, 3)]
        if any(v is None or v[0] not in (I32, I64) for v in got):
            raise ValueError("parquet page index: a page location lacks a field")
        for k in range(3):
            out[k].append(got[k][1])
    return out


def column_index_py(data: bytes) -> tuple[list[bool], list[bytes], list[bytes]]:
    """(null pages, min values, max values) of a ColumnIndex, the bounds as bytes (twin of the compiled
    ``ccrawl._native.pqfooter.column_index``)."""
    s, _ = decode(data)
    got = [s.get(fid) for fid in (1, 2, 3)]
    if any(v is None or v[0] != LIST for v in got):
        raise ValueError("parquet page index: a ColumnIndex without its page bounds")
    (nt, nulls), (mt, mins), (xt, maxs) = (v[1] for v in got)  # type: ignore[index]
    if nt not in (TRUE, FALSE):
        raise ValueError("parquet page index: null pages are not booleans")
    if mt != BINARY or xt != BINARY:
        raise ValueError("parquet page index: page bounds are not binary")
    if not len(nulls) == len(mins) == len(maxs):
        raise ValueError("parquet page index: a ColumnIndex without its page bounds")
    return [bool(v) for v in nulls], list(mins), list(maxs)


@contextlib.contextmanager
def thrift_errors(what: str) -> Iterator[None]:
    """Decoding failures inside as one InputError about ``what``: Thrift that ends early (IndexError)
    or is malformed (ValueError, the compiled decoders' word for it)."""
    try:
        yield
    except IndexError:
        raise InputError(f"{what}: Thrift data ends early") from None
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc)) from None


def offset_index(data: bytes) -> Pages:
    """A chunk's pages, from its OffsetIndex."""
    with thrift_errors("parquet page index"):
        offsets, sizes, first_rows = _offset_index(bytes(data))
    return Pages(offsets, sizes, first_rows)


def column_index_bounds(data: bytes) -> list[tuple[bytes, bytes] | None]:
    """Per page (min, max) as bytes, or None for an all-null page."""
    with thrift_errors("parquet page index"):
        nulls, mins, maxs = _column_index(bytes(data))
    return [None if null else (lo, hi) for null, lo, hi in zip(nulls, mins, maxs, strict=True)]


def matching_spans(
    bounds: Sequence[tuple[bytes, bytes] | None], first_rows: Sequence[int], num_rows: int,
    may_match: Callable[[str, str], bool],
) -> list[tuple[int, int]]:
    """Row spans ``[lo, hi)`` of the pages whose min..max may match, adjacent pages merged."""
    spans: list[tuple[int, int]] = []
    for i, b in enumerate(bounds):
        if b is None:
            continue
        lo = b[0].decode("utf-8", "replace")
        hi = b[1].decode("utf-8", "replace")
        if not may_match(lo, hi):
            continue
        start = first_rows[i]
        end = first_rows[i + 1] if i + 1 < len(first_rows) else num_rows
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def mini_file(footer: Footer | FooterIndex, ci: ChunkIndex, pages: Pages, first: int, last: int, num_rows: int,
              dict_bytes: bytes, data_bytes: bytes) -> tuple[bytes, int]:
    """A one-column Parquet file holding the dictionary page and data pages ``first..last``.

    Returns the file and the row number (within the row group) of its first row.
    """
    meta = dict(_get(ci.chunk, 3))
    row0 = pages.first_rows[first]
    row_end = pages.first_rows[last + 1] if last + 1 < len(pages.first_rows) else num_rows
    n = row_end - row0
    pos = 4
    if dict_bytes:
        meta[11] = (I64, pos)
        pos += len(dict_bytes)
    else:
        meta.pop(11, None)
    meta[9] = (I64, pos)
    meta[7] = (I64, len(dict_bytes) + len(data_bytes))
    meta[6] = (I64, len(dict_bytes) + len(data_bytes))
    meta[5] = (I64, n)
    for fid in (10, 12, 13, 14, 15, 16):
        meta.pop(fid, None)
    chunk: dict[int, Value] = {2: (I64, 4), 3: (STRUCT, meta)}
    root = dict(_get(footer.meta, 2)[1][0])
    root[5] = (I32, 1)
    out_meta: dict[int, Value] = {
        1: footer.meta[1],
        2: (LIST, (STRUCT, [root, ci.schema_element])),
        3: (I64, n),
        4: (LIST, (STRUCT, [{1: (LIST, (STRUCT, [chunk])), 2: (I64, len(dict_bytes) + len(data_bytes)),
                             3: (I64, n)}])),
    }
    if 6 in footer.meta:
        out_meta[6] = footer.meta[6]  # created_by: readers work around known writer bugs by it
    if ci.column_order is not None:
        out_meta[7] = (LIST, (STRUCT, [ci.column_order[1]]))
    body = encode(out_meta)
    return b"PAR1" + dict_bytes + data_bytes + body + len(body).to_bytes(4, "little") + b"PAR1", row0


def mini_file_of(template: MiniTemplate, pages: Pages, first: int, last: int, num_rows: int, dict_bytes: bytes,
                 data_bytes: bytes) -> tuple[bytes, int]:
    """:func:`mini_file` from a :meth:`FooterIndex.template`: the same bytes, from slices of the footer."""
    row0 = pages.first_rows[first]
    row_end = pages.first_rows[last + 1] if last + 1 < len(pages.first_rows) else num_rows
    n = row_end - row0
    size = len(dict_bytes) + len(data_bytes)
    set_: dict[int, int] = {5: n, 6: size, 7: size, 9: 4 + len(dict_bytes)}
    if dict_bytes:
        set_[11] = 4
    meta = bytearray()
    at = 0
    for fid, wtype, value in sorted([*template.kept, *((fid, I64, b"") for fid in set_)]):
        at = _put_header(meta, fid, at, wtype)
        meta += _zigzag(set_[fid]) if fid in set_ and not value else value
    meta.append(STOP)
    nz = _zigzag(n)
    body = b"".join((
        template.head, bytes(((1 << 4) | I64,)), nz, bytes(((1 << 4) | LIST, (1 << 4) | STRUCT,
                                                              (1 << 4) | LIST, (1 << 4) | STRUCT,
                                                              (2 << 4) | I64)), _zigzag(4),
        bytes(((1 << 4) | STRUCT,)), meta, bytes((STOP, (1 << 4) | I64)), _zigzag(size), bytes(((1 << 4) | I64,)), nz,
        bytes((STOP,)), template.tail,
    ))
    return b"PAR1" + dict_bytes + data_bytes + body + len(body).to_bytes(4, "little") + b"PAR1", row0


def fields_py(data: bytes, pos: int) -> tuple[list[tuple[int, int, int, int]], int]:
    """The fields of the struct at ``pos``: [(field id, wire type, value start, value end)], and where it ends
    (twin of the compiled ``ccrawl._native.pqfooter.fields``)."""
    if pos < 0:
        raise ValueError("parquet footer: a struct before the start")
    out: list[tuple[int, int, int, int]] = []
    last = 0
    while True:
        fid, wtype, pos = _field_head(data, pos, last)
        if wtype == STOP:
            return out, pos
        last = fid
        start = pos
        pos = _skip(data, pos, wtype)
        if pos > len(data):
            raise IndexError("parquet footer: Thrift data ends early")
        out.append((fid, wtype, start, pos))


def elements_py(data: bytes, pos: int) -> tuple[int, list[tuple[int, int]]]:
    """The elements of the list at ``pos``: (element type, [(start, end)]) (twin of the compiled
    ``ccrawl._native.pqfooter.elements``)."""
    if pos < 0 or pos >= len(data):
        raise IndexError("parquet footer: Thrift data ends early")
    size, etype, pos = _list_head(data, pos)
    if etype in (TRUE, FALSE):
        raise ValueError("parquet footer: a list of booleans has no element spans")
    out = []
    for _ in range(size):
        start = pos
        pos = _skip(data, pos, etype)
        if pos > len(data):
            raise IndexError("parquet footer: Thrift data ends early")
        out.append((start, pos))
    return etype, out


def _hybrid_py(data: bytes, pos: int, end: int, width: int, count: int) -> tuple[list[int], int]:
    """``count`` values of Parquet's RLE / bit-packed hybrid at ``pos``, ``width`` bits each, and where they end."""
    out: list[int] = []
    nbytes = (width + 7) // 8
    mask = (1 << width) - 1
    while len(out) < count:
        if pos >= end:
            raise IndexError("parquet page: data ends early")
        header, pos = _uvarint_at(data, pos)
        if pos > end:
            raise IndexError("parquet page: data ends early")
        if header & 1:
            run_bytes = (header >> 1) * width
            if run_bytes > end - pos:
                raise IndexError("parquet page: data ends early")
            bits = int.from_bytes(data[pos : pos + run_bytes], "little")
            take = min((header >> 1) * 8, count - len(out))
            out.extend((bits >> (k * width)) & mask for k in range(take))
            pos += run_bytes
        else:
            if nbytes > end - pos:
                raise IndexError("parquet page: data ends early")
            value = int.from_bytes(data[pos : pos + nbytes], "little", signed=True) if nbytes == 4 else \
                int.from_bytes(data[pos : pos + nbytes], "little")
            pos += nbytes
            out.extend([value] * min(header >> 1, count - len(out)))
    return out, pos


def _page_header_py(data: bytes, pos: int) -> tuple[list[int], int]:
    """A PageHeader's [type, uncompressed, compressed, num_values, encoding, def_len, rep_len, is_compressed,
    def_encoding] (-1 where absent) and where its page starts."""
    h = [-1] * 9
    h[7] = 1
    fields, pos = fields_py(data, pos)
    for fid, wtype, start, _ in fields:
        if 1 <= fid <= 3 and wtype in (I32, I64):
            h[fid - 1] = _int_at(data, start)[0]
        elif fid in (5, 7, 8) and wtype == STRUCT:
            for sfid, swtype, sstart, _ in fields_py(data, start)[0]:
                if swtype in (I32, I64):
                    v = _int_at(data, sstart)[0]
                    slot = {1: 3, 2: 4, 3: 8}.get(sfid) if fid != 8 else {1: 3, 4: 4, 5: 5, 6: 6}.get(sfid)
                    if slot is not None:
                        h[slot] = v
                elif fid == 8 and sfid == 7 and swtype in (TRUE, FALSE):
                    h[7] = 1 if swtype == TRUE else 0
    return h, pos


def dict_pages_py(data: bytes, decompress: Callable[[bytes, int], bytes], max_def: int) -> Any:
    """A run of a dictionary-encoded BYTE_ARRAY column's pages decoded to a dictionary and indexes (twin of the
    compiled ``ccrawl._native.pqfooter.dict_pages``, which says what comes back)."""
    if max_def not in (0, 1):
        return None
    h, pos = _page_header_py(data, 0)
    if h[0] != 2 or h[2] < 0 or h[3] < 0 or h[4] not in (0, 2):
        return None
    if h[2] > len(data) - pos:
        raise IndexError("parquet page: data ends early")
    body = decompress(data[pos : pos + h[2]], h[1])
    pos += h[2]
    offsets = [0]
    values = bytearray()
    p = 0
    for _ in range(h[3]):
        if p + 4 > len(body):
            raise IndexError("parquet page: the dictionary ends early")
        n = int.from_bytes(body[p : p + 4], "little")
        p += 4
        if n > len(body) - p:
            raise ValueError("parquet page: a dictionary value runs past the end")
        values += body[p : p + n]
        p += n
        offsets.append(len(values))
    pages = []
    while pos < len(data):
        h, pos = _page_header_py(data, pos)
        if h[2] < 0 or h[2] > len(data) - pos or h[3] < 0:
            raise IndexError("parquet page: data ends early")
        if h[0] not in (0, 3) or h[4] not in (8, 2):
            return None
        if h[0] == 0 and max_def > 0 and h[8] != 3:
            return None
        if h[0] == 3 and (h[6] > 0 or h[5] < 0 or h[5] > h[2]):
            return None
        pages.append((h[0], pos, h[2], h[1], h[3], h[5], h[7]))
        pos += h[2]
    indexes: list[int] = []
    levels: list[int] = []
    for kind, start, size, usize, count, def_len, compressed in pages:
        if kind == 0:
            body = decompress(data[start : start + size], usize)
            p = 0
            lev = [max_def] * count
            if max_def > 0:
                if len(body) < 4:
                    raise IndexError("parquet page: data ends early")
                n = int.from_bytes(body[:4], "little")
                if n > len(body) - 4:
                    raise ValueError("parquet page: definition levels run past the end")
                lev = _hybrid_py(body, 4, 4 + n, 1, count)[0]
                p = 4 + n
        else:
            lev = _hybrid_py(data, start, start + def_len, 1, count)[0] if max_def > 0 else [max_def] * count
            body = data[start + def_len : start + size]
            if compressed:
                body = decompress(body, usize - def_len)
            p = 0
        if any(v not in (0, max_def) for v in lev):
            raise ValueError("parquet page: a definition level past the column's")
        vals = sum(1 for v in lev if v == max_def)
        got: list[int] = []
        if vals:
            if p >= len(body):
                raise IndexError("parquet page: data ends early")
            width = body[p]
            if width > 32:
                raise ValueError("parquet page: an index wider than 32 bits")
            got = _hybrid_py(body, p + 1, len(body), width, vals)[0]
        it = iter(got)
        indexes.extend(next(it) if v == max_def else 0 for v in lev)
        levels.extend(lev)
    if any(not 0 <= i < len(offsets) - 1 for i, v in zip(indexes, levels, strict=True) if v == max_def):
        raise ValueError("parquet page: an index past the dictionary")
    nulls = sum(1 for v in levels if v != max_def)
    valid = None
    if nulls:
        bits = bytearray((len(levels) + 7) // 8)
        for i, v in enumerate(levels):
            if v == max_def:
                bits[i >> 3] |= 1 << (i & 7)
        valid = bytes(bits)
    return (b"".join(o.to_bytes(4, "little", signed=True) for o in offsets), bytes(values), len(offsets) - 1,
            b"".join(i.to_bytes(4, "little", signed=True) for i in indexes), valid, nulls, len(indexes))


def page_range(pages: Pages, lo: int, hi: int) -> tuple[int, int]:
    """The first and last page holding rows ``[lo, hi)``."""
    import bisect

    first = bisect.bisect_right(pages.first_rows, lo) - 1
    last = bisect.bisect_left(pages.first_rows, hi) - 1
    return max(first, 0), max(last, first, 0)


_native = accel.native("pqfooter")
walk = _native.walk if _native else walk_py
_offset_index = _native.offset_index if _native and hasattr(_native, "offset_index") else offset_index_py
_column_index = _native.column_index if _native and hasattr(_native, "column_index") else column_index_py
_fields = _native.fields if _native and hasattr(_native, "fields") else fields_py
_elements = _native.elements if _native and hasattr(_native, "elements") else elements_py
#: The compiled page decoder, or None: the pure-Python twin is for checking it, pyarrow is faster than the twin.
dict_pages = _native.dict_pages if _native and hasattr(_native, "dict_pages") else None
