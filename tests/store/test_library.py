"""The dataset library: layout, the locked manifest (two processes at once), verify, gc and scan."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ccrawl.errors import CcrawlError, InputError, UsageError
from ccrawl.ops.context import OpContext
from ccrawl.ops.library import library_du, library_gc, library_list, library_scan, library_verify, select_crawls
from ccrawl.store.library import Library, download_relpath, layout_of, record_downloads

CRAWL = "CC-MAIN-2025-26"


def _put(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _recorded(lib: Library, rel: str, data: bytes, written: str | None = None) -> None:
    import datetime as dt

    _put(lib.root, rel, data)
    when = dt.datetime.fromisoformat(written) if written else None
    lib.record([lib.artifact(rel, size=len(data), sha256=hashlib.sha256(data).hexdigest(), written=when)])


# -- layout -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (f"{CRAWL}/warc/x.warc.gz", (CRAWL, "warc", "raw")),
        (f"{CRAWL}/parquet/markdown/part-0.parquet", (CRAWL, "markdown", "parquet")),
        (f"{CRAWL}/jsonl/wet/a.jsonl.gz", (CRAWL, "wet", "jsonl")),
        ("README.md", None),
        (f"{CRAWL}/README.md", None),
        ("notes/warc/x.warc.gz", None),
        (f"{CRAWL}/warc/x.warc.gz.part", None),
        (f"{CRAWL}/warc/.hidden", None),
        (f"{CRAWL}/csv/warc/x.csv", None),
        (f"{CRAWL}/warc/deeper/x.warc.gz", None),
    ],
)
def test_layout_accepts_only_crawl_kind_file_and_crawl_format_kind_file(rel: str, expected: object) -> None:
    assert layout_of(rel) == expected


@pytest.mark.parametrize(
    ("path", "kind", "expected"),
    [
        (f"crawl-data/{CRAWL}/segments/1.0/warc/a.warc.gz", "warc", f"{CRAWL}/warc/a.warc.gz"),
        (f"crawl-data/{CRAWL}/segments/1.0/crawldiagnostics/a.warc.gz", None, f"{CRAWL}/non200responses/a.warc.gz"),
        (f"https://data.commoncrawl.org/crawl-data/{CRAWL}/segments/1.0/wet/a.wet.gz", None, f"{CRAWL}/wet/a.wet.gz"),
        (f"cc-index/collections/{CRAWL}/indexes/cdx-00000.gz", None, f"{CRAWL}/cc-index/cdx-00000.gz"),
        (f"cc-index/table/cc-main/warc/crawl={CRAWL}/subset=robotstxt/part-0.parquet", None,
         f"{CRAWL}/cc-index-table/robotstxt.part-0.parquet"),
    ],
)
def test_download_paths_land_in_crawl_kind_file(path: str, kind: str | None, expected: str) -> None:
    assert download_relpath(path, kind) == expected


def test_a_path_without_a_crawl_or_kind_has_no_place() -> None:
    with pytest.raises(InputError, match="no crawl ID"):
        download_relpath("crawl-data/somewhere/x.warc.gz")
    with pytest.raises(InputError, match="download it by kind"):
        download_relpath(f"crawl-data/{CRAWL}/odd/x.gz")


# -- the manifest ----------------------------------------------------------------------------


def test_record_writes_every_field_and_leaves_no_temp_file(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    _recorded(lib, f"{CRAWL}/warc/a.warc.gz", b"abc")
    (row,) = json.loads((tmp_path / "library.json").read_text())["artifacts"]
    assert row == {
        "path": f"{CRAWL}/warc/a.warc.gz", "crawl": CRAWL, "kind": "warc", "format": "raw", "size": 3,
        "sha256": hashlib.sha256(b"abc").hexdigest(), "written": row["written"], "ccrawl": row["ccrawl"],
    }
    assert row["written"].endswith("Z") and row["ccrawl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [CRAWL, "library.json", "library.lock"]


def test_a_manifest_that_is_not_json_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "library.json").write_text("{not json")
    with pytest.raises(CcrawlError, match="library scan"):
        Library(tmp_path).load()


_WRITER = textwrap.dedent(
    """
    import sys, time
    from ccrawl.store.library import Library
    lib = Library(sys.argv[1])
    tag, n = sys.argv[2], int(sys.argv[3])
    print(time.time(), flush=True)
    for i in range(n):
        rel = f"CC-MAIN-2025-26/{tag}/f{i:04d}.gz"
        lib.record([lib.artifact(rel, size=i, sha256="0" * 64)])
    print(time.time(), flush=True)
    """
)


def test_two_processes_recording_at_once_lose_nothing(tmp_path: Path) -> None:
    n = 150
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), tag, str(n)], stdout=subprocess.PIPE, text=True)
        for tag in ("warc", "wet")
    ]
    spans = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        spans.append([float(x) for x in out.split()])
    (a0, a1), (b0, b1) = spans
    assert a0 < b1 and b0 < a1, "the two writers did not overlap in time, so the test proved nothing"
    entries = Library(tmp_path).load()
    assert len(entries) == 2 * n
    assert {e.kind for e in entries.values()} == {"warc", "wet"}


def test_record_downloads_records_finished_files_and_what_is_pending_at_close(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    rows = []
    for i in range(3):
        data = f"file {i}".encode()
        path = _put(tmp_path, f"{CRAWL}/warc/{i}.warc.gz", data)
        rows.append({"path": f"p{i}", "file": str(path), "status": "downloaded", "bytes": len(data),
                     "sha256": hashlib.sha256(data).hexdigest()})
    rows.append({"path": "p9", "file": str(tmp_path / "x"), "status": "failed: 404", "bytes": 0, "sha256": None})
    stream = record_downloads(lib, iter(rows), batch=100, interval=3600)
    next(stream)
    next(stream)
    stream.close()  # a consumer that stops early (-n 2) still gets what it saw recorded
    assert sorted(lib.load()) == [f"{CRAWL}/warc/0.warc.gz", f"{CRAWL}/warc/1.warc.gz"]


def test_an_existing_file_gets_its_recorded_checksum_without_a_new_record(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    rel = f"{CRAWL}/warc/a.warc.gz"
    _recorded(lib, rel, b"whole file", written="2020-01-01T00:00:00+00:00")
    row = {"path": "p", "file": str(tmp_path / rel), "status": "exists", "bytes": 10, "sha256": None}
    (out,) = list(record_downloads(lib, [row]))
    assert out["sha256"] == hashlib.sha256(b"whole file").hexdigest()
    assert lib.load()[rel].written == "2020-01-01T00:00:00Z"


# -- list, du ---------------------------------------------------------------------------------


def _three(tmp_path: Path) -> Library:
    lib = Library(tmp_path)
    _recorded(lib, "CC-MAIN-2024-10/warc/old.warc.gz", b"o" * 10, written="2024-03-01T00:00:00+00:00")
    _recorded(lib, f"{CRAWL}/wet/a.wet.gz", b"w" * 20)
    _recorded(lib, f"{CRAWL}/parquet/markdown/p.parquet", b"p" * 30)
    return lib


def test_list_narrows_by_crawl_kind_and_format(tmp_path: Path) -> None:
    _three(tmp_path)
    root = str(tmp_path)
    assert [r["kind"] for r in library_list(root)] == ["warc", "markdown", "wet"]
    assert [r["kind"] for r in library_list(root, crawl="latest")] == ["markdown", "wet"]
    assert [r["kind"] for r in library_list(root, crawl="2024")] == ["warc"]
    assert [r["kind"] for r in library_list(root, format="raw")] == ["warc", "wet"]
    assert [r["path"] for r in library_list(root, kind="wet")] == [f"{CRAWL}/wet/a.wet.gz"]
    assert len(list(library_list(root, limit=1))) == 1


def test_select_crawls_reads_the_c_forms_against_the_library() -> None:
    have = ["CC-MAIN-2024-10", "CC-MAIN-2024-33", "CC-MAIN-2025-26"]
    assert select_crawls("2", have) == {"CC-MAIN-2025-26", "CC-MAIN-2024-33"}
    assert select_crawls("2024", have) == {"CC-MAIN-2024-10", "CC-MAIN-2024-33"}
    assert select_crawls("CC-MAIN-2024-10,latest", have) == {"CC-MAIN-2024-10", "CC-MAIN-2025-26"}
    assert select_crawls("all", have) is None


def test_du_groups_and_ends_with_a_total_row_only_when_there_are_groups_to_total(tmp_path: Path) -> None:
    _three(tmp_path)
    rows = list(library_du(str(tmp_path)))
    assert [(r["crawl"], r["files"], r["bytes"]) for r in rows] == [
        ("CC-MAIN-2024-10", 1, 10), (CRAWL, 2, 50), ("total", 3, 60)]
    assert [r["format"] for r in library_du(str(tmp_path), by="format")] == ["parquet", "raw", "total"]
    assert list(library_du(str(tmp_path), by="kind", kind="wet")) == [
        {"kind": "wet", "files": 1, "bytes": 20, "size": "20 B"}]
    with pytest.raises(UsageError):
        list(library_du(str(tmp_path), by="size"))


# -- verify -----------------------------------------------------------------------------------


def test_verify_names_missing_resized_corrupt_and_untracked(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    for name in ("gone", "grown", "flipped", "fine"):
        _recorded(lib, f"{CRAWL}/warc/{name}.warc.gz", b"0123456789")
    (tmp_path / CRAWL / "warc/gone.warc.gz").unlink()
    (tmp_path / CRAWL / "warc/grown.warc.gz").write_bytes(b"0123456789+")
    (tmp_path / CRAWL / "warc/flipped.warc.gz").write_bytes(b"0123456780")
    _put(tmp_path, f"{CRAWL}/warc/stray.warc.gz", b"new")
    _put(tmp_path, "README.md", b"not an artifact")
    _put(tmp_path, f"{CRAWL}/warc/next.warc.gz.part", b"in progress")
    lines: list[str] = []
    rows = {r["path"].split("/")[-1]: r for r in library_verify(str(tmp_path), ctx=OpContext(notice=lines.append))}
    assert {k: r["problem"] for k, r in rows.items()} == {
        "gone.warc.gz": "missing", "grown.warc.gz": "resized", "flipped.warc.gz": "corrupt",
        "stray.warc.gz": "untracked"}
    assert rows["flipped.warc.gz"]["sha256"] == hashlib.sha256(b"0123456780").hexdigest()
    assert rows["grown.warc.gz"]["size"] == 11 and rows["grown.warc.gz"]["recorded_size"] == 10
    assert "1 missing, 1 resized, 1 corrupt, 1 untracked" in lines[0]
    quick = {r["path"].split("/")[-1]: r["problem"] for r in library_verify(str(tmp_path), quick=True)}
    assert "flipped.warc.gz" not in quick and quick["grown.warc.gz"] == "resized"
    assert [r["problem"] for r in library_verify(str(tmp_path), kind="wet")] == []


# -- gc ---------------------------------------------------------------------------------------


def test_gc_needs_a_selector(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--older-than, -c or --kind"):
        list(library_gc(str(tmp_path)))


def test_gc_dry_run_lists_exactly_what_the_real_run_deletes(tmp_path: Path) -> None:
    lib = _three(tmp_path)
    _recorded(lib, "CC-MAIN-2024-10/parquet/markdown/old.parquet", b"m", written="2024-03-02T00:00:00+00:00")
    _put(tmp_path, "CC-MAIN-2024-10/README.md", b"kept: not an artifact")
    before = sorted(p for p in tmp_path.rglob("*"))
    dry = list(library_gc(str(tmp_path), older_than=30 * 86400, now="2024-06-01T00:00:00+00:00"))
    assert sorted(p for p in tmp_path.rglob("*")) == before, "a dry run touched the disk"
    real = list(library_gc(str(tmp_path), older_than=30 * 86400, now="2024-06-01T00:00:00+00:00", yes=True))
    assert [r["path"] for r in dry] == [r["path"] for r in real] == [
        "CC-MAIN-2024-10/parquet/markdown/old.parquet", "CC-MAIN-2024-10/warc/old.warc.gz",
        "CC-MAIN-2024-10/parquet/markdown/", "CC-MAIN-2024-10/parquet/", "CC-MAIN-2024-10/warc/"]
    assert [r["action"] for r in dry] == ["would delete"] * 2 + ["would remove"] * 3
    assert [r["action"] for r in real] == ["deleted"] * 2 + ["removed"] * 3
    assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "CC-MAIN-2024-10").rglob("*")) == [
        "CC-MAIN-2024-10/README.md"]
    assert sorted(lib.load()) == [f"{CRAWL}/parquet/markdown/p.parquet", f"{CRAWL}/wet/a.wet.gz"]


def test_gc_by_kind_removes_the_crawl_directory_it_empties(tmp_path: Path) -> None:
    lib = _three(tmp_path)
    rows = list(library_gc(str(tmp_path), crawl="CC-MAIN-2024-10", yes=True))
    assert rows[-1] == {"action": "removed", "path": "CC-MAIN-2024-10/"}
    assert not (tmp_path / "CC-MAIN-2024-10").exists() and tmp_path.is_dir()
    assert len(lib.load()) == 2


def test_gc_drops_a_record_whose_file_is_already_gone(tmp_path: Path) -> None:
    lib = _three(tmp_path)
    (tmp_path / CRAWL / "wet/a.wet.gz").unlink()
    (row,) = [r for r in library_gc(str(tmp_path), kind="wet", yes=True) if "wet" in r["path"]]
    assert row["action"] == "dropped" and f"{CRAWL}/wet/a.wet.gz" not in lib.load()


# -- scan -------------------------------------------------------------------------------------


def test_scan_records_layout_files_once_and_rehash_catches_same_size_changes(tmp_path: Path) -> None:
    _put(tmp_path, f"{CRAWL}/warc/a.warc.gz", b"aaaa")
    _put(tmp_path, f"{CRAWL}/parquet/markdown/p.parquet", b"pp")
    _put(tmp_path, "README.md", b"hello")
    _put(tmp_path, f"{CRAWL}/notes.txt", b"hello")
    os.utime(tmp_path / CRAWL / "warc/a.warc.gz", (1_600_000_000, 1_600_000_000))
    first = list(library_scan(str(tmp_path)))
    assert [(r["path"], r["status"]) for r in first] == [
        (f"{CRAWL}/parquet/markdown/p.parquet", "added"), (f"{CRAWL}/warc/a.warc.gz", "added")]
    entry = Library(tmp_path).load()[f"{CRAWL}/warc/a.warc.gz"]
    assert entry.sha256 == hashlib.sha256(b"aaaa").hexdigest()
    assert entry.written == "2020-09-13T12:26:40Z" and entry.ccrawl is None
    (tmp_path / CRAWL / "warc/a.warc.gz").write_bytes(b"bbbb")  # same size: a plain scan does not read it
    assert list(library_scan(str(tmp_path))) == []
    (again,) = list(library_scan(str(tmp_path), rehash=True))
    assert again["status"] == "updated" and again["sha256"] == hashlib.sha256(b"bbbb").hexdigest()


def test_scan_keeps_a_download_record_it_finds_unchanged(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    _recorded(lib, f"{CRAWL}/warc/a.warc.gz", b"abc")
    before = lib.load()
    assert list(library_scan(str(tmp_path), rehash=True)) == []
    assert lib.load() == before
