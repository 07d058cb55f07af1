"""``recrawl run`` refuses what cannot work before it starts, in one line (issue #13, item 9)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main


def _run(wl: Path, *args: str) -> list[str]:
    return ["recrawl", "run", "--from", str(wl), "--column", "url", "--progress", "none", "--delay", "0", *args]


def _one_line(code: int, capsys: pytest.CaptureFixture[str], expect_code: int, *words: str) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == expect_code and len(err) == 1, (code, err)
    assert err[0].startswith("ccrawl: ") and "internal error" not in err[0], err
    for word in words:
        assert word in err[0], err


@pytest.mark.parametrize("ip", ["300.1.1.1", "localhost", "1.2.3", "::gg"])
def test_bad_resolve_ip(tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str], ip: str) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    _one_line(main(_run(wl, "--resolve", f"a.test={ip}")), capsys, 2, "--resolve", ip)


def test_metrics_addr_on_a_busy_port(tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(_run(wl, "--metrics-addr", f"127.0.0.1:{port}", "--resolve", "*.test=127.0.0.1"))
    _one_line(code, capsys, 2, "--metrics-addr", str(port))


def test_out_under_a_file(tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    (tmp_path / "afile").write_text("x")
    _one_line(main(_run(wl, "--out", str(tmp_path / "afile" / "out"))), capsys, 2, "--out")


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory this process cannot write: chmod for a user; for root (who writes anyway) a
    read-only tmpfs mounted there, skipped when mounting is not allowed."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        ro.chmod(0o500)
        yield ro
        ro.chmod(0o700)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"root, and cannot mount a read-only tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield ro
    finally:
        subprocess.run(["umount", str(ro)], check=False)


def test_out_read_only(
    tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str], read_only_dir: Path
) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    _one_line(main(_run(wl, "--out", str(read_only_dir))), capsys, 2, "--out", "not writable")


def test_state_is_a_directory(tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    (tmp_path / "st").mkdir()
    _one_line(main(_run(wl, "--state", str(tmp_path / "st"))), capsys, 2, "--state", "directory")


def test_state_in_a_missing_directory(tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    _one_line(main(_run(wl, "--state", str(tmp_path / "nope" / "s.json"))), capsys, 2, "--state")


def test_journal_in_a_missing_directory(
    tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    _one_line(main(_run(wl, "--journal", str(tmp_path / "nope" / "j.jsonl"))), capsys, 2, "--journal")


def test_user_agent_with_a_newline_in_the_library_call(tmp_path: Path, write_worklist: Any) -> None:
    from ccrawl.errors import UsageError
    from ccrawl.recrawl import run_recrawl

    wl = write_worklist(tmp_path / "wl", ["http://a.test/"], parts=1)
    with pytest.raises(UsageError, match="user_agent"):
        run_recrawl(str(wl), column="url", user_agent="bot\r\nX-Evil: 1", delay=0)
