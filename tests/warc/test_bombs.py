"""Decompression bombs: a few KB of WARC whose HTTP body inflates to 512 MiB stays within the crawler's cap."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ccrawl.warc.reader import DECODED_LIMIT, decode_body, iter_records
from tests.warc.hostile import bomb_record, measured

BOMB_MIB = 512
#: Peak RSS a capped run stays under; an uncapped one holds at least the 512 MiB it inflated.
RSS_CEILING_MB = 300

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
    env = {"CCRAWL_CONFIG_DIR": str(tmp_path / "cfg")}
    code, out, err, peak_mb = measured(["parse", str(bomb_warc), flag, "-o", "jsonl"], env)
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert "decoded body cut at 10485760 bytes" in row["note"] and isinstance(row[flag[2:]], str)
    assert "cut at 10485760 bytes" in err
    assert peak_mb < RSS_CEILING_MB, f"peak RSS {peak_mb:.0f} MB"
