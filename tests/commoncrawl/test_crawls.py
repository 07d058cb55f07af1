"""The crawl list: -c forms, the 6 h cache, the stale-cache fallback line, exit 8, stats with -1."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from ccrawl.commoncrawl.crawls import go_duration, parse_ref, resolve_from
from ccrawl.errors import NothingMatched, Unreachable, UsageError
from ccrawl.net.cache import DiskCache
from ccrawl.ops.commoncrawl import crawls_info, crawls_latest, crawls_list, crawls_resolve
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_list_is_newest_first_over_two_years(fakecc: FakeCCServer, tmp_path: Path) -> None:
    rows = list(crawls_list(ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path))))
    ids = [r["crawl"] for r in rows]
    assert ids == fakecc.site.crawls and ids == sorted(ids, reverse=True)
    assert {i[8:12] for i in ids} == {"2024", "2025"}


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("latest", ["CC-MAIN-2025-26"]),
        ("2", ["CC-MAIN-2025-26", "CC-MAIN-2025-13"]),
        ("2024", ["CC-MAIN-2024-51", "CC-MAIN-2024-33", "CC-MAIN-2024-22", "CC-MAIN-2024-10"]),
        ("CC-MAIN-2024-22,latest,2024-22", ["CC-MAIN-2024-22", "CC-MAIN-2025-26"]),
    ],
)
def test_c_forms_resolve(fakecc: FakeCCServer, tmp_path: Path, ref: str, expected: list[str]) -> None:
    rows = list(crawls_resolve(ref, ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path))))
    assert [r["crawl"] for r in rows] == expected


def test_all_resolves_every_crawl(fakecc: FakeCCServer, tmp_path: Path) -> None:
    rows = list(crawls_resolve("all", ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path))))
    assert [r["crawl"] for r in rows] == fakecc.site.crawls


def test_an_explicit_id_never_touches_the_network() -> None:
    opts = {"collinfo_endpoint": f"http://127.0.0.1:{_dead_port()}/collinfo.json", "global_rate": 0}
    assert [r["crawl"] for r in crawls_resolve("CC-MAIN-2023-50", ctx=OpContext.of(opts))] == ["CC-MAIN-2023-50"]


def test_bad_and_empty_forms() -> None:
    with pytest.raises(UsageError, match="-c 'lastest'"):
        parse_ref("lastest")
    with pytest.raises(NothingMatched, match="year 2019"):
        resolve_from("2019", [])


def test_collinfo_is_cached_for_six_hours(fakecc: FakeCCServer, tmp_path: Path) -> None:
    opts = fakecc.client_options(data_dir=tmp_path)
    list(crawls_latest(ctx=OpContext.of(opts)))
    list(crawls_latest(ctx=OpContext.of(opts)))
    assert len(fakecc.faults.requests("collinfo")) == 1
    DiskCache(tmp_path / "cache").touch_age(opts["collinfo_endpoint"], 6 * 3600 + 5)
    list(crawls_latest(ctx=OpContext.of(opts)))
    assert len(fakecc.faults.requests("collinfo")) == 2


def test_stale_cache_is_used_when_the_index_server_is_down(fakecc: FakeCCServer, tmp_path: Path) -> None:
    opts = fakecc.client_options(data_dir=tmp_path)
    list(crawls_latest(ctx=OpContext.of(opts)))
    cache = DiskCache(tmp_path / "cache")
    cache.touch_age(opts["collinfo_endpoint"], 19 * 3600)
    # Same cache, server gone: the collinfo URL keys the cache, so copy the entry to the dead one.
    dead = f"http://127.0.0.1:{_dead_port()}/collinfo.json"
    cache.put(dead, cache.get(opts["collinfo_endpoint"]).body)  # type: ignore[union-attr]
    cache.touch_age(dead, 19 * 3600)
    lines: list[str] = []
    rows = list(crawls_latest(ctx=OpContext.of({**opts, "collinfo_endpoint": dead, "retries": 1}, notice=lines.append)))
    assert rows == [{"crawl": "CC-MAIN-2025-26"}]
    assert lines == [
        "crawls: the index server is unreachable, using the crawl list cached 19h0m0s ago; "
        "pass -c to name a crawl instead of resolving it"
    ]


def test_no_cache_and_server_down_is_exit_8(tmp_path: Path) -> None:
    opts = {"collinfo_endpoint": f"http://127.0.0.1:{_dead_port()}/collinfo.json", "global_rate": 0,
            "backoff": 0.01, "retries": 1, "data_dir": tmp_path}
    with pytest.raises(Unreachable, match="pass -c") as info:
        list(crawls_latest(ctx=OpContext.of(opts)))
    assert info.value.exit_code == 8


def test_no_cache_turns_the_fallback_off(fakecc: FakeCCServer, tmp_path: Path) -> None:
    opts = fakecc.client_options(data_dir=tmp_path)
    list(crawls_latest(ctx=OpContext.of(opts)))
    fakecc.faults.add("status", path="collinfo", times=-1, status=503)
    assert list(crawls_latest(ctx=OpContext.of(opts))) == [{"crawl": "CC-MAIN-2025-26"}]  # fresh cache
    with pytest.raises(Unreachable):
        list(crawls_latest(ctx=OpContext.of({**opts, "no_cache": True, "retries": 1})))


def test_stats_counts_files_and_shows_minus_one_for_a_failed_manifest(fakecc: FakeCCServer, tmp_path: Path) -> None:
    fakecc.faults.add("status", path=r"CC-MAIN-2025-26/wat\.paths\.gz", times=-1, status=503)
    lines: list[str] = []
    rows = list(crawls_info("latest", ctx=OpContext.of(fakecc.client_options(data_dir=tmp_path, retries=1),
                                                       notice=lines.append)))
    counts = {r["kind"]: r["files"] for r in rows}
    assert counts["warc"] == 2 and counts["wet"] == 2 and counts["segment"] == 1
    assert counts["wat"] == -1
    assert [r["kind"] for r in rows] == ["warc", "wat", "wet", "robotstxt", "non200responses", "cc-index",
                                         "cc-index-table", "segment"]
    assert any("wat manifest could not be read" in line for line in lines)


def test_go_duration() -> None:
    assert go_duration(19 * 3600) == "19h0m0s"
    assert go_duration(242.4) == "4m2s"
    assert re.fullmatch(r"\d+s", go_duration(7))


def test_a_collinfo_that_is_not_json_is_not_cached_and_the_old_copy_is_used(
    fakecc: FakeCCServer, tmp_path: Path
) -> None:
    opts = fakecc.client_options(data_dir=tmp_path)
    list(crawls_latest(ctx=OpContext.of(opts)))
    cache = DiskCache(tmp_path / "cache")
    cache.touch_age(opts["collinfo_endpoint"], 7 * 3600)
    fakecc.faults.add("status", path="collinfo", times=1, status=200)  # a 200 whose body is not the list
    lines: list[str] = []
    assert list(crawls_latest(ctx=OpContext.of(opts, notice=lines.append))) == [{"crawl": "CC-MAIN-2025-26"}]
    assert len(lines) == 1 and "cached 7h0m0s ago" in lines[0]
    cached = cache.get(opts["collinfo_endpoint"])
    assert cached is not None and cached.body.startswith(b"[")


def test_same_url_dropping_every_connection_falls_back_to_the_cache(fakecc: FakeCCServer, tmp_path: Path) -> None:
    opts = fakecc.client_options(data_dir=tmp_path, retries=2)
    list(crawls_latest(ctx=OpContext.of(opts)))
    DiskCache(tmp_path / "cache").touch_age(opts["collinfo_endpoint"], 3 * 86400 + 61)
    fakecc.faults.add("drop", path="collinfo", times=-1)
    lines: list[str] = []
    assert [r["crawl"] for r in crawls_resolve("2", ctx=OpContext.of(opts,
                                                                     notice=lines.append))] == fakecc.site.crawls[:2]
    assert lines == [
        "crawls: the index server is unreachable, using the crawl list cached 72h1m1s ago; "
        "pass -c to name a crawl instead of resolving it"
    ]
    assert len(fakecc.faults.requests("collinfo")) == 1 + 3  # the first fetch, then 3 dropped attempts
