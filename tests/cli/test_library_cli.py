"""``download --library`` against the fake Common Crawl, and ``library list|du|verify|gc|scan`` end to end."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.ops.commoncrawl import cc_download
from ccrawl.ops.context import OpContext
from ccrawl.store.library import Library, download_relpath
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec

CRAWL = "CC-MAIN-2025-26"


@pytest.fixture(scope="module")
def fakecc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    with FakeCCServer(tmp_path_factory.mktemp("fakecc"), SiteSpec(records=12, files=2)) as server:
        yield server


def _env(fakecc: FakeCCServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        CCRAWL_COLLINFO_ENDPOINT=f"{fakecc.url}/collinfo.json",
        CCRAWL_DATA_ENDPOINT=fakecc.url,
        CCRAWL_CDX_ENDPOINT=fakecc.url,
        CCRAWL_DATA_DIR=str(tmp_path / "data"),
        CCRAWL_LIBRARY=str(tmp_path / "lib"),
        CCRAWL_GLOBAL_RATE="0",
        CCRAWL_BACKOFF="10ms",
        CCRAWL_CONFIG_DIR=str(tmp_path / "no-config"),
    )
    env.update(extra)
    return env


def _ccrawl(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _source(fakecc: FakeCCServer, path: str) -> bytes:
    return (fakecc.site.root / path).read_bytes()


def test_download_library_lands_in_crawl_kind_file_and_records_the_streamed_sha256(
    fakecc: FakeCCServer, tmp_path: Path
) -> None:
    env = _env(fakecc, tmp_path)
    out = _ccrawl(["download", "warc", "--library", "-c", CRAWL, "-o", "json"], env)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    lib = Library(tmp_path / "lib")
    entries = lib.load()
    assert len(rows) == 2 and len(entries) == 2
    for row in rows:
        rel = download_relpath(row["path"], "warc")
        assert rel.startswith(f"{CRAWL}/warc/") and Path(row["file"]) == lib.locate(rel)
        source = _source(fakecc, row["path"])
        assert lib.locate(rel).read_bytes() == source
        entry = entries[rel]
        assert (entry.crawl, entry.kind, entry.format, entry.size) == (CRAWL, "warc", "raw", len(source))
        assert entry.sha256 == row["sha256"] == hashlib.sha256(source).hexdigest()
    again = json.loads(_ccrawl(["download", "warc", "--library", "-c", CRAWL, "-o", "json"], env).stdout)
    assert {r["status"] for r in again} == {"exists"}
    assert sorted(r["sha256"] for r in again) == sorted(r["sha256"] for r in rows)
    assert Library(tmp_path / "lib").load() == entries


def test_a_resumed_partial_download_records_the_whole_files_checksum(fakecc: FakeCCServer, tmp_path: Path) -> None:
    path = next(c["filename"] for c in fakecc.site.captures if f"/{CRAWL}/" in c["filename"])
    source = _source(fakecc, path)
    lib = Library(tmp_path / "lib")
    dest = lib.locate(download_relpath(path))
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(source[:777])
    (row,) = list(cc_download(paths=[path], library=str(lib.root), ctx=OpContext.of(fakecc.client_options())))
    assert row["status"] == "resumed" and dest.read_bytes() == source
    (entry,) = lib.load().values()
    assert entry.sha256 == hashlib.sha256(source).hexdigest() and entry.size == len(source)


def test_two_downloads_into_one_library_at_once_keep_both_sets_of_records(
    fakecc: FakeCCServer, tmp_path: Path
) -> None:
    env = _env(fakecc, tmp_path)
    procs = [
        subprocess.Popen([sys.executable, "-m", "ccrawl", "download", kind, "--library", "-c", CRAWL, "-j", "1",
                          "-o", "csv"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for kind in ("wet", "wat", "robotstxt", "non200responses")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    kinds = sorted(e.kind for e in Library(tmp_path / "lib").load().values())
    assert kinds == ["non200responses"] * 2 + ["robotstxt"] * 2 + ["wat"] * 2 + ["wet"] * 2


def test_download_library_refuses_out_and_flat(fakecc: FakeCCServer, tmp_path: Path) -> None:
    env = _env(fakecc, tmp_path)
    out = _ccrawl(["download", "warc", "--library", "--out", str(tmp_path / "x")], env)
    assert out.returncode == 2 and "drop one" in out.stderr
    flat = _ccrawl(["download", "warc", "--library", "--flat", "-c", CRAWL], env)
    assert flat.returncode == 2 and "drop --flat" in flat.stderr


def _library(tmp_path: Path) -> Library:
    lib = Library(tmp_path / "lib")
    for rel, data in ((f"{CRAWL}/warc/a.warc.gz", b"aaaa"), (f"{CRAWL}/wet/b.wet.gz", b"bb"),
                      ("CC-MAIN-2024-10/parquet/markdown/c.parquet", b"c")):
        path = lib.locate(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return lib


def test_scan_then_list_du_and_verify_through_the_cli(fakecc: FakeCCServer, tmp_path: Path) -> None:
    env = _env(fakecc, tmp_path)
    lib = _library(tmp_path)
    empty = _ccrawl(["library", "list"], env)
    assert empty.returncode == 3 and "library scan" in empty.stderr
    scan = _ccrawl(["library", "scan", "-o", "csv", "--no-header"], env)
    assert scan.returncode == 0 and scan.stdout.count(",added,") == 3
    assert _ccrawl(["library", "scan", "-o", "csv", "--no-header"], env).stdout == ""
    listed = _ccrawl(["library", "list", "-c", CRAWL, "--kind", "wet", "-o", "jsonl"], env)
    assert [json.loads(x)["path"] for x in listed.stdout.splitlines()] == [f"{CRAWL}/wet/b.wet.gz"]
    assert len(_ccrawl(["library", "list", "-n", "2", "-o", "jsonl"], env).stdout.splitlines()) == 2
    du = json.loads(_ccrawl(["library", "du", "--by", "format", "-o", "json"], env).stdout)
    assert du[-1] == {"format": "total", "files": 3, "bytes": 7, "size": "7 B"}
    ok = _ccrawl(["library", "verify"], env)
    assert ok.returncode == 0 and ok.stdout == ""
    lib.locate(f"{CRAWL}/warc/extra.warc.gz").write_bytes(b"x")
    untracked = _ccrawl(["library", "verify", "-o", "csv"], env)
    assert untracked.returncode == 0 and ",untracked," in untracked.stdout
    lib.locate(f"{CRAWL}/warc/a.warc.gz").write_bytes(b"abcd")
    quick = _ccrawl(["library", "verify", "--quick", "-o", "csv"], env)
    assert quick.returncode == 0
    corrupt = _ccrawl(["library", "verify", "-o", "csv"], env)
    assert corrupt.returncode == 1 and ",corrupt," in corrupt.stdout and "1 corrupt" in corrupt.stderr


def test_gc_is_a_dry_run_until_yes_and_reads_go_durations(fakecc: FakeCCServer, tmp_path: Path) -> None:
    env = _env(fakecc, tmp_path)
    lib = _library(tmp_path)
    _ccrawl(["library", "scan"], env)
    assert _ccrawl(["library", "gc"], env).returncode == 2
    assert _ccrawl(["library", "gc", "--older-than", "soon"], env).returncode == 2
    young = _ccrawl(["library", "gc", "--older-than", "8w", "-o", "csv", "--no-header"], env)
    assert young.returncode == 0 and young.stdout == ""
    dry = _ccrawl(["library", "gc", "-c", "2024", "-o", "csv", "--no-header"], env)
    assert lib.locate("CC-MAIN-2024-10/parquet/markdown/c.parquet").exists()
    real = _ccrawl(["library", "gc", "-c", "2024", "--yes", "-o", "csv", "--no-header"], env)
    assert real.returncode == 0
    paths = [line.split(",")[1] for line in dry.stdout.splitlines()]
    assert paths == [line.split(",")[1] for line in real.stdout.splitlines()]
    assert paths[0] == "CC-MAIN-2024-10/parquet/markdown/c.parquet" and paths[-1] == "CC-MAIN-2024-10/"
    assert not lib.locate("CC-MAIN-2024-10").exists() and len(lib.load()) == 2
