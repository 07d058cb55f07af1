"""Durable files: whole or absent, whatever happens while they are written."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl import durable


def test_write_bytes_replaces_the_file_and_leaves_no_in_progress_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    durable.write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    durable.write_bytes(target, b"", sync=False)
    assert target.read_bytes() == b""


def test_a_writer_that_fails_leaves_the_old_file_and_no_in_progress_file(tmp_path: Path) -> None:
    target = tmp_path / "shard.parquet"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk gone"), durable.writing(target) as tmp:
        assert tmp == tmp_path / ("shard.parquet" + durable.IN_PROGRESS)
        tmp.write_bytes(b"half")
        raise RuntimeError("disk gone")
    assert target.read_bytes() == b"old"
    assert not durable.in_progress(target).exists()


def test_a_writer_that_finishes_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with durable.writing(target) as tmp, tmp.open("w") as fh:
        fh.write("whole")
        assert not target.exists()
    assert target.read_text() == "whole"
    assert not durable.in_progress(target).exists()


def test_in_progress_is_one_suffix_beside_the_file(tmp_path: Path) -> None:
    assert durable.in_progress(tmp_path / "a.warc.gz") == tmp_path / "a.warc.gz.tmp"
    assert durable.in_progress("rel/b") == Path("rel/b.tmp")
