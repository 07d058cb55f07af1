"""The extract.* operations: local HTML files in, one record per file out."""

from __future__ import annotations

from pathlib import Path

from ccrawl import ops
from ccrawl.extract.engines import ENGINE_VERSION

GOLDEN = Path(__file__).parent / "golden"


def test_extract_file_renders_each_path_and_reports_unreadable_ones(tmp_path: Path) -> None:
    missing = tmp_path / "missing.html"
    records = list(ops.get("extract.file")(paths=[str(GOLDEN / "article.html"), str(missing)],
                                           url="https://example.com/post"))  # fmt: skip
    assert records[0]["extractor"] == f"h2m@{ENGINE_VERSION}"
    assert records[0]["markdown"].startswith("# Saftiger Zitronenkuchen")
    assert records[0]["language"] == "deu" and records[0]["charset_source"] == "meta"
    assert records[1] == {"path": str(missing), "error": f"cannot read {missing}: No such file or directory"}


def test_extract_file_notes_a_page_cut_by_max_bytes(tmp_path: Path) -> None:
    page = tmp_path / "big.html"
    page.write_bytes(b"<p>" + b"word " * 10_000 + b"</p>")
    (record,) = ops.get("extract.file")(paths=[str(page)], extractor="raw", max_bytes=1000)
    assert record["truncated"] and record["notes"][0].startswith("size: input cut")


def test_extract_engines_lists_every_engine_with_its_label() -> None:
    rows = {r["name"]: r for r in ops.get("extract.engines")()}
    assert set(rows) == {"h2m", "readability", "raw", "wet", "trafilatura"}
    assert rows["h2m"]["label"] == f"h2m@{ENGINE_VERSION}" and rows["h2m"]["available"]
