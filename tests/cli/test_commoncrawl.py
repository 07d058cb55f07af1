"""The Common Crawl commands end to end against the fake: pipes, raw output, exit codes, provenance."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec


@pytest.fixture(scope="module")
def fakecc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    with FakeCCServer(tmp_path_factory.mktemp("fakecc"), SiteSpec(records=12, files=2)) as server:
        yield server


def _env(fakecc: FakeCCServer, data_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        CCRAWL_COLLINFO_ENDPOINT=f"{fakecc.url}/collinfo.json",
        CCRAWL_DATA_ENDPOINT=fakecc.url,
        CCRAWL_CDX_ENDPOINT=fakecc.url,
        CCRAWL_DATA_DIR=str(data_dir),
        CCRAWL_GLOBAL_RATE="0",
        CCRAWL_BACKOFF="10ms",
        CCRAWL_CONFIG_DIR=str(data_dir / "no-config"),
    )
    env.update(extra)
    return env


def _ccrawl(args: list[str], env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ccrawl", *args], input=stdin, env=env, capture_output=True,
                          timeout=120)


def test_search_locations_pipe_into_fetch_and_batch_is_byte_identical(fakecc: FakeCCServer, tmp_path: Path) -> None:
    env = _env(fakecc, tmp_path)
    search = _ccrawl(["search", "*.example.org", "--locations"], env)
    assert search.returncode == 0, search.stderr
    assert search.stdout.count(b"\n") >= 2
    one = _ccrawl(["fetch", "-"], env, search.stdout)
    batch = _ccrawl(["fetch", "-", "--batch", "--order", "input"], env, search.stdout)
    assert one.returncode == batch.returncode == 0, (one.stderr, batch.stderr)
    assert one.stdout == batch.stdout and b"</html>" in one.stdout
    dry = _ccrawl(["fetch", "-", "--batch", "--dry-run"], env, search.stdout)
    lines = search.stdout.count(b"\n")
    assert dry.stdout.decode().startswith(f"{lines} locations in ")
    assert dry.stdout.decode().rstrip().endswith("x amplification")


def test_fetch_one_location_by_flags_and_headers_flag(fakecc: FakeCCServer, tmp_path: Path) -> None:
    cap = next(c for c in fakecc.site.captures if c["status"] == "200")
    args = ["fetch", "--file", cap["filename"], "--offset", cap["offset"], "--length", cap["length"]]
    out = _ccrawl([*args, "--headers"], _env(fakecc, tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"HTTP/1.1 200 OK\nContent-Type: text/html")


def test_get_prints_the_newest_capture(fakecc: FakeCCServer, tmp_path: Path) -> None:
    cap = next(c for c in fakecc.site.captures if c["status"] == "200" and "/CC-MAIN-2025-26/" in c["filename"])
    out = _ccrawl(["get", cap["url"]], _env(fakecc, tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"<!DOCTYPE html>")
    missing = _ccrawl(["get", "https://nowhere.example/"], _env(fakecc, tmp_path))
    assert missing.returncode == 3 and b"no capture" in missing.stderr


def test_crawls_latest_with_the_server_down_and_nothing_cached_exits_8(tmp_path: Path, fakecc: FakeCCServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env(fakecc, tmp_path, CCRAWL_COLLINFO_ENDPOINT=f"http://127.0.0.1:{port}/collinfo.json", CCRAWL_RETRIES="1")
    out = _ccrawl(["crawls", "latest"], env)
    assert out.returncode == 8
    assert out.stderr.decode().count("\n") == 1 and "pass -c" in out.stderr.decode()


def test_stats_writes_csv_rows(fakecc: FakeCCServer, tmp_path: Path) -> None:
    out = _ccrawl(["stats", "-c", "CC-MAIN-2024-10", "--kinds", "warc,wet", "-o", "csv"], _env(fakecc, tmp_path))
    assert out.stdout.decode() == "crawl,kind,files\nCC-MAIN-2024-10,warc,1\nCC-MAIN-2024-10,wet,1\n"


def test_export_records_the_exact_command_line(fakecc: FakeCCServer, tmp_path: Path) -> None:
    args = ["export", "*.example.org", "--prefix", "org", "--out-dir", str(tmp_path / "out"), "--creator", "A B"]
    out = _ccrawl(args, _env(fakecc, tmp_path))
    assert out.returncode == 0, out.stderr
    (path,) = (tmp_path / "out").glob("*.warc.gz")
    with open(path, "rb") as fh:
        first = next(iter(ArchiveIterator(fh)))
        info = first.content_stream().read().decode()
    assert first.rec_type == "warcinfo"
    assert f"command-line: {shlex.join(['ccrawl', *args])}" in info
    assert "creator: A B" in info and "prefix: org" in info


def test_download_from_stdin_then_rerun_skips(fakecc: FakeCCServer, tmp_path: Path) -> None:
    env = _env(fakecc, tmp_path)
    paths = _ccrawl(["paths", "wet"], env)
    listed = _ccrawl(["paths", "wet", "-o", "url"], env)
    assert listed.stdout.decode().splitlines()[0].startswith(f"{fakecc.url}/crawl-data/")
    plain = b"".join(line.split(b'"path": "')[1].split(b'"')[0] + b"\n" for line in paths.stdout.splitlines())
    first = _ccrawl(["download", "-", "--out", str(tmp_path / "d"), "--flat", "-o", "csv"], env, plain)
    assert first.returncode == 0, first.stderr
    assert first.stdout.decode().count(",downloaded,") == 2
    again = _ccrawl(["download", "-", "--out", str(tmp_path / "d"), "--flat", "-o", "csv"], env, plain)
    assert again.stdout.decode().count(",exists,") == 2


def test_verbose_prints_the_rate_in_force_once(fakecc: FakeCCServer, tmp_path: Path) -> None:
    out = _ccrawl(["stats", "-v", "-o", "csv"], _env(fakecc, tmp_path, CCRAWL_GLOBAL_RATE="1ms"))
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.decode().splitlines() if "rate in force" in line]
    assert lines == [f"net: rate in force: --rate 0s per process, --global-rate 0.001s shared through "
                     f"{tmp_path / 'ratelimit.lock'}"]
