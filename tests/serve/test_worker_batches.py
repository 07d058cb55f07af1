"""An operation's record batches go on the wire as the NDJSON its records would (serve's worker)."""

from __future__ import annotations

import pyarrow as pa

from ccrawl.batchout import batch_jsonl
from ccrawl.output import to_json
from ccrawl.serve.worker import wire_line, wire_lines

TRICKY = ["plain", None, "", "nul\x00", "new\nline", "sep\u2028line", "para\u2029", "next\x85line", "vt\x0bff\x0c",
          "fs\x1cgs\x1drs\x1e", 'q"uote', "back\\slash", "é 中 😀"]


def test_batch_lines_on_the_wire_equal_the_records_lines() -> None:
    n = len(TRICKY)
    batch = pa.RecordBatch.from_arrays(
        [pa.array(TRICKY, pa.string()), pa.array([None, *range(n - 1)], pa.int64()),
         pa.array([["\u2028"], None, *[[str(i)] for i in range(n - 2)]]), pa.array([0.5] * n)],
        names=["text", "n", "list", "f"],
    )
    want = b"".join(wire_line(to_json(record)) for record in batch.to_pylist())
    got = wire_lines(batch_jsonl(batch))
    assert got == want
    assert got.count(b"\n") == n and b"\xe2\x80\xa8" not in got and b"\\u2028" in got
    assert wire_lines(batch_jsonl(batch.slice(0, 0))) == b""
