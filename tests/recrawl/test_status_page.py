"""The live status page on --metrics-addr: served read-only beside the Prometheus gauges, and, in a
real headless browser, showing a real run's numbers as they change."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ccrawl.recrawl.telemetry import Telemetry
from ccrawl.testing.synthweb import SynthWeb

REPO = Path(__file__).resolve().parents[2]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_page_its_data_and_the_gauges_share_the_port_read_only() -> None:
    port = _port()
    tel = Telemetry(metrics_addr=f"127.0.0.1:{port}")
    try:
        for i in (1, 2, 3):
            tel.tick(fetched=10 * i, durable=8 * i, failed=i, bytes=1000 * i, part=0, row=8 * i, queue_bytes=0,
                     files=0, done=10 * i, total=100, errors={"timeout": i})
        base = f"http://127.0.0.1:{port}"
        status, page = _get(base + "/")
        assert status == 200 and b"<title>ccrawl recrawl</title>" in page
        assert not re.search(rb"<(script|link|img)[^>]+(src|href)=", page), "the page loads nothing from elsewhere"
        status, data = _get(base + "/status.json")
        snap = json.loads(data)
        assert status == 200 and snap["latest"]["done"] == 30 and snap["latest"]["errors"] == {"timeout": 3}
        assert [p["fetched"] for p in snap["history"]] == [10, 20, 30]
        status, metrics = _get(base + "/metrics")
        assert status == 200 and b"ccrawl_recrawl_fetched 30.0" in metrics
        assert _get(base + "/status.json", method="POST")[0] == 405
        assert _get(base + "/status.json", headers={"Host": "attacker.example"})[0] == 421
        assert _get(base + "/nothing")[0] == 404
    finally:
        tel.close()


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium: scripts/test installs Debian's chromium for this browser test")


def _browser(url: str, profile: Path, *, screenshot: Path | None = None) -> str:
    """The page as a real headless Chromium renders it after its script ran: the DOM (or a screenshot)."""
    args = [_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
            f"--user-data-dir={profile}", "--window-size=1100,1000", "--virtual-time-budget=3000"]
    args += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    done = subprocess.run([*args, url], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _card(dom: str, name: str) -> str:
    found = re.search(rf'id="card-{name}"><b>([^<]*)</b>', dom)
    assert found, f"no {name} card in the page"
    return found.group(1)


def _ticks(journal: Path) -> list[dict[str, Any]]:
    if not journal.exists():
        return []
    return [e for e in map(json.loads, journal.read_text().splitlines()) if e.get("event") == "tick"]


def test_a_real_browser_shows_a_running_recrawls_numbers_as_they_change(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    # 12 hosts, each answer 0.3 s late and 0.5 s between a host's requests: ~20 s of crawling
    urls = [f"http://site{i % 12}.test:{web.port}/fault/slow-ttfb?s=0.3&n={i}" for i in range(480)]
    urls[5::40] = [f"http://site{i % 12}.test:{web.port}/fault/reset?n={i}" for i in range(12)]  # some fail
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    port = _port()
    journal = tmp_path / "journal.jsonl"
    cmd = [sys.executable, "-m", "ccrawl", "recrawl", "run", "--from", str(wl), "--column", "url",
           "--out", str(tmp_path / "out"), "--state", str(tmp_path / "s.json"), "--resolve", "*.test=127.0.0.1",
           "--workers", "24", "--fetchers", "1", "--writers", "1", "--delay", "0.5s", "--no-extract",
           "--metrics-addr", f"127.0.0.1:{port}", "--journal", str(journal)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(t.get("fetched", 0) > 0 for t in _ticks(journal)):
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before the page could be looked at"
        url = f"http://127.0.0.1:{port}/"
        first_dom = _browser(url, tmp_path / "profile-1")
        before = [t["fetched"] for t in _ticks(journal)]
        first = int(_card(first_dom, "fetched"))
        time.sleep(2.5)
        assert proc.poll() is None, "the run ended before the second look"
        second_dom = _browser(url, tmp_path / "profile-2")
        second = int(_card(second_dom, "fetched"))
        after = [t["fetched"] for t in _ticks(journal)]
        shot = tmp_path / "status.png"
        _browser(url, tmp_path / "profile-3", screenshot=shot)
        still_running = proc.poll() is None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    # the page shows the run's own numbers: a fetched count the journal also recorded, rising
    assert first in before + after and second in after, (first, second, before, after, err[-500:])
    assert 0 < first < second, (first, second)
    assert "/" in _card(second_dom, "done") or _card(second_dom, "done") == str(second)
    assert "running" in second_dom
    # the run's own slowest hosts and failures, as the fetch processes reported them
    hosts = re.findall(r"<td>(site\d+\.test)</td>", second_dom)
    assert hosts and all(h.startswith("site") for h in hosts)
    assert "/fault/reset" in second_dom, "a failed fetch is listed among the last errors"
    assert shot.exists() and shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("CCRAWL_STATUS_SCREENSHOT"):  # how docs/img/status-page.png is made
        shutil.copyfile(shot, os.environ["CCRAWL_STATUS_SCREENSHOT"])
    assert still_running


def test_the_grafana_dashboard_asks_only_for_gauges_a_run_serves() -> None:
    dashboard = json.loads((REPO / "deploy" / "grafana" / "ccrawl-recrawl.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    asked = set(re.findall(r"\bccrawl_[a-z_]+", " ".join(exprs)))
    assert len(dashboard["panels"]) >= 8 and asked
    port = _port()
    tel = Telemetry(metrics_addr=f"127.0.0.1:{port}")
    try:
        tel.tick(fetched=1, durable=1, failed=0, bytes=10, part=0, row=1, queue_bytes=0, files=0)
        served = set(re.findall(rb"^(ccrawl_[a-z_]+) ", _get(f"http://127.0.0.1:{port}/metrics")[1], re.M))
    finally:
        tel.close()
    assert asked <= {name.decode() for name in served}, asked - {name.decode() for name in served}
    assert {v["name"] for v in dashboard["templating"]["list"]} == {"datasource", "instance"}
