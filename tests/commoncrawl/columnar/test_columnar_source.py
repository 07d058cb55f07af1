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
