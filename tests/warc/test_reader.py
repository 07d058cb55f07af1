"""The WARC reader over good and deliberately broken files: whole records first, then one clear error."""

from __future__ import annotations

import gzip
import io
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from ccrawl.errors import InputError
from ccrawl.warc.reader import decode_payload, iter_records


def test_offsets_and_lengths_locate_every_record_of_a_gzipped_warc(corpus_dir: Path) -> None:
    path = corpus_dir / "warc" / "example.warc.gz"
    records = list(iter_records(path))
    assert [r.warc_type for r in records] == ["warcinfo", "warcinfo", "response", "request", "revisit", "request"]
    data = path.read_bytes()
    assert records[0].offset == 0
    for a, b in itertools.pairwise(records):
        assert a.offset is not None and a.length is not None and a.offset + a.length == b.offset
    last = records[-1]
    assert last.offset is not None and last.length is not None and last.offset + last.length == len(data)
    for rec in records:
        assert rec.offset is not None and rec.length is not None
        (alone,) = iter_records(io.BytesIO(data[rec.offset : rec.offset + rec.length]))
        assert alone.record_id == rec.record_id and alone.block == rec.block


def test_http_status_headers_and_payload_are_parsed(corpus_dir: Path) -> None:
    response = next(r for r in iter_records(corpus_dir / "warc" / "example.warc") if r.warc_type == "response")
    assert response.http_status == 200 and response.mime == "text/html"
    assert response.url == "http://example.com/"
    assert b"<title>Example Domain</title>" in decode_payload(response)


def test_chunked_transfer_encoding_is_undone_for_content(corpus_dir: Path) -> None:
    response = next(r for r in iter_records(corpus_dir / "warc" / "example-iana.org-chunked.warc")
                    if r.warc_type == "response")
    body = decode_payload(response)
    assert body.lstrip().lower().startswith(b"<!doctype html") and body.rstrip().endswith(b"</html>")


def test_a_truncated_warc_gives_the_whole_records_then_an_error_naming_the_offset(corpus_dir: Path) -> None:
    path = corpus_dir / "warc" / "example-trunc.warc"
    got = []
    with pytest.raises(InputError) as err:
        for rec in iter_records(path):
            got.append(rec)
    # The response at 1197 says Content-Length 973, but its block digest is of 975 bytes: two
    # stray bytes follow the block, so the record is bad (warcio reads it with a warning).
    assert [r.warc_type for r in got] == ["warcinfo", "warcinfo"]
    message = str(err.value)
    assert "example-trunc.warc" in message and "offset 1197" in message and "\n" not in message
    assert "Content-Length (973) does not end the block" in message
    notes: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=notes.append))
    assert [r.offset for r in kept] == [0, 488, 2566]  # read on from the next WARC/1. line
    assert notes[-1].endswith("skipped 1 record (1369 bytes)")


@pytest.mark.parametrize("name", ["example.warc", "example.warc.gz"])
def test_a_record_cut_short_is_named_and_can_be_skipped(corpus_dir: Path, tmp_path: Path, name: str) -> None:
    whole = list(iter_records(corpus_dir / "warc" / name))
    cut_at = whole[3].offset + whole[3].length - 100  # type: ignore[operator]
    path = tmp_path / name
    path.write_bytes((corpus_dir / "warc" / name).read_bytes()[:cut_at])
    got = []
    with pytest.raises(InputError, match=rf"offset {whole[3].offset} \(record 4\): truncated"):
        for rec in iter_records(path):
            got.append(rec)
    assert [r.record_id for r in got] == [r.record_id for r in whole[:3]]
    skipped: list[str] = []
    kept = list(iter_records(path, skip_bad_records=True, on_skip=skipped.append))
    assert [r.record_id for r in kept] == [r.record_id for r in whole[:3]]
    assert len(skipped) == 2 and f"offset {whole[3].offset}" in skipped[0]
    assert "skipped the rest of" in skipped[0]
    assert skipped[1].endswith(f"skipped 1 record ({cut_at - whole[3].offset} bytes)")


