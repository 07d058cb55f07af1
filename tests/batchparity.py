"""What the batch path writes against what the per-record renderer writes, for every format (batch operations)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence

from pyarrow import RecordBatch

from ccrawl import batchout
from ccrawl.output import OutputOptions, emit

FORMATS = ("table", "csv", "tsv", "jsonl", "json", "parquet")


class _Sink(io.StringIO):
    """A text stream with a binary buffer, as stdout has (Parquet is written to the buffer)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = io.BytesIO()


def _rendered(write: Callable[[OutputOptions, _Sink], object], fmt: str, fields: list[str]) -> bytes | str:
    """The bytes written, or the name of the error raised."""
    sink = _Sink()
    try:
        write(OutputOptions(fmt=fmt, fields=fields), sink)
    except Exception as exc:
        return type(exc).__name__
    return sink.buffer.getvalue() if fmt == "parquet" else sink.getvalue().encode("utf-8", "surrogatepass")


def assert_same_output(records: Callable[[], Iterable[Mapping[str, object]]],
                       batches: Callable[[], Iterable[RecordBatch]], columns: Sequence[str],
                       fields: Sequence[Sequence[str]] = ((),)) -> int:
    """Every format (and each ``fields`` choice) rendered from ``batches()`` is the bytes the per-record renderer
    writes from ``records()``; returns how many records there were."""
    count = sum(1 for _ in records())
    for fmt in FORMATS:
        for chosen in fields:
            want = _rendered(lambda o, s: emit(records(), o, columns=columns, stream=s), fmt, list(chosen))
            got = _rendered(lambda o, s: batchout.emit_batches(batches(), o, columns=columns, stream=s), fmt,
                            list(chosen))
            assert got == want, f"-o {fmt} --fields {','.join(chosen)}: the batch path wrote other bytes"
    return count


def assert_same_ndjson(records: Iterable[Mapping[str, object]], batches: Iterable[RecordBatch]) -> bytes | str:
    """serve's NDJSON from the batches is the bytes it wrote a record at a time (or the same error: text
    UTF-8 cannot encode is an error frame either way); returns them (or the error's name)."""
    from ccrawl.output import to_json
    from ccrawl.serve.worker import wire_line, wire_lines

    def outcome(write: Callable[[], bytes]) -> bytes | str:
        try:
            return write()
        except Exception as exc:
            return type(exc).__name__

    want = outcome(lambda: b"".join(wire_line(to_json(r)) for r in records))
    got = outcome(lambda: b"".join(wire_lines(batchout.batch_jsonl(b)) for b in batches))
    assert got == want
    return got
