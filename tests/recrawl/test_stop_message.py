"""A Ctrl-C that has to wait for requests in flight says so at once (issue #13, item 11)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def test_first_ctrl_c_says_how_many_requests_it_waits_for_and_how_long(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    slow = [f"http://site{i}.test:{web.port}/fault/slow-ttfb?s=3" for i in range(6)]
    wl = write_worklist(tmp_path / "wl", slow, parts=1)
    journal = tmp_path / "j.jsonl"
    cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
           "--resolve", "*.test=127.0.0.1", "--workers", "8", "--delay", "0s", "--timeout", "7s",
           "--progress", "none", "--journal", str(journal), "--no-extract"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and '"event": "start"' not in (journal.read_text() if journal.exists() else ""):
        time.sleep(0.05)
    time.sleep(1.0)  # the six slow requests are on the wire
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    m = re.search(r"stopping: waiting for (\d+) requests, up to 7 s; Ctrl-C again to abort", err)
    assert m and 1 <= int(m.group(1)) <= 6, err
    assert err.index("stopping:") < err.index("recrawl:"), "said before the summary, while it waits"
