"""The README's first command, ``bash scripts/demo``: its install step and its recrawl, read from output.

The install itself is never run here (it would repoint the machine's install): ``scripts/demo-install``
runs in dry-run mode with its stamps in a temporary directory, which exercises the decision (install
or skip) against the real interpreter. ``.ci/run`` runs the whole demo in an empty virtualenv.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _install_step(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    python3 = shim / "python3"  # the python running the tests is the one the step inspects
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python3.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
           "CCRAWL_DEMO_STAMP_DIR": str(tmp_path / "stamps"), "CCRAWL_DEMO_DRY_RUN": "1",
           "PYTHONPATH": str(REPO)}
    return subprocess.run(["bash", str(REPO / "scripts" / "demo-install"), *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_demo_installs_only_when_the_installed_version_is_not_this_checkouts(tmp_path: Path) -> None:
    first = _install_step(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "first install into" in first.stderr
    m = re.search(r"would run: python3 -m pip install -e '\.\[testing\]', then write (\w+) to (\S+)", first.stderr)
    assert m, first.stderr
    stamp_value, stamp = m.group(1), Path(m.group(2))
    assert stamp.parent == tmp_path / "stamps"

    # what a real install leaves behind: the stamp of this checkout's packaging and native sources
    stamp.parent.mkdir(parents=True)
    stamp.write_text(stamp_value + "\n")
    started = time.monotonic()
    again = _install_step(tmp_path)
    assert again.returncode == 0, again.stderr
    assert "already installed" in again.stderr and "install skipped" in again.stderr
    assert "pip install" not in again.stderr
    assert time.monotonic() - started < 30

    # pyproject.toml, setup.py or csrc/ changed since: reinstall, and say why
    stamp.write_text("0000000000000000\n")
    changed = _install_step(tmp_path)
    assert "changed since the last install" in changed.stderr and "would run" in changed.stderr


def test_after_the_test_command_the_demo_does_not_reinstall(tmp_path: Path) -> None:
    # scripts/test installs '.[dev]' (which holds '.[testing]') and records it
    assert "bash scripts/demo-install --record" in (REPO / "scripts" / "test").read_text(encoding="utf-8")
    recorded = _install_step(tmp_path, "--record")
    assert recorded.returncode == 0 and recorded.stderr == ""
    after = _install_step(tmp_path)
    assert "install skipped" in after.stderr and "would run" not in after.stderr


def test_demo_script_runs_the_steps_in_order_and_names_what_it_shows() -> None:
    demo = (REPO / "scripts" / "demo").read_text(encoding="utf-8")
    steps = [demo.index(s) for s in ("bash scripts/install-system-deps", "bash scripts/demo-install",
                                      "\nccrawl version", "python3 scripts/demo_recrawl.py", "ccrawl url key",
                                      "ccrawl url shard")]
    assert steps == sorted(steps)
    # the URL section's header promises canonical form, key and shard: the commands print all three
    assert "canonical form, URL key and fleet shard" in demo


@pytest.mark.slow
def test_demo_recrawl_prints_a_readable_summary_and_names_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo_recrawl.py"), "--hosts", "3", "--pages", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=240, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    err = proc.stderr
    summary = next(line for line in err.splitlines() if line.startswith("recrawl: ") and " ok, " in line)
    assert summary.endswith("the whole work list is done"), summary
    assert "position part" not in err
    assert f"are in {out} (remove it with: rm -r {out})" in err
    assert "rows by status and error class" in proc.stdout and "status 200" in proc.stdout
    assert "-- one page as Markdown: http://" in proc.stdout
    assert any(out.glob("captures/*.parquet"))


def test_demo_url_section_prints_canonical_form_key_and_shard() -> None:
    urls = "https://www.Example.co.uk:443/a/./b/?utm_source=x&id=7#frag\nhttp://news.bbc.co.uk/sport;jsessionid=ABC?b=2&a=1\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    key = subprocess.run([sys.executable, "-m", "ccrawl", "url", "key", "-o", "table"], input=urls,
                         capture_output=True, text=True, env=env, timeout=60)
    shard = subprocess.run([sys.executable, "-m", "ccrawl", "url", "shard", "--shards", "3", "--fields",
                            "url,shard_key,shard", "-o", "table"], input=urls, capture_output=True, text=True,
                           env=env, timeout=60)
    assert key.stdout.splitlines()[0].split() == ["url", "url_key", "canonical"]
    assert "https://www.example.co.uk/a/b/?id=7" in key.stdout  # canonical: no port, dot segment, tracker
    assert re.search(r"\b[0-9a-f]{20}\b", key.stdout)
    assert shard.stdout.splitlines()[0].split() == ["url", "shard_key", "shard"]
    assert "example.co.uk" in shard.stdout and "bbc.co.uk" in shard.stdout
