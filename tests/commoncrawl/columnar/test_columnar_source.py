"""The ranged-read source: tails fetched in one wave, held in bounded memory, the same answers either way."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import oracle

from ccrawl.commoncrawl.columnar import parts, query, source
from ccrawl.commoncrawl.columnar.filters import Filters
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.columnar import part_paths


@pytest.fixture(scope="module")
def rows(colroot: Path) -> list[dict[str, Any]]:
    return oracle.all_rows(colroot)


def _tail_requests(colcc: FakeCCServer) -> int:
    return sum(1 for r in colcc.faults.log if r.path.endswith(".parquet") and (r.range or "").startswith("bytes=-"))


def test_a_wave_of_tails_is_one_request_a_part_and_later_reads_are_free(colcc: FakeCCServer) -> None:
    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    try:
        paths = [p.path for p in index.parts]
        colcc.faults.clear()
        index.source.prefetch_tails(paths + paths[:2])  # a part named twice is fetched once
        assert _tail_requests(colcc) == len(paths) == index.source.stats.requests
        for p in paths:
            size, tail = index.source.tail(p)
            assert size > 0 and tail.endswith(b"PAR1") and len(tail) == min(size, source.TAIL_BYTES)
        assert _tail_requests(colcc) == len(paths)
    finally:
        index.source.close()


def test_tails_past_the_memory_bound_are_dropped_and_answers_do_not_change(
    colcc: FakeCCServer, colroot: Path, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    biggest = max(p.stat().st_size for p in part_paths(colroot))
    monkeypatch.setattr(source, "TAIL_MEMORY", 2 * min(biggest, source.TAIL_BYTES))
    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    try:
        for kind, f in (("count", Filters(tlds=("com",))), ("langs", Filters(domains=("example.com",))),
                        ("urls", Filters(statuses=(200,)))):
            got = list(query.run(kind, f.with_crawls(index.crawls), index, engine="native", jobs=2))
            assert oracle.shape(got, kind) == oracle.answer(rows, f.with_crawls(index.crawls), kind)
            held = index.source._tail_bytes
            assert held <= source.TAIL_MEMORY and held == sum(len(t) for _, t in index.source._tails.values())
            assert len(index.source._tails) < len(index.parts)  # some were dropped
        assert all(index.source.size(p.path) > 0 for p in index.parts)
    finally:
        index.source.close()


def test_heavy_steps_decoded_on_the_pool_give_the_same_answers(
    colcc: FakeCCServer, colroot: Path, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "HEAVY_STEP", 0)  # every step on bytes runs on the pool, not the I/O loop
    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    try:
        for kind, f in (("count", Filters(domains=("example.com",))), ("urls", Filters(tlds=("com",))),
                        ("langs", Filters()), ("locations", Filters(statuses=(200,), subsets=("warc",)))):
            got = list(query.run(kind, f.with_crawls(index.crawls), index, engine="native", jobs=3))
            assert oracle.shape(got, kind) == oracle.answer(rows, f.with_crawls(index.crawls), kind), kind
    finally:
        index.source.close()


@pytest.mark.parametrize("where", ["http", "local"])
def test_footers_longer_than_the_tail_cost_one_more_read(
    where: str, colcc: FakeCCServer, colroot: Path, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "TAIL_BYTES", 512)  # far shorter than any footer
    index = parts.open_http(colcc.client_options(no_cache=True), "all") if where == "http" else \
        parts.open_local(colroot)
    try:
        cases = (("count", Filters(domains=("example.com",))), ("urls", Filters(hosts=("example.com",))),
                 ("mimes", Filters(not_tlds=("com",))))
        for n, (kind, f) in enumerate(cases):
            explain = query.Explain()
            got = list(query.run(kind, f.with_crawls(index.crawls), index, engine="native", explain=explain))
            assert oracle.shape(got, kind) == oracle.answer(rows, f.with_crawls(index.crawls), kind), kind
            # the rest of the footer for every part (and the first time, its tail), then the reads of the
            # parts that hold rows
            assert explain.requests >= (2 if n == 0 else 1) * len(index.parts)
    finally:
        index.source.close()


def test_a_corrupt_part_over_http_fails_the_scan_and_a_limit_stops_it(colroot: Path, tmp_path: Path) -> None:
    import shutil

    from ccrawl.errors import InputError

    root = tmp_path / "bucket"
    shutil.copytree(colroot, root)
    victims = sorted((root / "cc-index/table").rglob("*.parquet"))
    victims[len(victims) // 2].write_bytes(b"<html>not found</html>")
    with FakeCCServer(root) as server:
        index = parts.open_http(server.client_options(no_cache=True), "all")
        try:
            for kind in ("count", "urls"):
                with pytest.raises(InputError):
                    list(query.run(kind, Filters().with_crawls(index.crawls), index, engine="native", jobs=2))
            # Enough rows before the broken part: the scan stops there, the reads in flight land unused.
            got = list(query.run("urls", Filters().with_crawls(index.crawls), index, engine="native", jobs=2,
                                 limit=3))
            assert len(got) == 3
        finally:
            index.source.close()


def test_a_read_the_plan_missed_raises_on_the_io_thread_instead_of_waiting_for_ever(colcc: FakeCCServer) -> None:
    import asyncio

    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    try:
        src = index.source
        assert isinstance(src, source.HttpSource)
        part = index.parts[0].path

        async def inside() -> str:
            try:
                src.read(part, 0, 10)  # a blocking read on the loop that would serve it
            except RuntimeError as exc:
                return str(exc)
            return "no error"

        assert "outside the planned jobs" in asyncio.run_coroutine_threadsafe(inside(), src.loop).result(10)
    finally:
        index.source.close()
