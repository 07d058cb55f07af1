"""`ccrawl recrawl run`: flags pass straight through; bad values are one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main
from ccrawl.cli.recrawl_run import parse_size
from ccrawl.errors import UsageError
from ccrawl.testing.synthweb import SynthWeb


def test_cli_run_prints_the_summary_on_stderr_and_json_on_request(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:5], parts=1)
    code = main(["recrawl", "run", "--from", str(wl), "--column", "url", "--delay", "0", "--workers", "4",
                 "--resolve", "*.test=127.0.0.1", "--out", str(tmp_path / "out"), "--shard-size", "1MB",
                 "--progress", "none", "-o", "json"])
    captured = capsys.readouterr()
    assert code in (0, None)
    assert "recrawl: 5 fetched" in captured.err and "robots off" in captured.err
    assert json.loads(captured.out)["fetched"] == 5


@pytest.mark.parametrize("args", [
    ["--shard", "3", "--shards", "2"],
    ["--shard-size", "lots"],
    ["--delay", "soon"],
    ["--resolve", "nohost"],
])
def test_bad_flags_exit_two_with_one_line(
    tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    code = main(["recrawl", "run", "--from", str(wl), "--column", "url", "--progress", "none", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("ccrawl: ")


def test_sizes_read_like_the_seed_writes_them() -> None:
    # one size parser for every flag (ccrawl.config.parse_size): SI units are powers of ten, IEC of two
    assert parse_size("512MiB", "--shard-size") == 512 * 1024 * 1024
    assert parse_size("512MB", "--shard-size") == 512 * 10**6
    assert parse_size("1g", "--shard-size") == 10**9
    assert parse_size("2048", "--shard-size") == 2048
    with pytest.raises(UsageError, match="--shard-size"):
        parse_size("12 parsecs", "--shard-size")


def test_a_run_as_a_process_writes_nothing_but_its_summary_to_stderr(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    """Every pipeline process exits cleanly: no traceback, no 'Exception ignored' at interpreter exit."""
    import subprocess
    import sys

    wl = write_worklist(tmp_path / "wl", web.page_urls()[:30], parts=1)
    proc = subprocess.run(
        [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url", "--delay", "0",
         "--resolve", "*.test=127.0.0.1", "--out", str(tmp_path / "out"), "--progress", "none"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("recrawl: 30 fetched")
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
