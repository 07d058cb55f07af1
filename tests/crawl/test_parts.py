"""crawl run --fetchers N: partitions by registered domain, links routed to their owner, resume after kills."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.crawl.frontier import place
from ccrawl.crawl.parts import crawl_run
from ccrawl.crawl.run import CrawlOptions
from ccrawl.errors import UsageError
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread
from ccrawl.url.domain import shard_of

from .test_crawl_run import warc_targets


def _opts(tmp_path: Path, web: SynthWeb, **kw: object) -> CrawlOptions:
    # max_depth past the web's diameter: the depth a URL is first found at depends on timing, so only
    # the whole reachable set is the same between two runs
    tmp_path.mkdir(parents=True, exist_ok=True)
    base: dict[str, object] = {"state": tmp_path / "state.db", "out": tmp_path / "warc", "delay": 0.0,
                               "workers": 16, "resolve": web.resolve, "max_depth": 50}
    base.update(kw)
    return CrawlOptions(**base)  # type: ignore[arg-type]


def _hosts(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        return {r[0].split(":")[0] for r in con.execute("SELECT host FROM hosts")}


def _outbox(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM outbox").fetchone()[0])


def test_two_fetchers_fetch_every_discovered_url_once(web: SynthWeb, tmp_path: Path) -> None:
    seeds = [web.url("site0.test"), web.url("site7.test")]
    reference = crawl_run(_opts(tmp_path / "one", web, fetchers=1), seeds)
    expected = warc_targets(tmp_path / "one" / "warc")
    assert reference.finished and len(expected) > 20

    before = Counter(web.stats.requests)
    summary = crawl_run(_opts(tmp_path / "two", web, fetchers=2), seeds)
    got = warc_targets(tmp_path / "two" / "warc")
    assert summary.finished and summary.queued == 0 and summary.failed == reference.failed
    assert len(got) == len(set(got)) == summary.archived  # every page once
    assert set(got) == set(expected)  # every discovered URL, across the partitions
    assert summary.robots_skipped == reference.robots_skipped
    # the server saw each page once in this run (robots.txt once per host, too)
    during = Counter(web.stats.requests)
    during.subtract(before)
    assert max(during.values()) == 1
    # two processes, two WARC writers; each partition's state holds only the hosts it owns
    state = tmp_path / "two" / "state.db"
    assert len({p.name.rsplit("-", 1)[1] for p in (tmp_path / "two" / "warc").glob("*.warc.gz")}) == 2
    for part, db in enumerate([state, state.with_name("state.db.part1")]):
        hosts = _hosts(db)
        assert hosts and all(place(h, 1, 2)[1] == part for h in hosts)
        assert _outbox(db) == 0  # every routed link was acknowledged
    # links crossed: site0's pages link to hosts of the other partition
    assert {place(u.split("/")[2].split(":")[0], 1, 2)[1] for u in got} == {0, 1}


def test_max_pages_over_all_fetchers_then_resume_to_the_end(web: SynthWeb, tmp_path: Path) -> None:
    seeds = [web.url("site2.test"), web.url("site9.test")]
    crawl_run(_opts(tmp_path / "ref", web, fetchers=1), seeds)
    expected = set(warc_targets(tmp_path / "ref" / "warc"))
    first = crawl_run(_opts(tmp_path, web, fetchers=2, max_pages=8), seeds)
    assert first.fetched == 8 and not first.finished and first.queued > 0
    with pytest.raises(UsageError, match="--fetchers 2"):
        crawl_run(_opts(tmp_path, web, fetchers=3), [])
    second = crawl_run(_opts(tmp_path, web), [])  # no --fetchers: the state's count
    assert second.finished and second.total_fetched == first.fetched + second.fetched
    got = warc_targets(tmp_path / "warc")
    assert len(got) == len(set(got)) and set(got) == expected


def _cmd(web: SynthWeb, tmp_path: Path, seeds: Path) -> list[str]:
    return [sys.executable, "-m", "ccrawl", "crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "warc"),
            "--state", str(tmp_path / "state.db"), "--delay", "100ms", "--max-depth", "50", "--warc-size", "60KB",
            "--resolve", "*.test=127.0.0.1", "-j", "16", "--fetchers", "2", "-o", "json"]


@pytest.fixture(scope="module")
def kill_web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=16, pages=16, page_bytes=3000, link_port=True) as synth:
        yield synth


@pytest.mark.slow
def test_sigkills_of_a_two_fetcher_run_then_finish(kill_web: SynthWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(kill_web.url("site0.test") + "\n")
    crawl_run(CrawlOptions(state=tmp_path / "ref.db", out=tmp_path / "ref", delay=0.0, max_depth=50, workers=16,
                           fetchers=1, resolve=kill_web.resolve), [kill_web.url("site0.test")])
    expected = set(warc_targets(tmp_path / "ref"))
    assert len(expected) > 150

    rng = random.Random(1802)
    kills = 0
    for _ in range(4):
        left = set((tmp_path / "warc").glob("*.open"))
        proc = subprocess.Popen(_cmd(kill_web, tmp_path, seeds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not (
            set((tmp_path / "warc").glob("*.open")) - left
        ):
            time.sleep(0.01)
        time.sleep(rng.uniform(0.1, 0.8))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # the parent only: its partitions die with it
            kills += 1
        proc.communicate(timeout=60)
    final = subprocess.run(_cmd(kill_web, tmp_path, seeds), capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr.decode()[-2000:]
    summary = json.loads(final.stdout)
    assert summary["finished"] is True and summary["queued"] == 0
    assert kills >= 3, "the crawl finished before it could be killed: make the web bigger"
    sealed = Counter(warc_targets(tmp_path / "warc"))
    assert [u for u, n in sealed.items() if n > 1] == []  # no page twice in sealed files
    assert set(sealed) == expected  # none lost, links between partitions included
    assert list((tmp_path / "warc").glob("*.open")) == []
    assert list((tmp_path / "warc").glob("*.aborted")), "kills must land while WARC files are open"


def test_shard_auto_reads_the_engine_and_keeps_its_domains(
    web: SynthWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(web.url(f"site{i}.test") + "\n" for i in range(12)))
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "2")
    monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
    base = ["crawl", "run", "--seeds", str(seeds), "--out", str(tmp_path / "w"), "--state", str(tmp_path / "s.db"),
            "--delay", "0s", "--resolve", "*.test=127.0.0.1", "--max-depth", "1", "-j", "8", "--fetchers", "2",
            "-o", "json"]
    code = main([*base, "--shard", "auto"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "shard 1 of 3 (from slurm: SLURM_ARRAY_TASK_ID=2" in out.err
    hosts = {u.split("/")[2].split(":")[0] for u in warc_targets(tmp_path / "w")}
    assert hosts and all(shard_of(h, 3) == 1 for h in hosts)  # seeds and links of shard 1 only
    assert hosts == {f"site{i}.test" for i in range(12) if shard_of(f"site{i}.test", 3) == 1} | {
        h for h in hosts if not h.startswith("site")}
    assert json.loads(out.out)["finished"] is True
    # the state keeps its shard: another one is refused, and so is a count the engine disagrees with
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    assert main([*base, "--shard", "auto"]) == 2
    assert "was started as shard 1 of 3" in capsys.readouterr().err
    assert main([*base, "--shard", "auto", "--shards", "4"]) == 2
    assert "disagrees with SLURM_ARRAY_TASK_COUNT=3" in capsys.readouterr().err


def test_sigterm_to_the_parent_stops_every_fetcher_and_seals(kill_web: SynthWeb, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(kill_web.url("site5.test") + "\n")
    proc = subprocess.Popen(_cmd(kill_web, tmp_path, seeds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline and not list((tmp_path / "warc").glob("*.open")):
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-1000:]
    summary = json.loads(out)
    assert summary["finished"] is False and summary["queued"] > 0
    assert list((tmp_path / "warc").glob("*.open")) == []  # both writers sealed
    assert len(warc_targets(tmp_path / "warc")) == summary["archived"]


def test_partition_is_independent_of_the_fleet_shard() -> None:
    hosts = [f"www.site{i}.co.uk" if i % 3 else f"h{i}.test" for i in range(400)]  # 400 registered domains
    for shards in (1, 2, 4):
        placed = [place(h, shards, 2) for h in hosts]
        assert [s for s, _ in placed] == [shard_of(h, shards) for h in hosts]  # the fleet's function, unchanged
        for shard in range(shards):
            parts = Counter(p for s, p in placed if s == shard)
            assert set(parts) == {0, 1} and min(parts.values()) > 0.3 * sum(parts.values())
    # every host of one registered domain goes to one partition
    assert len({place(f"{sub}.example.org", 1, 4) for sub in ("a", "www", "x.y", "shop")}) == 1


def test_a_second_run_on_the_same_state_and_bad_fetchers_are_refused(
    web: SynthWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccrawl.crawl.state import lock_file

    fd = lock_file(tmp_path / "state.db.run.lock", wait=0.0, what="test")  # a run in progress
    try:
        with pytest.raises(UsageError, match="another crawl run is using this state file"):
            crawl_run(_opts(tmp_path, web, fetchers=2), [web.url("site1.test")])
    finally:
        os.close(fd)
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(web.url("site1.test") + "\n")
    assert main(["crawl", "run", "--seeds", str(seeds), "--state", str(tmp_path / "x.db"), "--fetchers", "0"]) == 2
    assert "--fetchers must be in 1..256" in capsys.readouterr().err


def test_partitions_started_before_a_failed_preparation_are_gone(web: SynthWeb, tmp_path: Path) -> None:
    import multiprocessing

    from ccrawl.errors import NothingMatched

    with pytest.raises(NothingMatched, match="no seed URL"):
        crawl_run(_opts(tmp_path, web, fetchers=3), ["not a url", "ftp://x.test/"])
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("ccrawl-crawl-")]
    assert not (tmp_path / "warc").exists() or not list((tmp_path / "warc").iterdir())
