"""A work list on a hub: releases and parts are listed, one column is read over ranged reads."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl.errors import InputError, UsageError
from ccrawl.hub.hfhub import HfRepo
from ccrawl.hub.localhub import LocalRepo
from ccrawl.hub.repo import Add, DatasetRepo
from ccrawl.hub.worklist import HubWorkList, RangeFile, list_releases, newest_release, read_column
from ccrawl.recrawl.worklist import LocalWorkList


def _part(domains: list[str], *, wide: bool = False, row_group_size: int = 50) -> bytes:
    columns: dict[str, list] = {"domain": domains, "rank": list(range(len(domains)))}
    if wide:  # a heavy column the reader must not fetch
        columns["blob"] = [os.urandom(2000) for _ in domains]
    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf, row_group_size=row_group_size, compression="none")
    return buf.getvalue()


def _publish_release(repo: DatasetRepo, release: str, parts: dict[str, list[str]], **kw: bool) -> None:
    repo.create()
    repo.commit([Add(f"{release}/{name}", _part(values, **kw)) for name, values in parts.items()],
                message=f"release {release}")


def test_releases_are_listed_and_the_newest_is_last_in_name_order(any_repo: DatasetRepo) -> None:
    _publish_release(any_repo, "data/2026-01", {"part-0.parquet": ["a.com"]})
    _publish_release(any_repo, "data/2026-03", {"part-0.parquet": ["b.com"]})
    any_repo.commit([Add("README.md", b"# x\n")], message="card")
    assert list_releases(any_repo) == ["data/2026-01", "data/2026-03"]
    assert newest_release(any_repo) == "data/2026-03"


def test_parts_walk_in_numeric_order_whatever_the_width(any_repo: DatasetRepo) -> None:
    _publish_release(any_repo, "rel", {"part-10.parquet": ["k.com"], "part-2.parquet": ["b.com"],
                                       "part-1.parquet": ["a.com", "a2.com"]})
    wl = HubWorkList(any_repo, "domain")
    assert [p.name for p in wl.parts()] == ["part-1.parquet", "part-2.parquet", "part-10.parquet"]
    assert [p.rows for p in wl.parts()] == [2, 1, 1]
    assert list(wl.iter_rows(0)) == [(0, "a.com"), (1, "a2.com")]


def test_iter_rows_resumes_mid_part_across_row_groups(any_repo: DatasetRepo) -> None:
    domains = [f"d{i}.com" for i in range(230)]
    _publish_release(any_repo, "rel", {"part-000.parquet": domains})
    wl = HubWorkList(any_repo, "domains", release="rel")
    assert wl.column == "domain"
    got = list(wl.iter_rows(0, start_row=117))
    assert got[0] == (117, "d117.com")
    assert got[-1] == (229, "d229.com")
    assert len(got) == 113


def test_hub_work_list_reads_the_same_rows_as_the_local_one(any_repo: DatasetRepo, tmp_path: Path) -> None:
    parts = {"part-0.parquet": [f"x{i}.org" for i in range(120)], "part-1.parquet": ["y.org"]}
    _publish_release(any_repo, "rel", parts)
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    for name, values in parts.items():
        (local_dir / name).write_bytes(_part(values))
    hub_wl, local_wl = HubWorkList(any_repo, "domain"), LocalWorkList(local_dir, "domain")
    assert [(p.name, p.rows) for p in hub_wl.parts()] == [(p.name, p.rows) for p in local_wl.parts()]
    for i in range(2):
        assert list(hub_wl.iter_rows(i, 3)) == list(local_wl.iter_rows(i, 3))
    assert hub_wl.identity()["parts"] == local_wl.identity()["parts"]


def test_one_column_is_read_without_fetching_the_heavy_ones(fakehub, hf_repo: HfRepo) -> None:  # type: ignore[no-untyped-def]
    domains = [f"w{i}.net" for i in range(400)]
    _publish_release(hf_repo, "rel", {"part-0.parquet": domains}, wide=True)
    size = next(f.size for f in hf_repo.list_files("rel"))
    before = fakehub.faults.requests["resolve"]
    rf = RangeFile(hf_repo, "rel/part-0.parquet", size, block_size=16 * 1024)
    values = [v for chunk in read_column_from(rf) for v in chunk]
    assert values == domains
    assert fakehub.faults.requests["resolve"] - before == rf.requests  # every block was one ranged GET
    assert size > 700_000  # the blob column is most of the file...
    assert rf.bytes_fetched < size / 4  # ...and it was never read (8 row groups, a 16 KB block each)


def read_column_from(rf: RangeFile) -> list[list[str]]:
    pf = pq.ParquetFile(rf)
    return [pf.read_row_group(g, columns=["domain"]).column(0).to_pylist() for g in range(pf.num_row_groups)]


def test_read_column_helper_names_the_columns_when_one_is_missing(any_repo: DatasetRepo) -> None:
    _publish_release(any_repo, "rel", {"part-0.parquet": ["a.com"]})
    size = any_repo.list_files("rel")[0].size
    assert [v for chunk in read_column(any_repo, "rel/part-0.parquet", size, "domain") for v in chunk] == ["a.com"]
    with pytest.raises(UsageError, match="domain, rank"):
        list(read_column(any_repo, "rel/part-0.parquet", size, "url"))


def test_an_empty_release_is_an_error_not_an_empty_work_list(any_repo: DatasetRepo) -> None:
    any_repo.create()
    any_repo.commit([Add("README.md", b"# empty\n")], message="card only")
    with pytest.raises(InputError, match="empty release"):
        HubWorkList(any_repo, "domain")
    with pytest.raises(InputError, match=r"no \.parquet parts"):
        HubWorkList(any_repo, "domain", release="data/none")


def test_a_listed_part_that_is_not_parquet_is_an_input_error(any_repo: DatasetRepo) -> None:
    any_repo.create()
    any_repo.commit([Add("rel/part-0.parquet", b"this is not parquet at all, not even close")], message="bad")
    with pytest.raises(InputError, match="not readable Parquet"):
        HubWorkList(any_repo, "domain")


@settings(max_examples=60, deadline=None)
@given(reads=st.lists(st.tuples(st.integers(0, 12_000), st.integers(-1, 5_000)), min_size=1, max_size=12),
       block=st.sampled_from([1, 7, 512, 4096, 65_536]))
def test_range_file_reads_equal_slices_of_the_file(tmp_path_factory: pytest.TempPathFactory,
                                                   reads: list[tuple[int, int]], block: int) -> None:
    repo = _range_repo(tmp_path_factory)
    size = len(_RANGE_DATA)
    rf = RangeFile(repo, "blob.bin", size, block_size=block)
    for offset, n in reads:
        rf.seek(offset)
        got = rf.read(n)
        want = _RANGE_DATA[offset:] if n < 0 else _RANGE_DATA[offset : offset + n]
        assert got == want
        if want:
            assert rf.tell() == offset + len(want)


_RANGE_DATA = bytes((i * 7919) % 251 for i in range(10_000))
_RANGE_REPOS: dict[int, LocalRepo] = {}


def _range_repo(factory: pytest.TempPathFactory) -> LocalRepo:
    """One local repo holding a 10 KB blob, shared by every hypothesis example of the session."""
    if not _RANGE_REPOS:
        repo = LocalRepo(factory.mktemp("range") / "hub", "t/blob")
        repo.create()
        repo.commit([Add("blob.bin", _RANGE_DATA)], message="blob")
        _RANGE_REPOS[0] = repo
    return _RANGE_REPOS[0]
