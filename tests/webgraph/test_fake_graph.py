"""The fake web graph is laid out like Common Crawl's: paths, header, column order, release list."""

from __future__ import annotations

import gzip
import json
import urllib.request

from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.webgraph import RELEASES, java_double, java_float


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return bytes(resp.read())


def test_graphinfo_lists_releases_newest_first_with_locations(graph_cc: FakeCCServer) -> None:
    info = json.loads(_get(f"{graph_cc.url}/graphinfo.json"))
    assert [r["id"] for r in info] == [r[0] for r in RELEASES]
    assert info[0]["location"] == f"s3://commoncrawl/projects/hyperlinkgraph/{info[0]['id']}/"
    assert info[0]["crawls"][0].startswith("CC-MAIN-")


def test_host_rank_table_has_cc_header_and_column_order(graph_cc: FakeCCServer) -> None:
    rid = RELEASES[0][0]
    raw = _get(f"{graph_cc.url}/projects/hyperlinkgraph/{rid}/host/{rid}-host-ranks.txt.gz")
    lines = gzip.decompress(raw).decode().splitlines()
    assert lines[0] == "#harmonicc_pos\t#harmonicc_val\t#pr_pos\t#pr_val\t#host_rev"
    first = lines[1].split("\t")
    assert first[0] == "1" and first[1] == "3.4375268E7" and first[4] == "com.facebook.www"
    positions = [int(line.split("\t")[0]) for line in lines[1:]]
    assert positions == list(range(1, len(positions) + 1))
    assert sorted(int(line.split("\t")[2]) for line in lines[1:]) == positions  # PageRank positions: a permutation


def test_newest_release_has_no_domain_table_older_ones_do(graph_cc: FakeCCServer) -> None:
    newest, older = RELEASES[0][0], RELEASES[1][0]
    try:
        _get(f"{graph_cc.url}/projects/hyperlinkgraph/{newest}/domain/{newest}-domain-ranks.txt.gz")
        raise AssertionError("the newest release must not have a domain table")
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
    raw = _get(f"{graph_cc.url}/projects/hyperlinkgraph/{older}/domain/{older}-domain-ranks.txt.gz")
    lines = gzip.decompress(raw).decode().splitlines()
    assert lines[0].endswith("\t#host_rev\t#n_hosts")
    wiki = next(line.split("\t") for line in lines if line.split("\t")[4] == "org.wikipedia")
    assert int(wiki[5]) == 4


def test_java_number_format() -> None:
    assert java_float(34375268.0) == "3.4375268E7"
    assert java_float(2521344.8) == "2521344.8"
    assert java_double(2.796109550097404e-06) == "2.796109550097404E-6"
    assert java_double(0.0055143537769673755) == "0.0055143537769673755"
