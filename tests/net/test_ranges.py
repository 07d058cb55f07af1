"""Coalesced range planning: the grouping rule, its invariants, twin parity and the dry-run line."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccrawl import accel
from ccrawl.errors import InputError, UsageError
from ccrawl.net import ranges
from ccrawl.net.ranges import Group
from tests.conftest import native_or_skip

Plan = Callable[..., list[Group]]
MiB = 1 << 20


@pytest.fixture(scope="module", params=["python", "native"])
def plan(request: pytest.FixtureRequest) -> Plan:
    if request.param == "python":
        return ranges.plan_groups_py
    return native_or_skip("ranges").plan_groups  # type: ignore[no-any-return]


def test_neighbours_within_the_gap_share_one_read(plan: Plan) -> None:
    locs = [("a.warc.gz", 0, 100), ("a.warc.gz", 150, 100), ("a.warc.gz", 1000, 10)]
    assert plan(locs, gap=50) == [
        Group("a.warc.gz", 0, 250, ((0, 100), (150, 100))),
        Group("a.warc.gz", 1000, 1010, ((1000, 10),)),
    ]


def test_input_order_does_not_matter_and_groups_come_in_disk_order(plan: Plan) -> None:
    locs = [("b", 500, 10), ("a", 900, 10), ("b", 0, 10), ("a", 0, 10)]
    groups = plan(locs, gap=0)
    assert [(g.file, g.start) for g in groups] == [("a", 0), ("a", 900), ("b", 0), ("b", 500)]
    assert plan(list(reversed(locs)), gap=0) == groups


def test_groups_never_merge_across_files(plan: Plan) -> None:
    groups = plan([("a", 0, 10), ("b", 10, 10)], gap=MiB)
    assert [g.file for g in groups] == ["a", "b"]


def test_max_span_caps_a_group(plan: Plan) -> None:
    locs = [("f", i * 100, 100) for i in range(10)]  # touching records, 1000 bytes in all
    groups = plan(locs, gap=MiB, max_span=300)
    assert [(g.start, g.end) for g in groups] == [(0, 300), (300, 600), (600, 900), (900, 1000)]


def test_record_larger_than_max_span_is_read_alone(plan: Plan) -> None:
    groups = plan([("f", 0, 10), ("f", 20, 5000), ("f", 5030, 10)], gap=MiB, max_span=1000)
    assert [g.members for g in groups] == [((0, 10),), ((20, 5000),), ((5030, 10),)]


def test_identical_locations_are_read_once(plan: Plan) -> None:
    groups = plan([("f", 0, 10), ("f", 0, 10), ("f", 0, 10)])
    assert groups == [Group("f", 0, 10, ((0, 10),))]


def test_overlapping_locations_merge_into_one_read(plan: Plan) -> None:
    groups = plan([("f", 50, 100), ("f", 0, 100), ("f", 60, 10)], gap=0)
    assert groups == [Group("f", 0, 150, ((0, 100), (50, 100), (60, 10)))]


def test_overlap_past_max_span_splits_rather_than_reading_more(plan: Plan) -> None:
    groups = plan([("f", 0, 600), ("f", 500, 600)], gap=0, max_span=1000)
    assert groups == [Group("f", 0, 600, ((0, 600),)), Group("f", 500, 1100, ((500, 600),))]


def test_gap_zero_merges_only_touching_records(plan: Plan) -> None:
    groups = plan([("f", 0, 10), ("f", 10, 10), ("f", 21, 10)], gap=0)
    assert [g.members for g in groups] == [((0, 10), (10, 10)), ((21, 10),)]


def test_defaults_are_one_mib_gap_and_sixteen_mib_span(plan: Plan) -> None:
    assert (MiB, 16 * MiB) == (ranges.DEFAULT_GAP, ranges.DEFAULT_MAX_SPAN)
    near = plan([("f", 0, 10), ("f", 10 + MiB, 10)])
    far = plan([("f", 0, 10), ("f", 11 + MiB, 10)])
    assert len(near) == 1 and len(far) == 2
    capped = plan([("f", 0, 8 * MiB), ("f", 8 * MiB, 8 * MiB), ("f", 16 * MiB, 1)])
    assert [len(g.members) for g in capped] == [2, 1]


def test_empty_input_has_no_groups(plan: Plan) -> None:
    assert plan([]) == []


def test_accepts_any_iterable_of_sequences(plan: Plan) -> None:
    def gen() -> Any:
        yield ["f", 0, 10]
        yield ("f", 10, 10)

    assert plan(gen()) == [Group("f", 0, 20, ((0, 10), (10, 10)))]


def test_group_range_header_is_inclusive() -> None:
    group = Group("f", 100, 250, ((100, 150),))
    assert group.range_header() == "bytes=100-249"
    assert group.span == 150


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (("f", -1, 10), "location #1 (f@-1): the offset must be 0 or more"),
        (("f", 5, 0), "location #1 (f@5): the length must be positive, got 0"),
        (("", 5, 10), "location #1: the file must be a non-empty string, got ''"),
        ((7, 5, 10), "location #1: the file must be a non-empty string, got 7"),
        (("f", "5", 10), "location #1 (f): offset and length must be integers"),
        (("f", 5.0, 10), "location #1 (f): offset and length must be integers"),
        (("f", 5), "location #1 is not (file, offset, length)"),
        ("f", "location #1 is not (file, offset, length)"),
        (("f", (1 << 63) - 5, 10), "location #1 (f@9223372036854775803): offset + length is past 2**63 - 1"),
    ],
)
def test_bad_locations_are_refused_with_their_position(plan: Plan, item: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        plan([("ok", 0, 1), item])
    assert str(info.value).startswith(message)


def test_bad_limits_are_usage_errors_naming_the_flag(plan: Plan) -> None:
    with pytest.raises(UsageError, match="--gap"):
        plan([("f", 0, 1)], gap=-1)
    with pytest.raises(UsageError, match="--max-span"):
        plan([("f", 0, 1)], max_span=0)


def test_huge_limits_act_as_unlimited(plan: Plan) -> None:
    groups = plan([("f", 0, 1), ("f", 1 << 62, 1)], gap=1 << 70, max_span=1 << 70)
    assert len(groups) == 1


def test_module_uses_the_native_implementation_when_built() -> None:
    if accel.extensions_disabled():
        assert ranges.plan_groups is ranges.plan_groups_py
    else:
        assert ranges.plan_groups is native_or_skip("ranges").plan_groups


# --- invariants over generated plans -------------------------------------------------------------

files = st.sampled_from(["a.warc.gz", "b.warc.gz", "crawl/segments/c.warc.gz", "é.warc.gz"])
locations = st.lists(st.tuples(files, st.integers(0, 20_000), st.integers(1, 3_000)), max_size=80)


def check_invariants(locs: list[tuple[str, int, int]], groups: list[Group], gap: int, max_span: int) -> None:
    covered = [(g.file, off, length) for g in groups for off, length in g.members]
    # Every distinct location is covered by exactly one group.
    assert sorted(covered) == sorted(set(locs))
    assert [(g.file, g.start) for g in groups] == sorted((g.file, g.start) for g in groups)
    for g in groups:
        assert g.start == g.members[0][0]
        assert g.end == max(off + length for off, length in g.members)
        assert list(g.members) == sorted(g.members)
        assert g.span <= max_span or len(g.members) == 1
        end = g.members[0][0] + g.members[0][1]
        for off, length in g.members[1:]:
            assert off - end <= gap  # the hole inside a group is never past the gap
            end = max(end, off + length)
    # Greedy: the next group in the same file starts where merging was not allowed.
    for prev, nxt in itertools.pairwise(groups):
        if prev.file == nxt.file:
            off, length = nxt.members[0]
            assert off - prev.end > gap or max(prev.end, off + length) - prev.start > max_span


@settings(max_examples=300, deadline=None)
@given(locations, st.integers(0, 5_000), st.integers(1, 20_000))
def test_plan_invariants_hold(plan: Plan, locs: list[tuple[str, int, int]], gap: int, max_span: int) -> None:
    check_invariants(locs, plan(locs, gap=gap, max_span=max_span), gap, max_span)


@settings(max_examples=300, deadline=None)
@given(locations, st.integers(0, 5_000), st.integers(1, 20_000))
def test_native_matches_twin(locs: list[tuple[str, int, int]], gap: int, max_span: int) -> None:
    native = native_or_skip("ranges")
    assert native.plan_groups(locs, gap=gap, max_span=max_span) == ranges.plan_groups_py(
        locs, gap=gap, max_span=max_span
    )


bad_items = st.one_of(
    st.tuples(files, st.integers(-5, 5), st.integers(-5, 5)),
    st.tuples(st.one_of(st.just(""), st.integers()), st.integers(0, 5), st.integers(1, 5)),
    st.lists(st.integers(0, 3), max_size=4),
    st.tuples(files, st.floats(0, 5), st.integers(1, 5)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(bad_items, max_size=6))
def test_native_and_twin_raise_the_same_errors(items: list[Any]) -> None:
    native = native_or_skip("ranges")

    def outcome(fn: Plan) -> Any:
        try:
            return fn(items, gap=3)
        except InputError as exc:
            return str(exc)

    assert outcome(native.plan_groups) == outcome(ranges.plan_groups_py)


# --- the dry-run summary --------------------------------------------------------------------------


def test_dry_run_line_reproduces_the_seed_lines() -> None:
    seed_gap = {"locations": 1_000_000, "requests": 612_078, "bytes_read": 10_100_000_000}
    seed_gap |= {"record_bytes": 1_600_000_000, "fewer": 1_000_000 / 612_078, "amplification": 6.3125}
    assert ranges.dry_run_line(seed_gap) == (
        "1000000 locations in 612078 requests, 1.6x fewer than one at a time; "
        "10.1 GB read for 1.6 GB of records, 6.3x amplification"
    )
    seed_default = {"locations": 1_000_000, "requests": 101_238, "bytes_read": 116_000_000_000}
    seed_default |= {"record_bytes": 1_622_000_000, "fewer": 1_000_000 / 101_238, "amplification": 116 / 1.622}
    assert ranges.dry_run_line(seed_default) == (
        "1000000 locations in 101238 requests, 9.9x fewer than one at a time; "
        "116.0 GB read for 1.6 GB of records, 71.5x amplification"
    )


def test_summary_of_a_real_plan(plan: Plan) -> None:
    locs = [("f", 0, 500), ("f", 1000, 500), ("f", 1000, 500), ("g", 0, 500)]
    groups = plan(locs, gap=MiB)
    summary = ranges.plan_summary(locs, groups)
    assert summary == {
        "locations": 4,
        "requests": 2,
        "bytes_read": 2000,
        "record_bytes": 1500,
        "fewer": 2.0,
        "amplification": 2000 / 1500,
    }
    assert ranges.dry_run_line(summary) == (
        "4 locations in 2 requests, 2.0x fewer than one at a time; "
        "2.0 kB read for 1.5 kB of records, 1.3x amplification"
    )


def test_dry_run_line_for_one_and_for_none(plan: Plan) -> None:
    one = [("f", 0, 10)]
    assert ranges.dry_run_line(ranges.plan_summary(one, plan(one))) == (
        "1 location in 1 request, 1.0x fewer than one at a time; 10 B read for 10 B of records, 1.0x amplification"
    )
    assert ranges.dry_run_line(ranges.plan_summary([], plan([]))) == "0 locations in 0 requests; nothing to read"


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (171_000, "171.0 kB"),
        (999_949, "999.9 kB"),
        (999_950, "1.0 MB"),
        (1_600_000_000, "1.6 GB"),
        (116_000_000_000, "116.0 GB"),
        (3 * 10**15, "3.0 PB"),
        (5 * 10**18, "5000.0 PB"),
    ],
)
def test_format_bytes_uses_decimal_units(n: int, text: str) -> None:
    assert ranges.format_bytes(n) == text
