"""rank, host, sched assign, crawl seed and crawl status against the fake web graph."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from ccrawl.cli.main import main
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.webgraph import HOSTS, ISOLATED, RELEASES, expected_edges

NEWEST, OLDER = RELEASES[0][0], RELEASES[1][0]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _jsonl(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_rank_host_reads_newest_release(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "rank", "host", "www.facebook.com", "-o", "json")
    assert code == 0
    rec = json.loads(out)
    assert rec["harmonic_pos"] == 1 and rec["harmonic_val"] == 34375268
    assert rec["host_rev"] == "com.facebook.www" and rec["registered_domain"] == "facebook.com"
    assert "in_degree" not in rec and "cdx_captures" not in rec  # unmeasured: absent in JSON


def test_rank_domain_falls_back_to_newest_release_with_a_domain_table(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "rank", "domain", "wikipedia.org", "-o", "json")
    assert code == 0
    rec = json.loads(out)
    assert rec["graph"] == OLDER and rec["n_hosts"] == 4
    assert NEWEST in err and "no domain table" in err
    # host and domain positions are separate tables with separate positions
    _, host_out, _ = _run(capsys, "rank", "host", "de.wikipedia.org", "-o", "json")
    assert json.loads(host_out)["harmonic_pos"] != rec["harmonic_pos"]


def test_rank_domain_pinned_to_release_without_table_is_exit_3(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "rank", "domain", "wikipedia.org", "--graph", NEWEST)
    assert code == 3 and "no domain table" in err


def test_rank_unknown_host_and_unknown_graph(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "rank", "host", "nowhere.invalid")
    assert code == 3 and "not in the host rank table" in err
    code, _, err = _run(capsys, "rank", "host", "golang.org", "--graph", "cc-main-1999-jan")
    assert code == 2 and "no such web-graph release" in err


def test_rank_graph_pins_an_older_release_and_table_skips_lookup(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    tops = {}
    for rid in (NEWEST, RELEASES[2][0]):
        code, out, _ = _run(capsys, "rank", "all", "--graph", rid, "-o", "jsonl")
        assert code == 0
        tops[rid] = [r["host"] for r in _jsonl(out)]
        assert sorted(tops[rid]) == sorted(HOSTS)
    assert tops[NEWEST] != tops[RELEASES[2][0]]  # older graphs rank differently
    table = f"{cc_env.url}/projects/hyperlinkgraph/{OLDER}/host/{OLDER}-host-ranks.txt.gz"
    code, out, _ = _run(capsys, "rank", "top", "--table", table, "-n", "2", "-o", "jsonl")
    assert code == 0 and len(_jsonl(out)) == 2
    code, _, err = _run(capsys, "rank", "top", "--table", table, "--graph", OLDER)
    assert code == 2 and "give one" in err


def test_rank_top_tld_filter_and_default_ten(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "rank", "top", "-o", "jsonl")
    assert code == 0 and len(_jsonl(out)) == 10
    code, out, _ = _run(capsys, "rank", "all", "--tld", "uk", "-o", "jsonl")
    rows = _jsonl(out)
    assert rows and all(str(r["host"]).endswith(".uk") for r in rows)
    assert [r["harmonic_pos"] for r in rows] == sorted(r["harmonic_pos"] for r in rows)  # type: ignore[type-var]


def test_host_top_csv_keeps_columns_with_blank_unmeasured_cells(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "host", "top", "-n", "2", "-o", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 and rows[0]["host"] == "www.facebook.com"
    assert "in_degree" in rows[0] and rows[0]["in_degree"] == "" and rows[0]["cdx_captures"] == ""
    code, out, _ = _run(capsys, "host", "top", "-n", "1", "-o", "jsonl")
    assert set(json.loads(out)) == {"host", "host_rev", "tld", "registered_domain", "harmonic_pos", "harmonic_val",
                                    "pagerank_pos", "pagerank_val"}


def test_host_get_and_get_cdx_without_cdx_operation(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "host", "get", "golang.org", "-o", "json")
    assert code == 0 and json.loads(out)["host"] == "golang.org"


def test_host_vertices_are_in_reversed_host_order(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "host", "vertices", "-o", "jsonl")
    rows = _jsonl(out)
    assert code == 0 and [r["id"] for r in rows] == list(range(len(HOSTS)))
    assert [r["host_rev"] for r in rows] == sorted(r["host_rev"] for r in rows)  # type: ignore[type-var]
    code, out, _ = _run(capsys, "host", "vertices", "-n", "3", "-o", "jsonl")
    assert len(_jsonl(out)) == 3


def test_host_degrees_match_the_edge_list_and_zero_prints_zero(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    edges = expected_edges(NEWEST)
    outd, ind = Counter(a for a, _ in edges), Counter(b for _, b in edges)
    code, out, _ = _run(capsys, "host", "degrees", "-o", "jsonl")
    assert code == 0
    rows = {r["host"]: r for r in _jsonl(out)}
    assert len(rows) == len(HOSTS)
    for host, rec in rows.items():
        assert rec["in_degree"] == ind[host] and rec["out_degree"] == outd[host], host
    lonely = ISOLATED[0]
    assert rows[lonely]["in_degree"] == 0 and rows[lonely]["out_degree"] == 0
    code, out, _ = _run(capsys, "host", "degrees", "-o", "csv")
    line = next(r for r in csv.DictReader(io.StringIO(out)) if r["host"] == lonely)
    assert line["in_degree"] == "0" and line["out_degree"] == "0" and line["harmonic_pos"] == ""


def test_host_enrich_with_degrees(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    edges = expected_edges(NEWEST)
    code, out, _ = _run(capsys, "host", "enrich", "-n", "3", "-o", "jsonl")
    rows = _jsonl(out)
    assert code == 0 and len(rows) == 3 and "in_degree" not in rows[0]
    code, out, _ = _run(capsys, "host", "enrich", "--degrees", "-n", "3", "-o", "jsonl")
    rows = _jsonl(out)
    assert [r["host"] for r in rows] == list(HOSTS[:3])
    for r in rows:
        assert r["in_degree"] == sum(1 for _, b in edges if b == r["host"])
        assert r["out_degree"] == sum(1 for a, _ in edges if a == r["host"])
    code, out, _ = _run(capsys, "host", "enrich", "--cdx", "-n", "3", "-o", "jsonl")
    rows = _jsonl(out)
    assert code == 0 and [r["host"] for r in rows] == list(HOSTS[:3])
    # the columnar index holds captures of the first two graph hosts only: the third is a measured zero
    assert rows[0]["cdx_captures"] > 0 and rows[1]["cdx_captures"] > 0 and rows[0]["cdx_urls"] > 0
    assert rows[2]["cdx_captures"] == 0 and rows[2]["cdx_urls"] == 0


def test_sched_assign_tiers_follow_change_rate(cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    for rate, tier, interval in (("0.9", 1, "24h"), ("0.5", 2, "3d"), ("0.3", 3, "7d"), ("0.1", 4, "30d")):
        code, out, _ = _run(capsys, "sched", "assign", "--change-rate", rate, "-n", "5", "-o", "jsonl")
        rows = _jsonl(out)
        assert code == 0 and len(rows) == 5
        assert {(r["tier"], r["interval"]) for r in rows} == {(tier, interval)}, rate
    code, _, err = _run(capsys, "sched", "assign", "--change-rate", "1.5")
    assert code == 2 and "between 0 and 1" in err


def test_crawl_seed_emits_one_url_per_host_and_refuses_tier_1(
    cc_env: FakeCCServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "crawl", "seed", "-o", "jsonl")
    rows = _jsonl(out)
    assert code == 0 and [r["url"] for r in rows] == [f"https://{h}/" for h in HOSTS]
    assert {r["tier"] for r in rows} == {2}
    code, out, _ = _run(capsys, "crawl", "seed", "--max-seeds", "4", "--max-tier", "2", "-o", "jsonl")
    assert len(_jsonl(out)) == 4
    code, out, err = _run(capsys, "crawl", "seed", "--max-tier", "1")
    assert code == 2 and out == "" and "change rate" in err
    code, _, err = _run(capsys, "crawl", "seed", "--max-tier", "6")
    assert code == 2


def test_crawl_status_budget_adds_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "crawl", "status", "-o", "jsonl")
    rows = _jsonl(out)
    assert code == 0 and [r["tier"] for r in rows] == [1, 2, 3, 4, 5]
    total = sum(int(r["pages_per_day"]) for r in rows)  # type: ignore[call-overload]
    assert abs(total - 10_000 * 86400) <= 5
    assert rows[4]["interval"] == "on-demand" and "hosts" not in rows[4]
    code, out, _ = _run(capsys, "crawl", "status", "--throughput", "100", "-o", "jsonl")
    assert abs(sum(int(r["pages_per_day"]) for r in _jsonl(out)) - 8_640_000) <= 5  # type: ignore[call-overload]
