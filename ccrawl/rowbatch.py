"""Records as Arrow record batches of a declared schema, and back, exactly.

A batch operation (:func:`ccrawl.ops.batch_operation`) whose engine makes its records one at a time
gathers them a chunk at a time (:func:`chunked`) into record batches (:func:`rows_batch`) of the
operation's declared fields: ``(name, kind)`` pairs, the kind one of :data:`KINDS`. A column is
built from its values' buffers (``pyarrow.array`` imports pandas on its first call) and holds them
exactly: what the batch renderer (:mod:`ccrawl.batchout`) writes from it is what the per-record
renderer writes from the records, and :func:`batch_rows` gives the records back (every field named,
``None`` where a record had no value).

A value its declared kind cannot hold exactly (a status of ``"-"`` in an int64 column, an integer past
int64, text with a lone surrogate, which UTF-8 cannot encode) makes that column of that batch a
column of JSON text whose field carries :data:`JSON_TAG`: such a batch is rendered record by record
(it is rare; its bytes stay the per-record renderer's). A key no field declares becomes a column too
(text, integers, or JSON), so nothing a record carries is lost.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, ParamSpec, cast

from ccrawl import accel

if TYPE_CHECKING:
    from pyarrow import Array, RecordBatch

P = ParamSpec("P")

#: a declared field: its name and kind
Field = tuple[str, str]
TEXT, INT64, TEXTS = "string", "int64", "list<string>"
KINDS = (TEXT, INT64, TEXTS)
#: field metadata key of a column holding each value as JSON text (see the module docstring)
JSON_TAG = b"ccrawl.json"
CHUNK = 4096  #: records per batch
CHUNK_SECONDS = 0.25  #: a chunk this old is handed on when the next record comes (``serve`` streams)


# --------------------------------------------------------------------------------------------------
# columns from values


def string_array_py(values: list[str | None]) -> Array:
    """A pyarrow string array of ``values`` built from its buffers (``pyarrow.array``'s first call imports
    pandas, half a second of a command's start-up)."""
    import array

    import pyarrow as pa

    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    data = b"".join(encoded)
    large = len(data) >= 2**31 - 1
    offsets = array.array("q" if large else "i", [0])
    offsets.extend(itertools.accumulate(len(e) for e in encoded))
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(values),
                                 [validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)], null_count=nulls)


def _validity(values: Sequence[object]) -> tuple[object, int]:
    """The validity bitmap of ``values`` (None where every value is set) and its null count."""
    import pyarrow as pa

    nulls = values.count(None)
    if not nulls:
        return None, 0
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(bits)), nulls


def string_array(values: list[str | None]) -> Array:
    """An Arrow string array of ``values``: the compiled builder where it can (not for a lone surrogate), else
    :func:`string_array_py`."""
    surt = accel.native("surt")
    built: Array | None = surt.as_string_array(values) if surt is not None else None
    return built if built is not None else string_array_py(values)


_NONE = type(None)


def _text_array(values: list[object]) -> Array | None:
    """A string array of ``values``, or None unless each is exactly a str UTF-8 can encode, or None."""
    surt = accel.native("surt")
    if surt is not None:
        built: Array | None = surt.as_string_array(values)
        return built
    if not set(map(type, values)) <= {str, _NONE}:
        return None
    try:
        return string_array_py(values)  # type: ignore[arg-type]
    except UnicodeEncodeError:
        return None


def _int_array(values: list[object]) -> Array | None:
    """An int64 array of ``values``, or None unless each is exactly an int in int64's range (not a bool), or None."""
    import array

    import pyarrow as pa

    kinds = set(map(type, values))
    if not kinds <= {int, _NONE}:
        return None
    try:
        data = array.array("q", cast("list[int]", [0 if v is None else v for v in values] if _NONE in kinds
                                     else values))
    except OverflowError:  # past int64
        return None
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.int64(), len(values), [validity, pa.py_buffer(data.tobytes())],
                                 null_count=nulls)


def _texts_array(values: list[object]) -> Array | None:
    """A list<string> array of ``values``, or None unless each is exactly a list of str, or None."""
    import array

    import pyarrow as pa

    flat: list[object] = []
    offsets = array.array("i", [0])
    for v in values:
        if v is not None:
            if type(v) is not list:
                return None
            flat.extend(v)
        offsets.append(len(flat))
    if len(flat) >= 2**31 - 1 or not set(map(type, flat)) <= {str}:
        return None
    child = _text_array(flat)
    if child is None:
        return None
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.list_(pa.string()), len(values), [validity, pa.py_buffer(offsets.tobytes())],
                                 null_count=nulls, children=[child])


