"""export: rotating .warc.gz files opening with a warcinfo record of provenance, read back with warcio."""

from __future__ import annotations

from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from ccrawl import __version__
from ccrawl.errors import TemporaryFailure
from ccrawl.ops.commoncrawl import cc_export
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer


def _read(path: Path) -> list[tuple[str, dict[str, str], str | None, bytes]]:
    out = []
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):
            body = rec.content_stream().read()
            fields = {}
            if rec.rec_type == "warcinfo":
                for line in body.decode().splitlines():
                    if ": " in line:
                        k, v = line.split(": ", 1)
                        fields[k] = v
            out.append((rec.rec_type, fields, rec.rec_headers.get_header("WARC-Target-URI"), body))
    return out


def test_export_writes_provenance_and_the_records(fakecc: FakeCCServer, tmp_path: Path) -> None:
    caps = [c for c in fakecc.site.captures if c["filename"].startswith("crawl-data/CC-MAIN-2025-26/")]
    cmd = "ccrawl export - --prefix example --creator 'Jane Doe'"
    rows = list(cc_export(caps, prefix="example", subprefix="test", out_dir=str(tmp_path), creator="Jane Doe",
                          operator="ops@example.org", ctx=OpContext.of(fakecc.client_options(), command_line=cmd)))
    assert len(rows) == 1 and rows[0]["records"] == len(caps)
    path = Path(rows[0]["file"])
    assert path.name == "example-test-000000.extracted.warc.gz"
    records = _read(path)
    kind, info, _, _ = records[0]
    assert kind == "warcinfo"
    assert info["software"] == f"ccrawl/{__version__}"
    assert info["prefix"] == "example" and info["subprefix"] == "test"
    assert info["creator"] == "Jane Doe" and info["operator"] == "ops@example.org"
    assert info["command-line"] == cmd
    assert sorted(r[2] for r in records[1:]) == sorted(c["url"] for c in caps)
    assert all(r[0] == "response" for r in records[1:])
    assert rows[0]["bytes"] == path.stat().st_size


def test_export_rotates_at_size_and_every_file_opens_with_warcinfo(fakecc: FakeCCServer, tmp_path: Path) -> None:
    caps = fakecc.site.captures[:10]
    rows = list(cc_export(caps, prefix="rot", size=4000, out_dir=str(tmp_path),
                          ctx=OpContext.of(fakecc.client_options())))
    assert len(rows) > 1
    assert [Path(r["file"]).name for r in rows] == [f"rot-{i:06d}.extracted.warc.gz" for i in range(len(rows))]
    total = 0
    for row in rows:
        records = _read(Path(row["file"]))
        assert records[0][0] == "warcinfo"
        assert len(records) - 1 == row["records"] >= 1
        total += row["records"]
        assert row["records"] == 1 or row["bytes"] <= 4000
    assert total == 10
    assert not list(tmp_path.glob("*.part"))


def test_an_unreadable_record_is_skipped_or_fails_with_strict(fakecc: FakeCCServer, tmp_path: Path) -> None:
    good = fakecc.site.captures[0]
    missing = {**good, "filename": "crawl-data/nope.warc.gz"}
    lines: list[str] = []
    rows = list(cc_export([good, missing], prefix="p", out_dir=str(tmp_path / "a"),
                          ctx=OpContext.of(fakecc.client_options(), notice=lines.append)))
    assert rows[0]["records"] == 1
    assert any("incomplete, 1 record could not be read" in line for line in lines)
    with pytest.raises(TemporaryFailure):
        list(cc_export([missing, good], prefix="p", strict=True, out_dir=str(tmp_path / "b"),
                       ctx=OpContext.of(fakecc.client_options(), notice=lines.append)))
