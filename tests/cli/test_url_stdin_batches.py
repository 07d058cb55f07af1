"""URLs on stdin answered in blocks: the same rows, stderr lines and exit codes as the per-URL operations.

The reference is the operation itself (``ccrawl.ops``, one record per URL) fed by the same line reader,
rendered by the per-record renderer; blocks are made small so that plain and unusual lines share and
straddle blocks. Run with and without ``CCRAWL_NO_EXTENSIONS=1``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from ccrawl import ops
from ccrawl.cli.common import InputLineError, read_stdin_values
from ccrawl.cli.urlstdin import stdin_batches
from ccrawl.output import OutputOptions, emit

LINES = [
    "https://example.com/a", "http://www.Example.COM:80/b?x=1&y=2", "", "   ", "# comment",
    '{"url": "https://json.example/x"}', '{"nourl": 1}', "{bad json", "  https://spaces.example/  ",
    "https://example.com/\u2028x", "https://例え.jp/パス", "not a url", "http://", "https://a.b/c\td",
    'https://x.y/"q"', "https://x.y/a,b", "http://[::1]/x", "http://1.2.3.4/", "https://sub.blogspot.com/x",
    "https://x.y/é\u3000", "\u3000https://x.y/z", "mailto:a@b.c", "http://a..b/", "https://%zz/",
    '{"url": "http://x.com/\\ud800"}',
]
STDIN = ("\n".join(LINES) + "\n").encode() + b"https://nul\x00.example/\n\xff\xfe bad\nhttps://last.example/end"
CASES = [("url.surt", {}), ("url.canon", {}), ("url.key", {}), ("url.domain", {}), ("url.shard", {"shards": 7}),
         ("url.shard", {"shards": 7, "shard": 3})]


def _per_record(name: str, params: dict[str, Any], stdin: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    said: list[str] = []
    rows = []
    for item in read_stdin_values(io.BytesIO(stdin)):  # as the CLI streams them: messages in input order
        if isinstance(item, InputLineError):
            said.append(str(item))
            continue
        for record in ops.get(name)(urls=[item], **params):
            if record.get("error"):
                said.append(f"{record['url']}: {record['error']}")
            else:
                rows.append(record)
    return rows, said


@pytest.mark.parametrize(("name", "params"), CASES)
@pytest.mark.parametrize("block", [7, 40, 1 << 20])
def test_blocks_give_the_operations_rows_and_messages_in_order(name: str, params: dict[str, Any],
                                                               block: int) -> None:
    stdin = STDIN if name not in ("url.domain", "url.shard") else STDIN.replace(b'{"url": "http://x.com/\\ud800"}', b"")
    want_rows, want_said = _per_record(name, params, stdin)
    said: list[str] = []
    batches = list(stdin_batches(name, io.BytesIO(stdin), params, on_bad_line=lambda e: said.append(str(e)),
                                 on_failed=lambda u, r: said.append(f"{u}: {r}"), on_rows=lambda n: None,
                                 block=block))
    assert said == want_said
    columns = ops.get(name).columns
    for fmt in ("jsonl", "tsv", "csv"):
        want, got = io.StringIO(), io.StringIO()
        emit(want_rows, OutputOptions(fmt=fmt), columns=columns, stream=want)
        from ccrawl.batchout import emit_batches

        emit_batches(batches, OutputOptions(fmt=fmt), columns=columns, stream=got)
        assert got.getvalue() == want.getvalue(), fmt
    assert sum(b.num_rows for b in batches) == len(want_rows) > 0


def test_a_lone_surrogate_in_a_json_line_is_named_and_skipped() -> None:
    proc = subprocess.run([sys.executable, "-m", "ccrawl", "-o", "jsonl", "url", "surt"],
                          input=b'{"url": "http://x.com/\\ud800"}\nhttp://a.com/\n', capture_output=True,
                          env=os.environ.copy(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["surt"] for x in proc.stdout.splitlines()] == ["com,a)/"]
    assert b"not valid Unicode text" in proc.stderr and b"internal error" not in proc.stderr
