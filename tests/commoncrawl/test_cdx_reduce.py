"""--at, --latest-only, --dedup and --sort over several crawls: exact past the memory budget, temp files gone."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.cdx import CdxQuery, SearchStats, search
from ccrawl.commoncrawl.cdx_reduce import Budget, RunStore, sort_records
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer
from ccrawl.url.surt import surt

CRAWLS = ["CC-MAIN-2024-10", "CC-MAIN-2024-22", "CC-MAIN-2024-33"]
QUERY = CdxQuery("*.example.com")


def _rows() -> dict[str, list[dict[str, str]]]:
    rng = random.Random(7)
    out: dict[str, list[dict[str, str]]] = {}
    stamps: set[str] = set()
    for n, crawl in enumerate(CRAWLS):
        start = dt.datetime(2024, 1 + 4 * n, 1)
        rows = []
        for i in range(90):
            url = f"https://example.com/page-{i}.html"
            for _ in range(rng.randint(0, 3)):
                while True:
                    ts = (start + dt.timedelta(seconds=rng.randint(0, 20 * 86400))).strftime("%Y%m%d%H%M%S")
                    if ts not in stamps:
                        stamps.add(ts)
                        break
                rows.append({
                    "urlkey": surt(url), "timestamp": ts, "url": url, "mime": "text/html", "status": "200",
                    "digest": f"D{rng.randint(0, 60):03d}", "length": "100", "offset": str(len(rows) * 100),
                    "filename": f"crawl-data/{crawl}/x.warc.gz",
                })
        out[crawl] = rows
    return out


@pytest.fixture(scope="module")
def data() -> dict[str, list[dict[str, str]]]:
    return _rows()


@pytest.fixture(scope="module")
def server(data: dict[str, list[dict[str, str]]]) -> Iterator[CdxServer]:
    with CdxServer(CdxIndex({k: list(v) for k, v in data.items()}, lines_per_block=7)) as srv:
        yield srv


def _search(srv: CdxServer, tmp: Path, **kw: Any) -> tuple[list[dict[str, Any]], list[str], SearchStats]:
    lines: list[str] = []
    stats = SearchStats()
    opts = {"cdx_endpoint": srv.url, "global_rate": 0, "retries": 1, "backoff": 0.001}
    rows = list(search(QUERY, CRAWLS, client_options=opts, notice=lines.append, stats=stats, tmpdir=str(tmp), **kw))
    return rows, lines, stats


def _all(data: dict[str, list[dict[str, str]]]) -> list[dict[str, str]]:
    return [r for c in CRAWLS for r in sorted(data[c], key=lambda r: (r["urlkey"], r["timestamp"]))]


def _when(ts: str) -> float:
    return dt.datetime.strptime(ts, "%Y%m%d%H%M%S").timestamp()


def test_latest_only_is_exact_past_the_budget(server: CdxServer, data: Any, tmp_path: Path) -> None:
    want: dict[str, str] = {}
    for r in _all(data):
        want[r["urlkey"]] = max(want.get(r["urlkey"], ""), r["timestamp"])
    big, _, big_stats = _search(server, tmp_path, latest_only=True)
    small, _, small_stats = _search(server, tmp_path, latest_only=True, max_buffer=5)
    assert {r["urlkey"]: r["timestamp"] for r in big} == want
    assert [(r["urlkey"], r["timestamp"]) for r in small] == [(r["urlkey"], r["timestamp"]) for r in big]
    assert big_stats.spilled_rows == 0 and small_stats.spilled_rows > 0
    assert list(tmp_path.iterdir()) == []  # the spill files are gone


def test_at_picks_the_closest_capture_and_is_exact_past_the_budget(server: CdxServer, data: Any,
                                                                   tmp_path: Path) -> None:
    target = "20240515"
    when = _when("20240515000000")
    want: dict[str, str] = {}
    for r in _all(data):
        best = want.get(r["urlkey"])
        if best is None or abs(_when(r["timestamp"]) - when) < abs(_when(best) - when):
            want[r["urlkey"]] = r["timestamp"]
    big, big_lines, _ = _search(server, tmp_path, at=target)
    small, small_lines, stats = _search(server, tmp_path, at=target, max_buffer=4)
    assert {r["urlkey"]: r["timestamp"] for r in big} == want
    assert {r["urlkey"]: r["timestamp"] for r in small} == want
    assert stats.spilled_rows > 0 and list(tmp_path.iterdir()) == []
    # Within the budget --at comes newest first; past it, index order, and the run says so.
    assert [r["timestamp"] for r in big] == sorted((r["timestamp"] for r in big), reverse=True)
    assert not any("index order" in x for x in big_lines)
    assert [r["urlkey"] for r in small] == sorted(r["urlkey"] for r in small)
    assert any("--at result is larger than --max-buffer" in x for x in small_lines)


def test_dedup_is_exact_within_the_budget(server: CdxServer, data: Any, tmp_path: Path) -> None:
    rows, lines, _ = _search(server, tmp_path, dedup=True)
    seen: set[str] = set()
    want = []
    for r in _all(data):
        if r["digest"] not in seen:
            seen.add(r["digest"])
            want.append((r["urlkey"], r["timestamp"]))
    assert [(r["urlkey"], r["timestamp"]) for r in rows] == want
    assert not lines


def test_dedup_past_the_budget_forgets_the_oldest_and_says_so(server: CdxServer, data: Any, tmp_path: Path) -> None:
    exact, _, _ = _search(server, tmp_path, dedup=True)
    loose, lines, _ = _search(server, tmp_path, dedup=True, max_buffer=10)
    # A duplicate may get through, a unique record is never dropped.
    assert {r["digest"] for r in loose} == {r["digest"] for r in exact}
    assert len(loose) > len(exact)
    assert sum("--dedup holds 10 records" in x for x in lines) == 1


@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_sort_is_the_same_in_memory_and_spilled(server: CdxServer, data: Any, tmp_path: Path, order: str) -> None:
    want = sorted((r["timestamp"] for r in _all(data)), reverse=order == "newest")
    big, _, _ = _search(server, tmp_path, sort=order)
    small, _, _ = _search(server, tmp_path, sort=order, max_buffer=9)
    assert [r["timestamp"] for r in big] == want
    assert [r["timestamp"] for r in small] == want
    assert list(tmp_path.iterdir()) == []


def test_temp_files_are_removed_when_the_reader_stops_early(server: CdxServer, tmp_path: Path) -> None:
    opts = {"cdx_endpoint": server.url, "global_rate": 0}
    rows = search(QUERY, CRAWLS, client_options=opts, sort="newest", max_buffer=3, tmpdir=str(tmp_path),
                  notice=lambda _: None)
    first = next(rows)
    assert first["timestamp"] and any(tmp_path.iterdir())  # spilled while sorting
    rows.close()
    assert list(tmp_path.iterdir()) == []


def test_at_and_latest_only_together_is_a_usage_error(server: CdxServer, tmp_path: Path) -> None:
    from ccrawl.errors import UsageError

    with pytest.raises(UsageError, match="--at and --latest-only"):
        _search(server, tmp_path, at="2024", latest_only=True)


def test_run_store_merges_memory_and_disk_runs_in_key_order(tmp_path: Path) -> None:
    budget = Budget(4)
    store = RunStore(budget, str(tmp_path))
    store.add_run({"k": k} for k in ["a", "c", "e"])
    store.add_run({"k": k} for k in ["b", "d", "f", "g"])  # past the budget: this run spills
    assert store.spilled_rows == 4 and budget.held == 3
    assert [r["k"] for r in store.merged(key=lambda r: r["k"])] == list("abcdefg")
    store.close()
    assert budget.held == 0 and list(tmp_path.iterdir()) == []


def test_external_sort_keeps_every_row(tmp_path: Path) -> None:
    rng = random.Random(3)
    values = [rng.randint(0, 1000) for _ in range(500)]
    budget = Budget(37)
    out = [r["v"] for r in sort_records(({"v": v} for v in values), key=lambda r: r["v"], reverse=False,
                                        budget=budget, tmpdir=str(tmp_path))]
    assert out == sorted(values) and budget.held == 0 and list(tmp_path.iterdir()) == []
