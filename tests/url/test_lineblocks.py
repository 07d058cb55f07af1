"""The one line-block reader (``ccrawl.url.lineblocks``) behind ``url ... --from`` and URLs on stdin."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.cli.urlstdin import stdin_batches
from ccrawl.url.lineblocks import StreamBroken, line_blocks
from ccrawl.url.surt import surt

LINES = [b"http://a%d.com/%s" % (i, b"p" * (i % 37)) for i in range(5000)]
DATA = b"\n".join(LINES) + b"\n"
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fill", [False, True])
@pytest.mark.parametrize("size", [7, 100, 4096, 1 << 20])
def test_blocks_are_whole_lines_whatever_the_block_size_cuts(size: int, fill: bool) -> None:
    blocks = list(line_blocks(io.BytesIO(DATA), size, fill=fill))
    assert b"".join(blocks) == DATA
    assert all(b.endswith(b"\n") for b in blocks)  # a block boundary inside a line moves to the line's end
    if size == 7:  # every line is longer than a block: one line per block
        assert blocks == [line + b"\n" for line in LINES]


def test_the_last_line_without_its_newline_comes_last() -> None:
    assert list(line_blocks(io.BytesIO(b"a\nbb\nccc"), 3)) == [b"a\n", b"bb\n", b"ccc"]
    assert list(line_blocks(io.BytesIO(b""), 3)) == []


def test_lines_are_answered_as_they_arrive_down_a_pipe() -> None:
    read_end, write_end = os.pipe()
    with open(read_end, "rb") as reader, open(write_end, "wb", buffering=0) as writer:
        writer.write(b"http://first.org/\nhttp://sec")
        blocks = line_blocks(reader, 1 << 20)
        assert next(blocks) == b"http://first.org/\n"  # before the pipe has a megabyte, or is closed
        writer.write(b"ond.org/\n")
        assert next(blocks) == b"http://second.org/\n"
        writer.close()
        assert list(blocks) == []


@pytest.mark.parametrize("fill", [False, True])
def test_a_cut_gzip_stream_yields_the_whole_lines_before_the_cut_then_breaks(fill: bool) -> None:
    packed = gzip.compress(DATA)
    stream = gzip.GzipFile(fileobj=io.BytesIO(packed[: len(packed) // 2]), mode="rb")
    got: list[bytes] = []
    with pytest.raises(StreamBroken) as broken:
        for block in line_blocks(stream, 4096, fill=fill):
            got.append(block)
    text = b"".join(got)
    assert len(text) > len(DATA) // 4 and DATA.startswith(text) and text.endswith(b"\n")
    assert isinstance(broken.value.cause, EOFError)
    assert broken.value.partial == (DATA[len(text) : len(text) + 1] != b"")  # the cut line was dropped


def _cut_gzip() -> tuple[bytes, list[bytes]]:
    lines = [b"http://a%d.com/%d" % (i * 7919 % 10007, i) for i in range(20000)]
    packed = gzip.compress(b"\n".join(lines) + b"\n")
    return packed[: len(packed) // 2], lines


@pytest.mark.parametrize("where", ["stdin", "file"])
def test_url_from_a_cut_gzip_writes_the_rows_before_the_cut_and_says_where(tmp_path: Path, where: str) -> None:
    cut, lines = _cut_gzip()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = tmp_path / "out.jsonl"
    source = "-"
    if where == "file":
        source = str(tmp_path / "in.gz")
        Path(source).write_bytes(cut)
    cmd = [sys.executable, "-m", "ccrawl", "url", "surt", "--from", source, "-o", "jsonl", "--out", str(out)]
    proc = subprocess.run(cmd, input=cut if where == "stdin" else b"", capture_output=True, env=env, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) > 1000
    assert [r["url"] for r in rows] == [u.decode() for u in lines[: len(rows)]]
    assert all(r["surt"] == surt(r["url"]) for r in rows)
    assert f"--from {'stdin' if where == 'stdin' else source}: cannot decompress past line {len(rows):,} (" in line


def test_url_stdin_blocks_cut_inside_lines_give_every_url_once_in_order() -> None:
    urls = [f"http://www.host{i}.example/{'x' * (i % 50)}" for i in range(3000)]
    data = ("\n".join(urls) + "\n").encode()
    batches = list(stdin_batches("url.surt", io.BytesIO(data), {}, on_bad_line=lambda e: None,
                                 on_failed=lambda u, r: None, on_rows=lambda n: None, workers=1, block=1000))
    assert len(batches) > 50  # the 1000-byte blocks cut lines everywhere
    got = [u for b in batches for u in b.column("url").to_pylist()]
    assert got == urls
    assert [s for b in batches for s in b.column("surt").to_pylist()] == [surt(u) for u in urls]


def test_url_stdin_a_failing_read_raises_its_own_error_after_the_lines_before_it() -> None:
    class Failing(io.RawIOBase):
        def __init__(self) -> None:
            self.sent = False

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: memoryview) -> int:
            if self.sent:
                raise OSError("the pipe broke")
            self.sent = True
            data = b"http://a.org/\nhttp://b.o"
            memoryview(buffer)[: len(data)] = data
            return len(data)

    rows: list[str] = []
    with pytest.raises(OSError, match="the pipe broke"):
        for b in stdin_batches("url.surt", io.BufferedReader(Failing()), {}, on_bad_line=lambda e: None,
                               on_failed=lambda u, r: None, on_rows=lambda n: None, workers=1):
            rows.extend(b.column("url").to_pylist())
    assert rows == ["http://a.org/"]

