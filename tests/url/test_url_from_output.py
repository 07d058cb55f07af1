"""Where ``url ... --from FILE -o parquet`` writes: its writer thread, and outputs that fail or go away."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO, cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl.errors import CcrawlError
from ccrawl.parquetsink import ParquetSink
from ccrawl.url.surt import surt

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def urls(n: int, tag: str = "h") -> list[str]:
    return [f"http://www.{tag}{i}.example.com/p/{i}?b=2&a=1" for i in range(n)]


def source(tmp_path: Path, n: int = 3000) -> Path:
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"url": urls(n)}), path, row_group_size=500)
    return path


def ccrawl(*args: str, stdout: int | io.BufferedWriter = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], stdout=stdout, stderr=subprocess.PIPE, env=ENV,
                          timeout=120, check=False)


def test_the_writer_thread_keeps_batches_in_the_order_they_were_handed_over(tmp_path: Path) -> None:
    out = tmp_path / "o.parquet"
    sink = ParquetSink(str(out), depth=1)
    sent = []
    for k in range(40):
        batch = pa.RecordBatch.from_pylist([{"url": u, "k": k} for u in urls(25, f"b{k}-")])
        sent.extend(batch.to_pylist())
        sink(batch)
    sink.close()
    table = pq.read_table(out)
    assert table.to_pylist() == sent
    assert pq.ParquetFile(out).metadata.num_row_groups == 40  # a row group per batch, as before
    assert not Path(str(out) + ".tmp").exists()


class FailingStream(io.RawIOBase):
    """A writable stream that takes ``room`` bytes and then fails the way a full disk does."""

    def __init__(self, room: int) -> None:
        self.room = room

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if len(data) > self.room:
            raise OSError(28, "No space left on device")
        self.room -= len(data)
        return len(data)


def test_a_write_refused_on_the_writer_thread_is_one_line_error_in_the_caller() -> None:
    sink = ParquetSink(cast(IO[bytes], FailingStream(room=64 << 10)))
    with pytest.raises(CcrawlError) as caught:
        for k in range(200):  # ~2 MB of rows against 64 KiB of room
            sink(pa.RecordBatch.from_pylist([{"url": u} for u in urls(400, f"f{k}-")]))
        sink.close()
    assert str(caught.value) == "cannot write standard output: No space left on device"
    sink.abort()  # after a failure the caller aborts: it must not hang or raise


def test_abort_while_the_writer_is_busy_removes_the_partial_file(tmp_path: Path) -> None:
    out = tmp_path / "o.parquet"
    sink = ParquetSink(str(out), depth=4)
    for k in range(20):
        sink(pa.RecordBatch.from_pylist([{"url": u} for u in urls(2000, f"a{k}-")]))
    sink.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="this system has no /dev/full to fill")
@pytest.mark.parametrize("how", ["--out", "stdout"])
def test_a_full_device_is_a_one_line_error_and_the_device_stays_a_device(tmp_path: Path, how: str) -> None:
    src = source(tmp_path)
    args = ["url", "surt", "--from", str(src), "-o", "parquet"]
    if how == "--out":
        proc = ccrawl(*args, "--out", "/dev/full")
    else:
        with open("/dev/full", "wb") as full:
            proc = ccrawl(*args, stdout=full)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 1, lines
    assert len(lines) == 1 and "No space left on device" in lines[0] and "internal error" not in lines[0], lines
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # never renamed a .tmp file over the device


def test_out_naming_a_pipe_streams_into_it(tmp_path: Path) -> None:
    src = source(tmp_path)
    proc = ccrawl("url", "surt", "--from", str(src), "-o", "parquet", "--out", "/dev/stdout", "-q")
    assert proc.returncode == 0, proc.stderr
    rows = pq.read_table(pa.BufferReader(proc.stdout)).to_pylist()
    assert [r["url"] for r in rows] == urls(3000)
    assert [r["surt"] for r in rows] == [surt(u) for u in urls(3000)]


@pytest.mark.parametrize("fmt", ["parquet", "tsv"])
def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly_with_0(tmp_path: Path, fmt: str) -> None:
    src = source(tmp_path, 100_000)
    proc = subprocess.Popen([sys.executable, "-m", "ccrawl", "url", "surt", "--from", str(src), "-o", fmt],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert len(head) == 10 and err == b""
