"""A crawl killed with SIGKILL ten times, then finished: no page twice in sealed WARCs, none lost."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.crawl.parts import crawl_run
from ccrawl.crawl.run import CrawlOptions
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread

from .test_crawl_run import warc_targets


@pytest.fixture(scope="module")
def big_web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=30, pages=30, page_bytes=3000, link_port=True) as synth:
        yield synth


def _cmd(web: SynthWeb, tmp_path: Path, seeds: Path) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "warc"),
            "--state", str(tmp_path / "state.db"), "--delay", "200ms", "--max-depth", "50", "--warc-size", "150KB",
            "--resolve", "*.test=127.0.0.1", "-j", "16", "-o", "json"]


@pytest.mark.slow
def test_ten_sigkills_then_finish(big_web: SynthWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(big_web.url("site0.test") + "\n")
    reference = crawl_run(CrawlOptions(state=tmp_path / "ref.db", out=tmp_path / "ref", delay=0.0, max_depth=50,
                                       workers=16, resolve=big_web.resolve), [big_web.url("site0.test")])
    expected = set(warc_targets(tmp_path / "ref"))
    assert reference.finished and len(expected) > 300

    rng = random.Random(18)
    kills = 0
    for _ in range(10):
        left = set((tmp_path / "warc").glob("*.open"))  # the last run's, renamed *.aborted by this one
        proc = subprocess.Popen(_cmd(big_web, tmp_path, seeds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # kill while the crawl is working: once it has a WARC file of its own open, at a random moment after
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not (
            set((tmp_path / "warc").glob("*.open")) - left
        ):
            time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 0.6))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=60)
    final = subprocess.run(_cmd(big_web, tmp_path, seeds), capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()[-2000:]
    summary = json.loads(final.stdout)
    assert summary["finished"] is True and summary["queued"] == 0

    sealed = Counter(warc_targets(tmp_path / "warc"))
    # 200 ms per host and 30 pages a host: at least 6 s of crawling, far more than ten runs of under a second
    assert kills >= 5, "the crawl finished before it could be killed: make the web bigger"
    assert [u for u, n in sealed.items() if n > 1] == []  # no page archived twice in sealed files
    assert set(sealed) == expected  # none lost
    assert list((tmp_path / "warc").glob("*.open")) == []
    assert len(list((tmp_path / "warc").glob("*.aborted"))) >= 5, "kills must land while a WARC file is open"


def test_sigterm_stops_cleanly_and_seals(big_web: SynthWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(big_web.url("site3.test") + "\n")
    proc = subprocess.Popen(_cmd(big_web, tmp_path, seeds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline and not list((tmp_path / "warc").glob("*.open")):
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-1000:]
    summary = json.loads(out)
    assert summary["finished"] is False and summary["queued"] > 0
    assert list((tmp_path / "warc").glob("*.open")) == []
    assert len(warc_targets(tmp_path / "warc")) == summary["archived"]


def _kill_cmd(web: SynthWeb, tmp_path: Path, seeds: Path, fetchers: int, max_pages: int) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "warc"),
            "--state", str(tmp_path / "state.db"), "--delay", "100ms", "--max-depth", "50", "--warc-size", "60KB",
            "--max-pages", str(max_pages), "--fetchers", str(fetchers), "--resolve", "*.test=127.0.0.1", "-j", "16",
            "-o", "json"]


@pytest.mark.parametrize("fetchers", [1, 2])
def test_pages_lost_in_a_kill_go_back_to_the_budget_so_a_rerun_fills_it(
        big_web: SynthWeb, tmp_path: Path, fetchers: int) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(big_web.url(f"site{i}.test") + "\n" for i in range(0, 30, 3)))
    max_pages = 240
    # --no-robots: every fetch is a page (a robots skip counts against the budget too, and archives nothing)
    cmd = [*_kill_cmd(big_web, tmp_path, seeds, fetchers, max_pages), "--no-robots"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    warc = tmp_path / "warc"
    # kill once pages are both sealed and in open files: the open ones are lost, the sealed ones kept
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline and not (
        len(list(warc.glob("*.warc.gz"))) >= 2 and list(warc.glob("*.open"))
    ):
        time.sleep(0.01)
    assert proc.poll() is None, "the crawl finished before it could be killed: make the web slower"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    kept = len(warc_targets(warc))
    assert 0 < kept < max_pages

    final = subprocess.run(cmd, capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()[-2000:]
    summary = json.loads(final.stdout)
    sealed = Counter(warc_targets(warc))
    assert [u for u, n in sealed.items() if n > 1] == []
    # the budget counts what the sealed files hold: the rerun fetched every page the kill cost
    assert sum(sealed.values()) == max_pages == summary["total_fetched"]
    # (pages of the open file come back as requeued rows, or were never committed as fetched: both fine)
    assert summary["aborted_files"] >= 1 and summary["fetched"] == max_pages - kept
    assert list(warc.glob("*.open")) == []


def test_a_killed_run_that_the_budget_does_not_reach_finishes_every_page(big_web: SynthWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(big_web.url("site1.test") + "\n")
    cmd = [*_kill_cmd(big_web, tmp_path, seeds, 1, 10_000), "--same-host"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    warc = tmp_path / "warc"
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline and not (
        list(warc.glob("*.warc.gz")) and list(warc.glob("*.open"))
    ):
        time.sleep(0.01)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    final = subprocess.run(cmd, capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()[-2000:]
    summary = json.loads(final.stdout)
    sealed = Counter(warc_targets(warc))
    reference = crawl_run(CrawlOptions(state=tmp_path / "ref.db", out=tmp_path / "ref", delay=0.0, max_depth=50,
                                       same_host=True, workers=8, fetchers=1, resolve=big_web.resolve),
                          [big_web.url("site1.test")])
    # every page of the site once, and the budget (not reached) took nothing away
    assert summary["finished"] is True and set(sealed) == set(warc_targets(tmp_path / "ref"))
    assert sorted(sealed.values()) == [1] * reference.archived


# points of the seen store's spills and merges (ccrawl.crawl.seen.crash_point), the N-th pass of each
STORE_POINTS = ["seen-spill-written:1", "seen-spill-committed:2", "seen-merge-writing:1", "seen-merge-written:1",
                "seen-merge-committed:1", "seen-merge-unlinking:2", "frontier-committed:4"]


@pytest.mark.slow
@pytest.mark.parametrize("point", STORE_POINTS)
def test_a_crawl_killed_inside_a_seen_store_spill_or_merge_resumes_exactly_once(
        big_web: SynthWeb, tmp_path: Path, point: str) -> None:
    """``crawl run`` SIGKILLs itself at a named point of a spill or merge of its seen set (a store of 40
    keys in memory spills at nearly every flush, and merges follow), then resumes: every page of the
    unkilled reference once in the sealed WARC files, no orphan run left."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(big_web.url(f"site{i}.test") + "\n" for i in range(0, 30, 5)))
    ref = crawl_run(CrawlOptions(state=tmp_path / "ref.db", out=tmp_path / "ref", delay=0.0, max_depth=50,
                                 workers=16, resolve=big_web.resolve, warc_size=60_000),
                    seeds.read_text().split())
    expected = set(warc_targets(tmp_path / "ref"))
    assert ref.finished and len(expected) > 300
    env = {**os.environ, "CCRAWL_SEEN_MEM_KEYS": "40", "CCRAWL_CRASH_AT": point}
    cmd = [*_kill_cmd(big_web, tmp_path, seeds, 1, 100_000)]
    killed = subprocess.run(cmd, capture_output=True, timeout=300, env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    env.pop("CCRAWL_CRASH_AT")
    final = subprocess.run(cmd, capture_output=True, timeout=300, env=env)
    assert final.returncode == 0, final.stderr.decode()[-2000:]
    assert json.loads(final.stdout)["finished"] is True
    sealed = Counter(warc_targets(tmp_path / "warc"))
    assert [u for u, n in sealed.items() if n > 1] == []
    assert set(sealed) == expected
    runs = tmp_path / "state.db.seen"
    assert not [p for p in runs.iterdir() if p.suffix == ".tmp"]


def test_a_merge_that_hangs_is_named_during_the_run_and_at_its_end(big_web: SynthWeb, tmp_path: Path) -> None:
    """The seen set's merge thread blocks for good (CCRAWL_HANG_AT) early in a real crawl: the run says so in
    one line naming the merge and its stage once it has made no progress for CCRAWL_MERGE_STALL_S, keeps
    crawling, and at its end exits 1 with the same account instead of waiting for ever; the rerun finishes
    with every page once in the sealed WARC files."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(big_web.url("site0.test") + "\n")
    reference = crawl_run(CrawlOptions(state=tmp_path / "ref.db", out=tmp_path / "ref", delay=0.0, max_depth=50,
                                       workers=16, resolve=big_web.resolve), [big_web.url("site0.test")])
    expected = set(warc_targets(tmp_path / "ref"))
    assert reference.finished and len(expected) > 300
    env = {**os.environ, "CCRAWL_SEEN_MEM_KEYS": "40", "CCRAWL_HANG_AT": "seen-merge-writing",
           "CCRAWL_MERGE_STALL_S": "1.5"}
    started = time.monotonic()
    hung = subprocess.run(_cmd(big_web, tmp_path, seeds), capture_output=True, text=True, timeout=300, env=env)
    took = time.monotonic() - started
    lines = hung.stderr.splitlines()
    assert hung.returncode == 1, hung.stderr[-2000:]
    during = [x for x in lines if x.startswith("crawl run: the seen set's merge of ")]
    final = [x for x in lines if x.startswith("ccrawl: the seen set's merge of ")]
    assert len(during) == 1 and len(final) == 1, hung.stderr[-2000:]  # once while crawling, once at the end
    for line in during + final:
        assert " into run-" in line and "has made no progress for " in line and "stuck writing run-" in line, line
    assert "rerun the same command to resume" in final[0]
    assert took < 200  # 30 hosts x 30 pages at 200 ms: seconds of crawling, not a wait for ever
    env.pop("CCRAWL_HANG_AT")
    rerun = subprocess.run(_cmd(big_web, tmp_path, seeds), capture_output=True, text=True, timeout=300, env=env)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert json.loads(rerun.stdout)["finished"] is True
    sealed = Counter(warc_targets(tmp_path / "warc"))
    assert [u for u, n in sealed.items() if n > 1] == [] and set(sealed) == expected
    assert not [p for p in (tmp_path / "state.db.seen").iterdir() if p.suffix == ".tmp"]
