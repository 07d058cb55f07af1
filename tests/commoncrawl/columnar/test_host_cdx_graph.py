"""``host cdx --graph RELEASE``: the CDX statistics over the crawls that web-graph release was built from.

Every ``host`` subcommand takes ``--graph``; for the CDX aggregate it picks the crawls (graphinfo.json
lists each release's crawls), so its counts describe the same captures as the release's ranks
(issue #36, item 11). The fake here has the newest release's three crawls and one older crawl.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli import main as cli_main
from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.site import HOSTS
from ccrawl.testing.fakecc.webgraph import RELEASES

sys.path.insert(0, str(Path(__file__).parent))
import oracle

NEWEST, NEWEST_CRAWLS = RELEASES[0]
#: the newest release's crawls (2026-13, -17, -21), and one crawl that is in no release here
CRAWLS = ((2026, 21), (2026, 17), (2026, 13), (2025, 5))


@pytest.fixture(scope="module")
def graphcc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCCServer]:
    spec = SiteSpec(records=40, files=2, older_records=30, older_files=1, crawls=CRAWLS, hosts=HOSTS)
    with FakeCCServer(tmp_path_factory.mktemp("graphcc"), spec) as server:
        yield server


def _cli(cc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> tuple[int, str, str]:
    for k, v in {"CCRAWL_COLLINFO_ENDPOINT": f"{cc.url}/collinfo.json", "CCRAWL_DATA_ENDPOINT": cc.url,
                 "CCRAWL_CDX_ENDPOINT": cc.url, "CCRAWL_DATA_DIR": str(tmp_path / "data"), "CCRAWL_GLOBAL_RATE": "0",
                 "CCRAWL_CONFIG_DIR": str(tmp_path / "config")}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setitem(cli_main.COMMANDS, "host", ("ccrawl.cli.host:host", "Hosts"))
    code = cli_main.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _expected(rows: list[dict[str, Any]], crawls: set[str]) -> dict[str, tuple[int, int]]:
    captures: Counter[str] = Counter()
    urls: dict[str, set[str]] = {}
    for r in rows:
        if r["crawl"] in crawls:
            captures[r["url_host_name"]] += 1
            urls.setdefault(r["url_host_name"], set()).add(r["url"])
    return {h: (n, len(urls[h])) for h, n in captures.items()}


@pytest.mark.parametrize("engine", ["native", "duckdb"])
def test_graph_aggregates_over_the_crawls_of_that_release(engine: str, graphcc: FakeCCServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = oracle.all_rows(Path(graphcc.site.root))
    code, out, err = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", NEWEST,
                          "--engine", engine, "-o", "jsonl")
    assert code == 0, err
    got = {r["host"]: (r["captures"], r["urls"]) for r in map(json.loads, out.splitlines())}
    assert got == _expected(rows, set(NEWEST_CRAWLS))
    assert got != _expected(rows, {graphcc.site.crawls[0]})  # more than the latest crawl alone
    assert f"--graph {NEWEST}: crawls {', '.join(NEWEST_CRAWLS)}" in err  # says which crawls it read
    # --graph latest is the newest release, the same as naming it
    code, latest, _ = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", "latest",
                           "--engine", engine, "-o", "jsonl")
    assert code == 0 and latest == out


def test_graph_with_a_filter_is_the_one_host(graphcc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rows = oracle.all_rows(Path(graphcc.site.root))
    code, out, err = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", NEWEST, "--filter",
                          "example.com", "-o", "json")
    assert code == 0, err
    got = json.loads(out)
    assert (got["host"], got["captures"], got["urls"]) == ("example.com",
                                                           *_expected(rows, set(NEWEST_CRAWLS))["example.com"])


def test_graph_refusals_are_one_line_exit_2(graphcc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", "cc-main-1999-jan")
    assert code == 2 and err.count("\n") == 1 and "no such web-graph release" in err, err
    code, _, err = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", NEWEST, "-c",
                        graphcc.site.crawls[0])
    assert code == 2 and err.count("\n") == 1 and "--graph" in err and "-c" in err, err


def test_graph_with_engine_print_names_the_release_crawls(graphcc: FakeCCServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(graphcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--graph", NEWEST, "--engine", "print")
    assert code == 0, err
    assert all(f"'{c}'" in out for c in NEWEST_CRAWLS) and f"'{graphcc.site.crawls[-1]}'" not in out, out
