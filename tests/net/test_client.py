"""CCClient against the fake Common Crawl: retries, backoff, truncation, ranges, errors, accounting."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from ccrawl.errors import TemporaryFailure, Unreachable, UsageError
from ccrawl.net.client import CCClient, HTTPStatusError, client_options, iterate, run, seconds
from ccrawl.testing.fakecc import FakeCCServer


def _first_capture(fakecc: FakeCCServer) -> dict[str, Any]:
    return fakecc.site.captures[0]


def _local_bytes(fakecc: FakeCCServer, cap: dict[str, Any]) -> bytes:
    data = (Path(fakecc.site.root) / cap["filename"]).read_bytes()
    return data[int(cap["offset"]) : int(cap["offset"]) + int(cap["length"])]


def test_get_range_returns_exactly_the_record_bytes(fakecc: FakeCCServer) -> None:
    cap = _first_capture(fakecc)

    async def go(cc: CCClient) -> bytes:
        return await cc.get_range(cc.data_url(cap["filename"]), int(cap["offset"]), int(cap["length"]))

    assert run(go, **fakecc.client_options()) == _local_bytes(fakecc, cap)
    (req,) = fakecc.faults.requests(r"\.warc\.gz$")
    assert req.range == f"bytes={cap['offset']}-{int(cap['offset']) + int(cap['length']) - 1}"


def test_503_and_429_are_retried_with_backoff_then_succeed(fakecc: FakeCCServer) -> None:
    fakecc.faults.add("status", path=r"collinfo", times=2, status=503)
    fakecc.faults.add("status", path=r"collinfo", times=1, status=429)
    opts = fakecc.client_options(backoff=0.05, backoff_max=1.0, retries=3)

    async def go(cc: CCClient) -> tuple[int, int]:
        resp = await cc.get(cc.collinfo_endpoint)
        return resp.status, cc.stats.retries

    started = time.monotonic()
    status, retries = run(go, **opts)
    elapsed = time.monotonic() - started
    assert (status, retries) == (200, 3)
    assert [r.status for r in fakecc.faults.requests("collinfo")] == [503, 503, 429, 200]
    # Equal jitter: waits are at least half of 0.05, 0.1 and 0.2 seconds.
    assert elapsed >= (0.05 + 0.1 + 0.2) / 2


def test_retry_after_is_honoured_up_to_backoff_max(fakecc: FakeCCServer) -> None:
    fakecc.faults.add("status", path="collinfo", times=1, status=429, retry_after=0.3)
    started = time.monotonic()
    run(lambda cc: cc.get(cc.collinfo_endpoint), **fakecc.client_options(backoff=0.01, backoff_max=1.0))
    assert time.monotonic() - started >= 0.3


def test_a_truncated_body_is_read_again(fakecc: FakeCCServer) -> None:
    cap = _first_capture(fakecc)
    fakecc.faults.add("truncate", path=r"\.warc\.gz$", times=2)

    async def go(cc: CCClient) -> bytes:
        return await cc.get_range(cc.data_url(cap["filename"]), int(cap["offset"]), int(cap["length"]))

    assert run(go, **fakecc.client_options(retries=3)) == _local_bytes(fakecc, cap)
    assert len(fakecc.faults.requests(r"\.warc\.gz$")) == 3


def test_a_dropped_connection_is_retried(fakecc: FakeCCServer) -> None:
    fakecc.faults.add("drop", path="collinfo", times=1)
    resp = run(lambda cc: cc.get(cc.collinfo_endpoint), **fakecc.client_options())
    assert resp.status == 200 and resp.body.startswith(b"[")


def test_a_status_that_never_clears_is_a_temporary_failure(fakecc: FakeCCServer) -> None:
    fakecc.faults.add("status", path="collinfo", times=-1, status=503)
    with pytest.raises(TemporaryFailure, match="3 attempts") as info:
        run(lambda cc: cc.get(cc.collinfo_endpoint), **fakecc.client_options(retries=2))
    assert info.value.exit_code == 75


def test_transport_failure_on_every_attempt_is_unreachable_exit_8(fakecc: FakeCCServer) -> None:
    # dropped without an answer every time (a refused port fails at once instead: tests/net/test_offline.py)
    fakecc.faults.add("drop", path="collinfo", times=-1)
    with pytest.raises(Unreachable, match="3 attempts") as info:
        run(lambda cc: cc.get(cc.collinfo_endpoint), **fakecc.client_options(backoff=0.01, retries=2))
    assert info.value.exit_code == 8


def test_404_is_not_retried_and_names_the_status(fakecc: FakeCCServer) -> None:
    with pytest.raises(HTTPStatusError) as info:
        run(lambda cc: cc.get(cc.data_url("crawl-data/nope.gz")), **fakecc.client_options())
    assert info.value.status == 404
    assert len(fakecc.faults.requests("nope")) == 1


def test_bytes_read_are_counted(fakecc: FakeCCServer) -> None:
    async def go(cc: CCClient) -> tuple[int, int]:
        resp = await cc.get(cc.collinfo_endpoint)
        return len(resp.body), cc.stats.bytes_read

    body_len, counted = run(go, **fakecc.client_options())
    assert counted == body_len > 0


def test_source_s3_reads_through_the_s3_endpoint(fakecc: FakeCCServer) -> None:
    cc = CCClient(data_endpoint="https://data.example", s3_endpoint="http://s3.example/", source="s3")
    assert cc.data_url("crawl-data/x.gz") == "http://s3.example/crawl-data/x.gz"
    assert cc.data_url("s3://commoncrawl/crawl-data/x.gz") == "http://s3.example/crawl-data/x.gz"
    with pytest.raises(UsageError):
        CCClient(source="ftp")


def test_stream_resumes_from_an_offset(fakecc: FakeCCServer) -> None:
    cap = _first_capture(fakecc)
    whole = (Path(fakecc.site.root) / cap["filename"]).read_bytes()

    async def go(cc: CCClient) -> tuple[bytes, int | None]:
        async with cc.stream(cc.data_url(cap["filename"]), start=100) as stream:
            parts = [chunk async for chunk in stream.chunks(4096)]
            return b"".join(parts), stream.total_size

    body, total = run(go, **fakecc.client_options())
    assert body == whole[100:] and total == len(whole)


def test_iterate_drives_an_async_generator_and_stops_early(fakecc: FakeCCServer) -> None:
    async def gen(cc: CCClient):  # type: ignore[no-untyped-def]
        for _ in range(5):
            resp = await cc.get(cc.collinfo_endpoint)
            yield resp.status

    it = iterate(gen, **fakecc.client_options())
    assert next(it) == 200
    it.close()  # type: ignore[attr-defined]
    assert len(fakecc.faults.requests("collinfo")) == 1


def test_verbose_prints_the_rate_in_force(tmp_path: Path, fakecc: FakeCCServer) -> None:
    lines: list[str] = []

    async def go(cc: CCClient) -> None:
        await cc.get(cc.collinfo_endpoint)

    async def main() -> None:
        options = fakecc.client_options(global_rate="200ms", data_dir=tmp_path, verbose=1)
        async with CCClient(**options, warn=lines.append) as cc:
            await go(cc)

    asyncio.run(main())
    lock = tmp_path / "ratelimit.lock"
    assert lines == [f"net: rate in force: --rate 0s per process, --global-rate 0.2s shared through {lock}"]


def test_durations_and_option_filtering() -> None:
    assert seconds("500ms") == 0.5 and seconds("1m30s") == 90 and seconds(2) == 2.0
    with pytest.raises(UsageError):
        seconds("lots")
    assert client_options({"rate": 1.0, "workers": 8, "crawl": "x"}) == {"rate": 1.0}
