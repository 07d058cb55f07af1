"""Hub commands offline: one line, exit 8, no huggingface_hub retry chatter."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccrawl.hub.hfhub import HfRepo, HubUnreachable, quiet_hub_logs
from ccrawl.hub.repo import HubBusy

REPO = Path(__file__).resolve().parents[2]


def test_a_hub_name_that_does_not_resolve_is_one_line_and_exit_8() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_ENDPOINT": "http://hub-mirror.invalid"}
    env.pop("CCRAWL_HUB", None)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", "some-org/some-list",
                           "--column", "url", "--out", "unused"], capture_output=True, text=True, env=env,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 8, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ccrawl: ") and "hub-mirror.invalid does not resolve" in lines[0]
    assert "Retrying in" not in proc.stderr and "thrown while requesting" not in proc.stderr
    assert time.monotonic() - started < 20  # huggingface_hub's own five retries take ~25 s


def test_unreachable_hub_is_still_busy_for_a_publisher_but_exits_8() -> None:
    repo = HfRepo("some-org/some-list", endpoint="http://hub-mirror.invalid")
    with pytest.raises(HubUnreachable) as info:
        repo.head()
    assert isinstance(info.value, HubBusy)  # a publisher's wait-and-retry still catches it
    assert info.value.exit_code == 8


def test_huggingface_hub_retry_chatter_becomes_one_line_per_noticeable_wait(
    capsys: pytest.CaptureFixture[str],
) -> None:
    quiet_hub_logs()
    for name in ("huggingface_hub.utils._http", "huggingface_hub.hf_api"):
        log = logging.getLogger(name)
        log.warning("'[Errno 111] Connection refused' thrown while requesting GET http://127.0.0.1:9/api/x")
        log.warning("Retrying in 4s [Retry 2/5].")
        log.warning("'[Errno 111] Connection refused' thrown while requesting GET http://127.0.0.1:9/api/x")
        log.warning("Retrying in 0.5s [Retry 1/5].")
    err = capsys.readouterr().err.splitlines()
    assert err == ["ccrawl: hub: [Errno 111] Connection refused; retrying (2/5) in 4 s"] * 2
