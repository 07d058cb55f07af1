"""ccrawl convert: archives to Parquet and JSONL, --markdown, directories, --library and the manifest."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.warc.reader import decode_payload, iter_records
from tests.markdown.conftest import SHARDS, _warc


def _archive(tmp_path: Path, kind: str = "warc") -> Path:
    path = tmp_path / ("in.warc.gz" if kind == "warc" else "in.warc.wet.gz")
    path.write_bytes(_warc(SHARDS[0], kind))
    return path


def test_parquet_one_row_per_record_with_payloads_and_markdown(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    src = _archive(tmp_path)
    assert main(["convert", str(src), "--markdown", "-O", str(tmp_path / "out.parquet")]) == 0
    table = pq.read_table(tmp_path / "out.parquet")
    records = list(iter_records(src))
    assert table.num_rows == len(records)
    rows = table.to_pylist()
    for row, rec in zip(rows, records, strict=True):
        assert (row["offset"], row["length"], row["type"], row["url"]) == (rec.offset, rec.length, rec.warc_type,
                                                                            rec.url)
        body = decode_payload(rec) if rec.http_headers is not None else rec.payload
        assert row["payload"] == body
    html = [r for r in rows if r["mime"] == "text/html"]
    assert html and all(r["markdown"] for r in html)
    assert "Hà Nội" in html[0]["markdown"]
    pdf = next(r for r in rows if r["mime"] == "application/pdf")
    assert pdf["markdown"] is None and pdf["status"] == 200
    assert json.loads(pdf["http_headers"])[0] == ["Content-Type", "application/pdf"]


def test_jsonl_text_and_base64_payloads(tmp_path: Path) -> None:
    src = tmp_path / "bin.warc.gz"
    from tests.markdown.conftest import Page

    src.write_bytes(_warc([Page("https://x.example/b", b"\xff\xfe\x00binary", mime="application/octet-stream"),
                           Page("https://x.example/t", b"<html><body>caf\xc3\xa9</body></html>")], "warc"))
    assert main(["convert", str(src), "--to", "jsonl"]) == 0
    lines = [json.loads(line) for line in (tmp_path / "bin.warc.jsonl").read_text().splitlines()]
    assert lines[0]["payload_encoding"] == "base64" and base64.b64decode(lines[0]["payload"]) == b"\xff\xfe\x00binary"
    assert lines[1]["payload"] == "<html><body>café</body></html>" and "payload_encoding" not in lines[1]


def test_a_directory_of_archives_and_the_wet_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import duckdb

    d = tmp_path / "in"
    d.mkdir()
    _archive(d)
    _archive(d, "wet")
    (d / "README.txt").write_text("not an archive")
    assert main(["convert", str(d), "-O", str(tmp_path / "out")]) == 0
    made = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert made == ["in.warc.parquet", "in.warc.wet.parquet"]
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    n = con.execute(f"SELECT count(*) FROM '{tmp_path / 'out' / 'in.warc.wet.parquet'}' WHERE type = 'conversion'")
    assert n.fetchone() == (4,)
    assert main(["convert", str(tmp_path / "nope")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["convert", str(tmp_path / "empty")]) == 3


def test_library_writes_beside_the_raw_file_and_records_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib = tmp_path / "lib"
    raw = lib / "CC-MAIN-2099-01" / "warc"
    raw.mkdir(parents=True)
    src = _archive(raw)
    assert main(["--library", "--library-dir", str(lib), "convert", str(src), "--to", "jsonl"]) == 0
    out = lib / "CC-MAIN-2099-01" / "jsonl" / "warc" / "in.warc.jsonl"
    assert out.exists()
    manifest = json.loads((lib / "library.json").read_text())
    entries = manifest["artifacts"] if isinstance(manifest, dict) and "artifacts" in manifest else manifest
    text = json.dumps(entries)
    assert "CC-MAIN-2099-01/jsonl/warc/in.warc.jsonl" in text
    assert main(["library", "verify", "--library-dir", str(lib), "-o", "json"]) in (0, 3)
    outside = tmp_path / "x.warc.gz"
    shutil.copy(src, outside)
    assert main(["--library", "--library-dir", str(lib), "convert", str(outside)]) == 2
    assert "is not inside the library" in capsys.readouterr().err


def test_corrupt_input_leaves_no_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _archive(tmp_path)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(src.read_bytes()[:-40])
    assert main(["convert", str(cut)]) == 1
    assert not (tmp_path / "cut.warc.parquet").exists() and not (tmp_path / "cut.warc.parquet.tmp").exists()
    assert main(["convert", str(cut), "--skip-bad-records"]) == 0
    assert (tmp_path / "cut.warc.parquet").exists()