_BUILDERS: dict[str, Callable[[list[object]], Array | None]] = {
    TEXT: _text_array, INT64: _int_array, TEXTS: _texts_array,
}
_JSON_SCALARS = (str, int, float, bool, type(None))


def _json_exact(value: object) -> bool:
    """Whether ``json.loads(json.dumps(value))`` gives ``value`` back, types included."""
    kind = type(value)
    if kind in _JSON_SCALARS:
        return True
    if kind is list:
        return all(_json_exact(v) for v in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(type(k) is str and _json_exact(v) for k, v in value.items())  # type: ignore[attr-defined]
    return False


def _json_array(name: str, values: list[object]) -> Array:
    texts: list[str | None] = []
    for v in values:
        if not _json_exact(v):
            raise TypeError(f"field {name!r}: a {type(v).__name__} value cannot be carried in a record batch")
        texts.append(None if v is None else json.dumps(v, ensure_ascii=True))
    return string_array_py(texts)


def _column(name: str, kind: str | None, values: list[object]) -> tuple[Array, bool]:
    """The column ``name`` of ``values`` and whether it holds JSON text (see the module docstring)."""
    if kind is not None:
        built = _BUILDERS[kind](values)
    else:  # a key no field declares: text, else integers, else JSON
        built = _text_array(values)
        if built is None:
            built = _int_array(values)
    if built is not None:
        return built, False
    return _json_array(name, values), True


def _key_order(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Every key of ``rows``, each after the key it follows in the record that brought it (the order a
    record's keys come in is the order its JSON line has)."""
    order: list[str] = []
    seen: set[str] = set()
    for row in rows:
        if row.keys() <= seen:
            continue
        before: str | None = None
        for key in row:
            if key not in seen:
                order.insert(0 if before is None else order.index(before) + 1, key)
                seen.add(key)
            before = key
    return order


def rows_batch(rows: Sequence[Mapping[str, object]], fields: Sequence[Field]) -> RecordBatch:
    """``rows`` as one record batch: every declared field, and every other key a record has (see the
    module docstring), the columns in the records' key order, declared fields none of them has last."""
    import pyarrow as pa

    kinds = dict(fields)
    names = _key_order(rows)
    names += [n for n in kinds if n not in set(names)]
    arrays = []
    schema = []
    for name in names:
        kind = kinds.get(name)
        array, is_json = _column(name, kind, [r.get(name) for r in rows])
        arrays.append(array)
        schema.append(pa.field(name, array.type, metadata={JSON_TAG: b"1"} if is_json else None))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(schema))


def empty_batch(fields: Sequence[Field]) -> RecordBatch:
    """A batch of no rows with the declared fields."""
    return rows_batch([], fields)


# --------------------------------------------------------------------------------------------------
# records back


def json_columns(batch: RecordBatch) -> list[int]:
    """The indices of ``batch``'s columns that hold JSON text."""
    return [i for i, f in enumerate(batch.schema) if f.metadata and JSON_TAG in f.metadata]


def batch_rows(batch: RecordBatch) -> list[dict[str, object]]:
    """The records of ``batch`` (a column holding JSON text decoded)."""
    rows: list[dict[str, object]] = batch.to_pylist()
    for i in json_columns(batch):
        name = batch.schema.names[i]
        for row in rows:
            text = row[name]
            if text is not None:
                row[name] = json.loads(str(text))
    return rows


def rows_of(func: Callable[P, Iterable[RecordBatch]]) -> Callable[P, Iterator[dict[str, object]]]:
    """A batch function as a function of the same parameters yielding its records (a library caller's)."""

    @functools.wraps(func)
    def rows(*args: P.args, **kwargs: P.kwargs) -> Iterator[dict[str, object]]:
        for batch in func(*args, **kwargs):
            yield from batch_rows(batch)

    return rows


def chunked(rows: Iterable[Mapping[str, object]], fields: Sequence[Field], size: int = 0,
            seconds: float = 0.0) -> Iterator[RecordBatch]:
    """``rows`` as record batches of ``size`` records (0: :data:`CHUNK`), or fewer when the chunk is ``seconds``
    (0: :data:`CHUNK_SECONDS`) old as the next record comes; the records before an error are yielded before it
    is raised."""
    size = size or CHUNK
    seconds = seconds or CHUNK_SECONDS
    chunk: list[Mapping[str, object]] = []
    started = 0.0
    try:
        for row in rows:
            if not chunk:
                started = time.monotonic()
            chunk.append(row)
            if len(chunk) >= size or time.monotonic() - started >= seconds:
                yield rows_batch(chunk, fields)
                chunk = []
    except Exception:
        if chunk:
            yield rows_batch(chunk, fields)
        raise
    if chunk:
        yield rows_batch(chunk, fields)
