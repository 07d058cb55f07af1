"""Records lost to damaged gzip members are counted exactly, however the damage falls (#36).

A run of members with broken headers is one skipped stretch of the file; each member in it must
still count as the record it held, on the native path and the pure-Python one alike (the suite is
run both ways). Where bytes cannot be told apart into members, the count says "at least".
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ccrawl.cli.main import main
from ccrawl.warc.reader import SKIPPED, iter_records
from tests.warc.hostile import http_response, members, warc_record

_WORDS = [b"crawl", b"page", b"common", b"archive", b"record", b"member", b"gzip", b"the", b"of", b"index"]


def _page(i: int) -> bytes:
    """A record with a few KiB of text, so its member's header deflates well before the damage."""
    rng = random.Random(i)
    body = b"<html><body><p>" + b" ".join(rng.choice(_WORDS) + b"%d" % rng.randrange(999) for _ in range(600))
    return warc_record(i, http_response(i, body + b"</p></body></html>"))


PARTS = members([_page(i) for i in range(2000)])


def _header_gone(part: bytes) -> bytes:
    return b"\x00" * 8 + part[8:]


def _data_gone(part: bytes) -> bytes:
    """The header kept, the second half of the deflate data zeroed, the trailer kept: the member does
    not inflate, but what does shows the record it held and its length (so the count can be exact)."""
    cut = len(part) * 3 // 4
    return part[:cut] + bytes(len(part) - cut - 8) + part[-8:]


def _read(path: Path) -> tuple[list[int], list[str]]:
    notes: list[str] = []
    kept = [int(r.url.rsplit("/", 1)[1]) for r in iter_records(path, skip_bad_records=True, on_skip=notes.append)]
    return kept, notes


def _write(tmp_path: Path, parts: list[bytes]) -> Path:
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(b"".join(parts))
    return path


def test_ten_consecutive_members_with_broken_headers_are_ten_records(tmp_path: Path) -> None:
    parts = list(PARTS)
    for k in range(500, 510):
        parts[k] = _header_gone(parts[k])
    kept, notes = _read(_write(tmp_path, parts))
    assert len(kept) == 1990 and set(range(500, 510)).isdisjoint(kept)
    size = sum(map(len, parts[500:510]))
    assert notes[-1].endswith(f"skipped 10 records ({size} bytes)"), notes[-1]
    lines = [n for n in notes if n.startswith(SKIPPED)]
    assert len(lines) == 10  # one line a lost record, each naming its member and its number
    for k, line in zip(range(500, 510), lines, strict=True):
        assert f"at offset {sum(map(len, parts[:k]))} (record {k + 1})" in line, line


def test_cli_convert_says_how_many_records_were_lost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = list(PARTS)
    for k in range(1200, 1210):
        parts[k] = _header_gone(parts[k])
    src = _write(tmp_path, parts)
    out = tmp_path / "out.parquet"
    assert main(["convert", str(src), "-O", str(out), "--skip-bad-records"]) == 0
    err = capsys.readouterr().err
    assert pq.read_metadata(out).num_rows == 1990
    assert "skipped 10 records" in err and "skipped 1 record " not in err, err


@pytest.mark.parametrize("shape", ["scattered", "data-consecutive", "mixed"])
def test_other_shapes_are_counted_exactly(tmp_path: Path, shape: str) -> None:
    parts = list(PARTS)
    if shape == "scattered":
        damaged = list(range(3, 2000, 199))
        for k in damaged:
            parts[k] = _header_gone(parts[k])
    elif shape == "data-consecutive":
        damaged = list(range(700, 710))
        for k in damaged:
            parts[k] = _data_gone(parts[k])
    else:  # a member whose data is damaged, then members whose headers are: one stretch, scanned
        damaged = list(range(40, 46))
        parts[40] = _data_gone(parts[40])
        for k in damaged[1:]:
            parts[k] = _header_gone(parts[k])
    kept, notes = _read(_write(tmp_path, parts))
    assert sorted(set(range(2000)) - set(kept)) == damaged
    assert notes[-1].endswith(f"skipped {len(damaged)} records ({sum(len(parts[k]) for k in damaged)} bytes)")


def test_truncation_after_damage_counts_both(tmp_path: Path) -> None:
    parts = list(PARTS[:50])
    for k in (10, 11, 12):
        parts[k] = _header_gone(parts[k])
    parts[-1] = parts[-1][: len(parts[-1]) // 2]  # the file ends inside the last member
    kept, notes = _read(_write(tmp_path, parts))
    assert kept == [k for k in range(49) if k not in (10, 11, 12)]
    assert "skipped 4 records" in notes[-1], notes[-1]


def test_bytes_that_cannot_be_told_apart_are_a_lower_bound(tmp_path: Path) -> None:
    parts = list(PARTS[:30])
    for k in (10, 11, 12):  # header and data both gone: where one member ends is lost
        parts[k] = bytes(len(parts[k]))
    kept, notes = _read(_write(tmp_path, parts))
    assert kept == [k for k in range(30) if k not in (10, 11, 12)]
    assert "skipped at least 1 record " in notes[-1], notes[-1]  # never a number it cannot stand behind
    assert any("at least 1 record: its damaged bytes do not show how many" in n for n in notes), notes


def test_random_damage_never_claims_a_wrong_count(tmp_path: Path) -> None:
    """Property-style: any mix of damage, the claimed count is exact or says "at least" and is."""
    rng = random.Random(36)
    for trial in range(25):
        n = rng.randrange(5, 60)
        parts = list(PARTS[:n])
        for k in rng.sample(range(1, n), rng.randrange(1, min(n - 1, 12))):  # the first is sniffed
            how = rng.choice(["header", "data", "both", "flip"])
            p = parts[k]
            if how == "header":
                parts[k] = _header_gone(p)
            elif how == "data":
                parts[k] = _data_gone(p)
            elif how == "both":
                parts[k] = bytes(len(p))
            else:
                at = rng.randrange(10, len(p) - 8)
                parts[k] = p[:at] + bytes([p[at] ^ 0x55]) + p[at + 1 :]
        if rng.random() < 0.3:
            parts[-1] = parts[-1][: rng.randrange(1, len(parts[-1]))]
        path = tmp_path / f"t{trial}.warc.gz"
        path.write_bytes(b"".join(parts))
        kept, notes = _read(path)
        lost = n - len(kept)
        tally = notes[-1] if notes and "skipped" in notes[-1] and SKIPPED not in notes[-1] else ""
        if lost == 0:
            continue
        claimed = int(tally.split("skipped ")[1].removeprefix("at least ").split()[0])
        if "at least" in tally:
            assert claimed <= lost, (trial, tally, lost)
        else:
            assert claimed == lost, (trial, tally, lost, json.dumps(notes))
