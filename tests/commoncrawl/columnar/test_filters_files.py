"""``--hosts-file`` / ``--domains-file``: a regular file of bounded size, never echoed in an error."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ccrawl.commoncrawl.columnar import filters
from ccrawl.errors import CcrawlError, InputError, UsageError

SECRET = "sk-live-4242-TOPSECRET"


def _one_line(exc: CcrawlError) -> str:
    msg = str(exc)
    assert "\n" not in msg and msg.startswith("--hosts-file "), msg
    return msg


def test_a_good_file_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_text("# hosts\nExample.com\n\nwww.example.org.  # trailing comment\nexample.com\n")
    assert filters.read_list(path, what="host") == ("example.com", "www.example.org")


def test_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        filters.read_list("/dev/zero", what="host")
    assert "/dev/zero" in _one_line(info.value) and "not a regular file" in str(info.value)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        filters.read_list(tmp_path, what="host")
    assert "not a regular file" in _one_line(info.value)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "hosts.fifo"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def call() -> None:
        try:
            filters.read_list(fifo, what="host")
        except BaseException as exc:  # handed to the test thread
            result.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=5)
    if worker.is_alive():  # unblock the reader so the test run does not hang, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("read_list blocked on a FIFO")
    assert len(result) == 1 and isinstance(result[0], UsageError)
    assert str(fifo) in _one_line(result[0]) and "not a regular file" in str(result[0])


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "hosts.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="not a regular file"):
        filters.read_list(link, what="host")


def test_an_oversize_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filters, "MAX_LIST_BYTES", 1024)
    path = tmp_path / "hosts.txt"
    path.write_text(f"{SECRET}.example\n" + "a.example\n" * 200)
    with pytest.raises(UsageError) as info:
        filters.read_list(path, what="host")
    msg = _one_line(info.value)
    assert str(path) in msg and "1 KiB" in msg and SECRET not in msg
    path.write_text("a.example\n" * 100)  # 1000 bytes: under the cap
    assert filters.read_list(path, what="host") == ("a.example",)


def test_the_default_cap_is_64_mib() -> None:
    assert filters.MAX_LIST_BYTES == 64 << 20


def test_a_bad_line_is_named_by_number_not_quoted(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_text(f"ok.example\n# comment\npassword = {SECRET}\n")
    with pytest.raises(InputError) as info:
        filters.read_list(path, what="host")
    msg = _one_line(info.value)
    assert f"{path}:3" in msg and SECRET not in msg and "password" not in msg


def test_bad_bytes_are_not_quoted(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_bytes(b"ok.example\n" + SECRET.encode() + b"\xff\xfe\n")
    with pytest.raises(InputError) as info:
        filters.read_list(path, what="host")
    msg = _one_line(info.value)
    assert SECRET not in msg and "UTF-8" in msg


def test_missing_and_empty_files_keep_their_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        filters.read_list(tmp_path / "missing.txt", what="host")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(UsageError, match="holds no host"):
        filters.read_list(empty, what="host")


def test_build_goes_through_the_same_checks(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a regular file"):
        filters.build(domains_file="/dev/zero")
