"""``ccrawl search`` / ``cdx`` end to end: stderr lines, exit codes, and ``search --locations | fetch -``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer, index_warc_tree
from ccrawl.testing.fakecc.site import build_site


@pytest.fixture(scope="module")
def cdx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CdxServer, str]]:
    root = tmp_path_factory.mktemp("clisite")
    site = build_site(root, SiteSpec(records=160, files=2, older_records=6, older_files=1))
    with CdxServer(CdxIndex(index_warc_tree(root), lines_per_block=5)) as srv:
        yield srv, site.crawls[0]


@pytest.fixture
def env(cdx: tuple[CdxServer, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    srv, crawl = cdx
    srv.index.faults.clear()
    for key, value in {"CCRAWL_CDX_ENDPOINT": srv.url, "CCRAWL_GLOBAL_RATE": "0", "CCRAWL_RETRIES": "1",
                       "CCRAWL_BACKOFF": "1ms", "CCRAWL_DATA_DIR": str(tmp_path / "data"),
                       "CCRAWL_CONFIG_DIR": str(tmp_path / "cfg")}.items():
        monkeypatch.setenv(key, value)
    return crawl


def test_explain_goes_to_stderr_and_rows_to_stdout(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "*.example.com", "-c", env, "--status", "200", "--explain", "-o", "jsonl"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and all(r["status"] == 200 for r in rows)
    lines = err.splitlines()
    assert lines[0] == f"search: 1 crawl: {env}"
    assert lines[2] == "search: pushed to the server: --status 200"
    assert lines[-1].startswith("search: read ") and lines[-1].endswith(" bytes)")


def test_cdx_is_an_alias_and_nothing_matched_is_exit_3(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cdx", "nothing.example.invalid/", "-c", env]) == 3
    assert "no capture of nothing.example.invalid/" in capsys.readouterr().err


def test_a_skipped_page_prints_the_seed_lines_and_strict_exits_75(env: str, cdx: tuple[CdxServer, str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    srv, crawl = cdx
    srv.index.fail(crawl, 1, "503")
    assert main(["search", "*.example.com", "-c", crawl, "-o", "jsonl"]) == 0
    err = capsys.readouterr().err
    assert f"search: {crawl}: CDX page 1: HTTP 503, skipping the page" in err
    assert err.rstrip().endswith("run it again or pass --strict to fail instead")
    assert main(["search", "*.example.com", "-c", crawl, "--strict", "-o", "jsonl"]) == 75


def test_bad_flags_are_exit_2(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "example.com", "-c", env, "--at", "2024", "--latest-only"]) == 2
    assert main(["search", "example.com", "-c", env, "--status", "ok"]) == 2


def test_search_locations_piped_into_fetch_round_trips(tmp_path: Path) -> None:
    with FakeCCServer(tmp_path / "cc", SiteSpec(records=12, files=2)) as cc:
        crawl = cc.site.crawls[0]
        environ = dict(os.environ, CCRAWL_CDX_ENDPOINT=cc.url, CCRAWL_DATA_ENDPOINT=cc.url,
                       CCRAWL_COLLINFO_ENDPOINT=f"{cc.url}/collinfo.json", CCRAWL_GLOBAL_RATE="0",
                       CCRAWL_DATA_DIR=str(tmp_path / "data"), CCRAWL_CONFIG_DIR=str(tmp_path / "cfg"))
        cmd = [sys.executable, "-m", "ccrawl"]
        found = subprocess.run([*cmd, "search", "*.example.com", "-c", crawl, "-o", "jsonl"], env=environ,
                               capture_output=True, check=True)
        located = subprocess.run([*cmd, "search", "*.example.com", "-c", crawl, "--locations", "-o", "jsonl"],
                                 env=environ, capture_output=True, check=True)
        fetched = subprocess.run([*cmd, "fetch", "-", "--meta", "-o", "jsonl"], env=environ,
                                 input=located.stdout, capture_output=True, check=True)
        want = [(r["url"], r["filename"], r["offset"]) for r in map(json.loads, found.stdout.splitlines())]
        got = [(r["url"], r["filename"], r["offset"]) for r in map(json.loads, fetched.stdout.splitlines())]
        assert want and got == want


def test_sigterm_mid_run_removes_the_spill_files(cdx: tuple[CdxServer, str], tmp_path: Path) -> None:
    import signal
    import time

    srv, _ = cdx
    crawls = ",".join(sorted(srv.index.crawls)[:3])
    spill = tmp_path / "tmp"
    spill.mkdir()
    environ = dict(os.environ, CCRAWL_CDX_ENDPOINT=srv.url, CCRAWL_GLOBAL_RATE="0", TMPDIR=str(spill),
                   CCRAWL_DATA_DIR=str(tmp_path / "data"), CCRAWL_CONFIG_DIR=str(tmp_path / "cfg"))
    srv.index.delay = 0.3
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ccrawl", "search", "*.example.com", "-c", crawls, "--latest-only",
             "--max-buffer", "2", "-o", "jsonl"],
            env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not any(spill.rglob("*.jsonl")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never spilled"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        srv.index.delay = 0.0
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr.read() if proc.stderr else b""
    assert b"internal error" not in (proc.stderr.read() if proc.stderr else b"")
    assert list(spill.iterdir()) == []
