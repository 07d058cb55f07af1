"""A host's politeness clock: ``--delay`` counts from a request's start, a robots.txt Crawl-delay from its
response's end, so a slow response never brings two requests closer together than the site asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccrawl.crawl.frontier import Frontier, FrontierConfig, Item
from ccrawl.crawl.state import StateFile


def _one(tmp_path: Path, delay: float) -> tuple[Frontier, Item]:
    f = Frontier(StateFile(tmp_path / "state.db"), FrontierConfig(delay=delay, max_depth=1))
    for i in range(2):
        f.add(f"http://a.example/{i}", 0, seed=True)
    got = f.take(100.0)
    assert isinstance(got, Item)
    return f, got


def test_crawl_delay_counts_from_the_end_of_the_response(tmp_path: Path) -> None:
    f, item = _one(tmp_path, delay=0.0)
    # started at 100, a slow response ended at 104.5, Crawl-delay 3: not before 107.5 (100 + 3 would be 103)
    f.done(item, started=100.0, finished=104.5, crawl_delay=3.0, file=None)
    assert f.take(105.0) == pytest.approx(2.5)
    assert f.take(107.4) == pytest.approx(0.1)
    assert isinstance(f.take(107.5), Item)


def test_delay_counts_from_the_start_and_the_later_clock_wins(tmp_path: Path) -> None:
    f, item = _one(tmp_path, delay=5.0)
    # --delay 5 from the start (105) is later than Crawl-delay 1 from the end (102.5)
    f.done(item, started=100.0, finished=101.5, crawl_delay=1.0, file=None)
    assert f.take(104.0) == pytest.approx(1.0)
    assert isinstance(f.take(105.0), Item)


def test_a_clock_from_the_end_survives_a_restart(tmp_path: Path) -> None:
    f, item = _one(tmp_path, delay=0.0)
    f.done(item, started=100.0, finished=110.0, crawl_delay=30.0, file="x.warc.gz")
    f.flush()
    f.state.close()
    state = StateFile(tmp_path / "state.db")
    state.recover(lambda name: name == "x.warc.gz")
    again = Frontier(state, FrontierConfig(delay=0.0, max_depth=1))
    assert again.take(139.0) == pytest.approx(1.0)  # 110 + 30, kept in the state file
    assert isinstance(again.take(140.0), Item)