def test_a_non_chunked_gzip_reads_but_does_not_pretend_to_have_offsets(corpus_dir: Path) -> None:
    notes: list[str] = []
    records = list(iter_records(corpus_dir / "warc" / "example-bad-non-chunked.warc.gz", on_skip=notes.append))
    assert len(records) == 6
    assert all(r.offset is None and r.length is None for r in records[1:])
    assert any("one gzip stream" in n for n in notes)


def test_wrong_chunks_do_not_produce_zero_length_locations(corpus_dir: Path) -> None:
    records = list(iter_records(corpus_dir / "warc" / "example-wrong-chunks.warc.gz", on_skip=lambda _: None))
    assert [r.warc_type for r in records] == ["response", "request"]
    assert all(r.length is None or r.length > 0 for r in records)


@pytest.mark.parametrize("name", ["example.arc", "example.arc.gz", "bad.arc", "example-space-in-url.arc"])
def test_arc_files_are_refused_in_one_line(corpus_dir: Path, name: str) -> None:
    with pytest.raises(InputError, match="ARC file, not WARC"):
        list(iter_records(corpus_dir / "warc" / name))


def test_spaces_in_target_uris_are_kept(corpus_dir: Path) -> None:
    records = list(iter_records(corpus_dir / "warc" / "example-space-in-target-uri.warc.gz"))
    assert records[-1].url == "file:///example with spaces.png"


def test_wget_angle_brackets_are_removed_from_uris(corpus_dir: Path) -> None:
    records = list(iter_records(corpus_dir / "warc" / "example-wget-bad-target-uri.warc.gz"))
    assert records[1].url == "http://example.com/"


def test_digests_are_checked_when_asked(corpus_dir: Path) -> None:
    good = list(iter_records(corpus_dir / "warc" / "example.warc.gz", verify_digests=True))
    assert len(good) == 6
    path = corpus_dir / "warc" / "example-digest.warc"
    plain = list(iter_records(path))
    skipped: list[str] = []
    checked = list(iter_records(path, verify_digests=True, skip_bad_records=True, on_skip=skipped.append))
    assert len(checked) + len(skipped) - 1 == len(plain)
    assert skipped[:-1] and all("Digest does not match" in s for s in skipped[:-1])
    assert f"skipped {len(skipped) - 1} record" in skipped[-1] and skipped[-1].endswith(" bytes)")


def test_a_header_cut_short_is_named(corpus_dir: Path, tmp_path: Path) -> None:
    source = corpus_dir / "warc" / "example.warc"
    whole = list(iter_records(source))
    path = tmp_path / "cut.warc"
    path.write_bytes(source.read_bytes()[: whole[2].offset + 60])  # type: ignore[operator]
    with pytest.raises(InputError, match=rf"offset {whole[2].offset} \(record 3\): the WARC header is cut short"):
        list(iter_records(path))


def test_a_file_that_is_not_warc_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "x.warc.gz"
    path.write_bytes(gzip.compress(b"<html>not a warc</html>"))
    with pytest.raises(InputError, match=r"a gzip file but not a WARC \(no WARC/1\.x header at offset 0"):
        list(iter_records(path))
    with pytest.raises(InputError, match="cannot open"):
        list(iter_records(tmp_path / "missing.warc"))


def test_stdin_is_read_with_the_same_locations(corpus_dir: Path) -> None:
    path = corpus_dir / "warc" / "example.warc.gz"
    code = (
        "import json; from ccrawl.warc.reader import iter_records; "
        "print(json.dumps([[r.offset, r.length] for r in iter_records('-')]))"
    )
    out = subprocess.run([sys.executable, "-c", code], input=path.read_bytes(), capture_output=True, check=True)
    import json

    assert json.loads(out.stdout) == [[r.offset, r.length] for r in iter_records(path)]
