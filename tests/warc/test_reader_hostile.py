"""The reader on hostile files: empty gzip members, lying lengths, corrupt members; nothing lost silently."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.errors import InputError
from ccrawl.warc.reader import iter_records
from tests.warc.hostile import members, warc_record

EMPTY = gzip.compress(b"", mtime=0)


def _ids(records: list[object]) -> list[str]:
    return [r.url for r in records]  # type: ignore[attr-defined]


def test_empty_gzip_members_between_records_hide_nothing(tmp_path: Path) -> None:
    parts = members([warc_record(i) for i in range(121)])
    data = b"".join(parts[:5]) + EMPTY + b"".join(parts[5:60]) + EMPTY + EMPTY + b"".join(parts[60:]) + EMPTY
    path = tmp_path / "empties.warc.gz"
    path.write_bytes(data)
    notes: list[str] = []
    records = list(iter_records(path, on_skip=notes.append))
    assert _ids(records) == [f"http://example.com/{i}" for i in range(121)]
    assert notes == []
    for rec in records:  # each location is exactly its own member, the empty ones belong to nobody
        assert rec.offset is not None and rec.length is not None
        assert data[rec.offset : rec.offset + rec.length] == parts[int(rec.url.rsplit("/", 1)[1])]  # type: ignore[union-attr]
    assert records[-1].length == len(parts[-1])


def test_empty_members_are_read_past_on_stdin_too() -> None:
    parts = members([warc_record(i) for i in range(4)])
    data = EMPTY + parts[0] + EMPTY + b"".join(parts[1:])
    records = list(iter_records(io.BytesIO(data)))
    assert len(records) == 4 and records[0].offset == len(EMPTY) and records[1].offset == len(EMPTY) * 2 + len(parts[0])


def test_cli_parse_reads_every_record_past_an_empty_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = members([warc_record(i) for i in range(121)])
    path = tmp_path / "x.warc.gz"
    path.write_bytes(b"".join(parts[:5]) + EMPTY + b"".join(parts[5:]))
    assert main(["parse", str(path), "-o", "jsonl"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 121 and err == ""
    assert rows[-1]["length"] == len(parts[-1])


def _lying(tmp_path: Path, gz: bool) -> tuple[Path, list[bytes], int]:
    """Ten records; record 3 claims 100000 bytes more than it has (it would swallow all after it)."""
    records = [warc_record(i) for i in range(10)]
    records[3] = warc_record(3, declared=100_000)
    bad_size = len(gzip.compress(records[3], mtime=0)) if gz else len(records[3])
    data = b"".join(members(records)) if gz else b"".join(records)
    path = tmp_path / ("lying.warc.gz" if gz else "lying.warc")
    path.write_bytes(data)
    return path, records, bad_size


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_skip_bad_records_resynchronises_after_a_lying_content_length(tmp_path: Path, gz: bool) -> None:
    path, _, bad_size = _lying(tmp_path, gz)
    notes: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=notes.append))
    assert _ids(kept) == [f"http://example.com/{i}" for i in range(10) if i != 3]
    assert any("record 4" in n for n in notes)
    assert notes[-1].endswith(f"skipped 1 record ({bad_size} bytes)"), notes


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_a_lying_content_length_without_skip_is_an_error_after_the_good_records(tmp_path: Path, gz: bool) -> None:
    path, _, _ = _lying(tmp_path, gz)
    got = []
    with pytest.raises(InputError, match=r"\(record 4\)"):
        for rec in iter_records(path):
            got.append(rec)
    assert len(got) == 3


def test_a_content_length_too_small_is_caught_and_skipped(tmp_path: Path) -> None:
    records = [warc_record(i) for i in range(5)]
    records[2] = warc_record(2, declared=10)  # the rest of the block would be read as the next record
    path = tmp_path / "short.warc"
    path.write_bytes(b"".join(records))
    notes: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=notes.append))
    assert _ids(kept) == [f"http://example.com/{i}" for i in (0, 1, 3, 4)]
    assert notes[-1].endswith(f"skipped 1 record ({len(records[2])} bytes)")


def test_skip_bad_records_resynchronises_after_a_corrupt_member(tmp_path: Path) -> None:
    parts = members([warc_record(i) for i in range(8)])
    broken = bytearray(parts[4])
    broken[30:60] = b"\xff" * 30  # inside the deflate data: the member does not inflate
    data = b"".join(parts[:4]) + bytes(broken) + b"".join(parts[5:])
    path = tmp_path / "corrupt.warc.gz"
    path.write_bytes(data)
    with pytest.raises(InputError, match=f"offset {sum(map(len, parts[:4]))}"):
        list(iter_records(path))
    notes: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=notes.append))
    assert _ids(kept) == [f"http://example.com/{i}" for i in range(8) if i != 4]
    # Its data is destroyed before the record's header inflates: nothing shows it held one record only.
    assert notes[-1].endswith(f"skipped at least 1 record ({len(broken)} bytes)")
    offsets = {r.url: r.offset for r in kept}
    assert offsets["http://example.com/5"] == sum(map(len, parts[:5]))


def test_cli_skip_bad_records_counts_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _, bad_size = _lying(tmp_path, gz=True)
    assert main(["parse", str(path), "--skip-bad-records", "-o", "jsonl"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 9
    assert f"skipped 1 record ({bad_size} bytes)" in err


def test_junk_between_plain_records_is_skipped_to_the_next_warc_line(tmp_path: Path) -> None:
    records = [warc_record(i) for i in range(3)]
    junk = b"garbage\r\nnot a record at all\r\n" * 10
    path = tmp_path / "junk.warc"
    path.write_bytes(records[0] + junk + records[1] + records[2])
    notes: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=notes.append))
    assert _ids(kept) == [f"http://example.com/{i}" for i in range(3)]
    assert kept[1].offset == len(records[0]) + len(junk)
    assert notes[-1].endswith(f"skipped 1 record ({len(junk)} bytes)")


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
@pytest.mark.parametrize("step", [1, 3, 100])
def test_a_stream_that_hands_out_a_few_bytes_per_read_is_read_whole(gz: bool, step: int) -> None:
    # Found by the warc fuzz target: the format sniff took the first read as the whole head.
    from ccrawl.testing.fuzz import Trickle

    records = [warc_record(i) for i in range(3)]
    data = b"".join(members(records)) if gz else b"".join(records)
    got = list(iter_records(Trickle(data, step)))  # type: ignore[arg-type]
    assert _ids(got) == [f"http://example.com/{i}" for i in range(3)]
    assert [r.offset for r in got] == [r.offset for r in iter_records(io.BytesIO(data))]
