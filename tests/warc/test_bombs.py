"""Decompression bombs: a few KB of WARC whose HTTP body inflates to 512 MiB stays within the crawler's cap."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.warc.reader import DECODED_LIMIT, decode_body, iter_records
from tests.warc.hostile import bomb_record

BOMB_MIB = 512
#: Peak RSS a capped run stays under; an uncapped one holds at least the 512 MiB it inflated.
RSS_CEILING_MB = 300

# Runs a command as its only child and prints the child's peak RSS (kB on Linux) on stderr.
_MEASURE = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], capture_output=True); "
    "sys.stdout.buffer.write(done.stdout); sys.stderr.buffer.write(done.stderr); "
    "print(f'PEAK_RSS_KB={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr); "
    "sys.exit(done.returncode)"
)


def measured(args: list[str], tmp_path: Path) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and peak RSS in MB of ``python -m ccrawl *args``."""
    env = {**os.environ, "CCRAWL_CONFIG_DIR": str(tmp_path / "cfg")}
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "ccrawl", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    lines = done.stderr.splitlines()
    peak = next(int(x.split("=", 1)[1]) for x in lines if x.startswith("PEAK_RSS_KB="))
    err = "\n".join(x for x in lines if not x.startswith("PEAK_RSS_KB="))
    return done.returncode, done.stdout, err, peak / 1024


@pytest.fixture(scope="module")
def bomb_warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.warc.gz"
    path.write_bytes(gzip.compress(bomb_record(BOMB_MIB), mtime=0))
    assert path.stat().st_size < 8000  # a few KB on disk
    return path


def test_decode_body_stops_at_the_cap_and_says_so(bomb_warc: Path) -> None:
    (record,) = iter_records(bomb_warc)
    decoded = decode_body(record, limit=1 << 20)
    assert len(decoded.data) == 1 << 20 and decoded.truncated
    small = decode_body(next(iter_records(bomb_warc)), limit=DECODED_LIMIT)
    assert len(small.data) == DECODED_LIMIT and small.truncated


def test_the_cap_is_the_crawlers() -> None:
    from ccrawl.recrawl.extractproc import RENDER_LIMIT

    assert DECODED_LIMIT == RENDER_LIMIT


@pytest.mark.parametrize("flag", ["--text", "--markdown"])
def test_parse_text_of_a_bomb_keeps_memory_bounded_and_notes_the_cut(bomb_warc: Path, tmp_path: Path,
                                                                     flag: str) -> None:
    code, out, err, peak_mb = measured(["parse", str(bomb_warc), flag, "-o", "jsonl"], tmp_path)
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert "decoded body cut at 10485760 bytes" in row["note"] and isinstance(row[flag[2:]], str)
    assert "cut at 10485760 bytes" in err
    assert peak_mb < RSS_CEILING_MB, f"peak RSS {peak_mb:.0f} MB"
