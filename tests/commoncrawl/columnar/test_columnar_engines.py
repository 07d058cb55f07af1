"""Native and DuckDB against the oracle (a plain pyarrow full scan), over HTTP and local parts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import oracle

from ccrawl.commoncrawl.columnar import parts, query
from ccrawl.commoncrawl.columnar.filters import Filters, host_prefix, range_may_match
from ccrawl.errors import UsageError
from ccrawl.testing.fakecc import FakeCCServer

KINDS = ("count", "urls", "locations", "langs", "mimes")


@pytest.fixture(scope="module")
def rows(colroot: Path) -> list[dict[str, Any]]:
    return oracle.all_rows(colroot)


@pytest.fixture
def http_index(colcc: FakeCCServer) -> Iterator[query.Index]:
    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    yield index
    index.source.close()


@pytest.fixture(scope="module")
def local_index(colroot: Path) -> Iterator[query.Index]:
    index = parts.open_local(colroot)
    yield index
    index.source.close()


def _run(kind: str, f: Filters, index: query.Index, engine: str, **kw: Any) -> list[dict[str, Any]]:
    return list(query.run(kind, f, index, engine=engine, **kw))


def _values(rows: list[dict[str, Any]], column: str) -> list[Any]:
    return sorted({r[column] for r in rows if r[column] is not None})


FIXED = [
    Filters(),
    Filters(domains=("example.com",)),
    Filters(hosts=("news.example.net",), subsets=("warc",)),
    Filters(tlds=("vn",), not_langs=("vie",)),
    Filters(not_tlds=("com",), statuses=(200,)),
    Filters(langs=("deu", "fra"), path_prefix="/a"),
    Filters(not_statuses=(404,), not_mimes=("text/plain",), subsets=("crawldiagnostics",)),
]


@pytest.mark.parametrize("f", FIXED, ids=lambda f: ",".join(k for k in Filters.__slots__ if getattr(f, k)) or "none")
def test_both_engines_over_http_equal_the_oracle(f: Filters, http_index: query.Index,
                                                  rows: list[dict[str, Any]]) -> None:
    for kind in KINDS:
        want = oracle.answer(rows, f, kind)
        for engine in ("native", "duckdb"):
            got = oracle.shape(_run(kind, f, http_index, engine), kind)
            assert got == want, (engine, kind)


def test_not_lang_counts_unlabelled_captures(local_index: query.Index, rows: list[dict[str, Any]]) -> None:
    f = Filters(not_langs=("vie",))
    unlabelled = sum(1 for r in rows if r["content_languages"] is None)
    labelled_other = sum(1 for r in rows if r["content_languages"] not in (None, "vie"))
    assert unlabelled > 0
    for engine in ("native", "duckdb"):
        assert _run("count", f, local_index, engine) == [{"count": unlabelled + labelled_other}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_filter_combination_matches_the_oracle(data: st.DataObject, local_index: query.Index,
                                                     rows: list[dict[str, Any]]) -> None:
    def some(column: str, extra: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        pool = _values(rows, column) + list(extra)
        return tuple(data.draw(st.lists(st.sampled_from(pool), max_size=2, unique=True)))

    f = Filters(
        domains=some("url_host_registered_domain", ("absent.example",)),
        hosts=some("url_host_name", ("www.nowhere.example",)),
        tlds=some("url_host_tld"),
        mimes=some("content_mime_type"),
        statuses=some("fetch_status", (500,)),
        langs=some("content_languages"),
        path_prefix=data.draw(st.sampled_from([None, "/", "/a", "/science/", "/zzz"])),
        subsets=some("subset"),
        not_tlds=some("url_host_tld"),
        not_mimes=some("content_mime_type"),
        not_langs=some("content_languages"),
        not_statuses=some("fetch_status"),
        crawls=some("crawl"),
    )
    kind = data.draw(st.sampled_from(KINDS))
    want = oracle.answer(rows, f, kind)
    assert oracle.shape(_run(kind, f, local_index, "native", jobs=2), kind) == want
    if data.draw(st.booleans()):
        assert oracle.shape(_run(kind, f, local_index, "duckdb", jobs=1), kind) == want


def test_a_domain_count_skips_parts_row_groups_and_pages(colcc: FakeCCServer, rows: list[dict[str, Any]]) -> None:
    index = parts.open_http(colcc.client_options(no_cache=True), "all")
    try:
        explain = query.Explain()
        f = Filters(domains=("example.com",))
        colcc.faults.clear()
        assert _run("count", f, index, "native", explain=explain) == oracle.answer(rows, f, "count")
        s = explain.stats
        assert s.parts == len(index.parts)
        assert s.parts_skipped > 0 and s.row_groups_skipped > 0 and s.pages_skipped > 0
        assert s.row_groups_read < s.row_groups
        per_part: dict[str, int] = {}
        for entry in colcc.faults.log:
            if entry.path.endswith(".parquet"):
                per_part[entry.path] = per_part.get(entry.path, 0) + 1
        holding = {f"/{p.path}" for p in index.parts
                   if any(r["crawl"] == p.crawl and r["subset"] == p.subset and oracle.keep(r, f) for r in rows)}
        assert set(per_part) == {f"/{p.path}" for p in index.parts}
        for path, n in per_part.items():
            if path not in holding:
                # The domain sorts outside this part: its footer (one read) rules it out.
                assert n == 1, path
            else:
                # The tail (the footer), at most one read for the page index it did not hold, then one
                # coalesced read per row group.
                row_groups = pq.read_metadata(Path(colcc.site.root) / path.lstrip("/")).num_row_groups
                assert n <= 2 + row_groups, path
        assert explain.bytes_read < explain.index_bytes
    finally:
        index.source.close()


def test_hosts_file_is_one_pass(tmp_path: Path, local_index: query.Index, rows: list[dict[str, Any]]) -> None:
    from ccrawl.commoncrawl.columnar import filters

    hosts = _values(rows, "url_host_name")
    listing = tmp_path / "hosts.txt"
    listing.write_text("# hosts\n\n" + "\n".join(hosts[:10] + [f"h{i}.nowhere.example" for i in range(9990)]) + "\n")
    f = filters.build(hosts_file=str(listing))
    assert len(f.hosts) == 10000
    fresh = parts.open_local(local_index.source.root)  # type: ignore[attr-defined]
    try:
        explain = query.Explain()
        got = _run("count", f, fresh, "native", explain=explain)
        assert got == oracle.answer(rows, f, "count")
        assert explain.stats.parts == len(fresh.parts)  # every part opened once, not once per host
        # One footer read per part, then at most a handful of reads per row group read; never per host.
        assert explain.requests <= len(fresh.parts) + 8 * explain.stats.row_groups_read < 10000
    finally:
        fresh.source.close()


def test_limit_stops_early_and_raw_sql_refuses_native(local_index: query.Index) -> None:
    assert len(_run("urls", Filters(), local_index, "native", limit=3)) == 3
    assert len(_run("urls", Filters(), local_index, "duckdb", limit=3)) == 3
    with pytest.raises(UsageError):
        query.choose_engine("native", raw_sql=True)
    with pytest.raises(UsageError):
        query.choose_engine("spark")


def test_prefix_pruning_is_sound() -> None:
    assert host_prefix("www.example.com") == "com,example"
    assert host_prefix("news.example.co.uk") == "uk,co,example,news"
    assert range_may_match(["com,example"], "com,example)/", "com,example,zz)/")
    assert range_may_match(["com,example"], "com,a)/", "org,a)/")
    assert range_may_match(["com,b"], "com,b,x)/", "com,c)/")
    assert not range_may_match(["com,b"], "com,c)/", "org,a)/")
    assert not range_may_match(["com,zz"], "com,a)/", "com,y)/")


def test_surt_prefixes_take_the_tightest_set() -> None:
    f = Filters(domains=("example.com",), tlds=("com", "org"))
    assert f.surt_prefixes() == ["com,example"]
    assert replace(f, domains=()).surt_prefixes() == ["com", "org"]
    assert Filters(mimes=("text/html",)).surt_prefixes() is None


def test_duckdb_reads_through_our_source_with_extensions_off(local_index: query.Index) -> None:
    from ccrawl.commoncrawl.columnar import duck

    con = duck.connect_index(local_index.source, local_index.parts)
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name LIKE 'auto%_known_extensions'").fetchall())
        assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
        before = local_index.source.stats.bytes_read
        assert con.execute("SELECT COUNT(*) FROM ccindex").fetchone()[0] > 0
        assert local_index.source.stats.bytes_read >= before  # the bytes came through the counted source
        loaded = con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded AND "
                             "extension_name IN ('httpfs', 'aws')").fetchall()
        assert loaded == []
    finally:
        con.close()


def test_domains_file_matches_the_oracle_on_both_engines(tmp_path: Path, local_index: query.Index,
                                                         rows: list[dict[str, Any]]) -> None:
    from ccrawl.commoncrawl.columnar import filters

    domains = _values(rows, "url_host_registered_domain")[:3]
    listing = tmp_path / "domains.txt"
    listing.write_text("\n".join(f"{d}  # a comment" for d in domains) + "\n\n# end\nabsent.example\n")
    f = filters.build(domains_file=str(listing), not_lang=["eng"])
    assert set(f.domains) == {*domains, "absent.example"}
    for kind in ("count", "urls", "langs"):
        want = oracle.answer(rows, f, kind)
        for engine in ("native", "duckdb"):
            assert oracle.shape(_run(kind, f, local_index, engine), kind) == want, (kind, engine)


@pytest.mark.parametrize("damage", ["truncated", "garbage_footer", "not_parquet"])
def test_a_corrupt_part_is_one_input_error(damage: str, tmp_path: Path, colroot: Path) -> None:
    import shutil

    from ccrawl.errors import InputError

    table = colroot / "cc-index/table"
    shutil.copytree(table, tmp_path / "cc-index/table")
    victim = sorted((tmp_path / "cc-index/table").rglob("*.parquet"))[0]
    data = victim.read_bytes()
    if damage == "truncated":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "garbage_footer":
        victim.write_bytes(data[:-200] + b"\x07" * 192 + (150).to_bytes(4, "little") + b"PAR1")
    else:
        victim.write_bytes(b"<html>not found</html>")
    index = parts.open_local(tmp_path)
    try:
        for engine in ("native", "duckdb"):
            with pytest.raises(InputError):
                _run("count", Filters(), index, engine)
    finally:
        index.source.close()


def test_footers_come_from_the_disk_cache_the_second_time(colcc: FakeCCServer, tmp_path: Path,
                                                          rows: list[dict[str, Any]]) -> None:
    f = Filters(domains=("example.com",))
    runs = []
    for _ in range(2):
        index = parts.open_http(colcc.client_options(data_dir=str(tmp_path)), "all")
        try:
            explain = query.Explain()
            assert _run("count", f, index, "native", explain=explain) == oracle.answer(rows, f, "count")
            runs.append(explain)
        finally:
            index.source.close()
    assert runs[0].cache_hits == 0 and runs[1].cache_hits == len(index.parts)
    assert runs[1].requests == runs[0].requests - len(index.parts)
    assert runs[1].bytes_read < runs[0].bytes_read
