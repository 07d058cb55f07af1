"""The columnar, db, host cdx and sched diff commands against the fake, end to end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
import warcio

from ccrawl.cli import main as cli_main
from ccrawl.testing.fakecc import FakeCCServer

sys.path.insert(0, str(Path(__file__).parent))
import oracle

from ccrawl.commoncrawl.columnar.filters import Filters


def _env(colcc: FakeCCServer, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "CCRAWL_COLLINFO_ENDPOINT": f"{colcc.url}/collinfo.json",
        "CCRAWL_DATA_ENDPOINT": colcc.url,
        "CCRAWL_CDX_ENDPOINT": colcc.url,
        "CCRAWL_DATA_DIR": str(tmp_path / "data"),
        "CCRAWL_GLOBAL_RATE": "0",
        "CCRAWL_CONFIG_DIR": str(tmp_path / "config"),
    })
    return env


def _cli(colcc: FakeCCServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> tuple[int, str, str]:
    for k, v in _env(colcc, tmp_path).items():
        monkeypatch.setenv(k, v)
    code = cli_main.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _body(root: Path, filename: str, offset: int, length: int) -> bytes:
    data = (root / filename).read_bytes()[offset : offset + length]
    rec = next(iter(warcio.ArchiveIterator(io.BytesIO(data))))
    return bytes(rec.content_stream().read())


def test_locations_piped_to_fetch_batch_round_trip(colcc: FakeCCServer, colroot: Path, tmp_path: Path) -> None:
    env = _env(colcc, tmp_path)
    query = [sys.executable, "-m", "ccrawl", "columnar", "locations", "-c", "all", "--tld", "com", "--subset", "warc",
             "-o", "jsonl"]
    listed = subprocess.run(query, env=env, capture_output=True, check=True, timeout=120).stdout
    locs = [json.loads(line) for line in listed.decode().splitlines()]
    assert len(locs) > 10
    out = tmp_path / "fetched"
    fetch = [sys.executable, "-m", "ccrawl", "fetch", "-", "--batch", "--dir", "--out-dir", str(out)]
    subprocess.run(fetch, env=env, input=listed, capture_output=True, check=True, timeout=120)
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    assert len(files) == len(locs)
    for loc in locs:
        stem = loc["warc_filename"].rsplit("/", 1)[1].removesuffix(".warc.gz")
        (name,) = [n for n in files if n.startswith(f"{stem}-{loc['warc_record_offset']}.")]
        want = _body(colroot, loc["warc_filename"], loc["warc_record_offset"], loc["warc_record_length"])
        assert files[name] == want


def test_printed_sql_runs_in_duckdb_over_the_local_parquet(colcc: FakeCCServer, colroot: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rows = oracle.all_rows(colroot)
    crawl = colcc.site.crawls[0]
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    glob = str(colroot / "cc-index/table/cc-main/warc/*/*/*.parquet")
    con.execute(f"CREATE VIEW ccindex AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true, "
                "hive_types_autocast = false)")
    cases = [
        (("count", "--tld", "com", "--not-lang", "vie"), Filters(tlds=("com",), not_langs=("vie",)), "count"),
        (("langs", "--domain", "example.com"), Filters(domains=("example.com",)), "langs"),
        (("mimes", "--not-status", "404", "--subset", "warc"), Filters(not_statuses=(404,), subsets=("warc",)),
         "mimes"),
        (("urls", "--path-prefix", "/s", "--status", "200"), Filters(path_prefix="/s", statuses=(200,)), "urls"),
    ]
    for args, f, kind in cases:
        code, sql_text, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "columnar", *args, "--engine", "print",
                                 "-c", crawl)
        assert code == 0 and "s3://commoncrawl/cc-index/table/cc-main/warc/" in sql_text
        cur = con.execute(sql_text)
        names = [d[0] for d in cur.description]
        got = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        want = oracle.answer(rows, Filters(**{**{k: getattr(f, k) for k in Filters.__slots__}, "crawls": (crawl,)}),
                             kind)
        assert oracle.shape(got, kind) == want, args
    code, text, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "columnar", "sql", "--for", "count", "-c", crawl,
                         "--host", "example.com")
    assert code == 0 and "url_host_name = 'example.com'" in text and f"crawl = '{crawl}'" in text


def test_count_explain_query_and_schema(colcc: FakeCCServer, colroot: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rows = oracle.all_rows(colroot)
    want = oracle.answer(rows, Filters(domains=("example.com",)), "count")[0]["count"]
    code, out, err = _cli(colcc, tmp_path, monkeypatch, capsys, "table", "count", "-c", "all", "--domain",
                          "example.com", "--explain", "-o", "json")
    assert code == 0 and json.loads(out) == {"count": want}
    assert "index bytes" in err and "row groups" in err
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "athena", "query", "-c", "all", "-o", "jsonl",
                        "SELECT subset, COUNT(*) AS n FROM ccindex GROUP BY subset ORDER BY subset")
    got = {r["subset"]: r["n"] for r in map(json.loads, out.splitlines())}
    assert set(got) == {"crawldiagnostics", "warc"}
    assert got == {s: sum(1 for r in rows if r["subset"] == s) for s in got}
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "columnar", "schema", "-o", "jsonl")
    names = [json.loads(line)["name"] for line in out.splitlines()]
    assert names[0] == "url_surtkey" and names[-2:] == ["crawl", "subset"] and "warc_record_id" in names


def test_bad_input_is_one_line_with_the_right_code(colcc: FakeCCServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("ok.example\nnot a host!\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    for args, code_want in (
        (("columnar", "count", "--status", "abc"), 2),
        (("columnar", "count", "--lang", "v%"), 2),
        (("columnar", "count", "--subset", "wat"), 2),
        (("columnar", "count", "--hosts-file", str(tmp_path / "missing.txt")), 2),
        (("columnar", "count", "--hosts-file", str(empty)), 2),
        (("columnar", "count", "--hosts-file", str(bad)), 1),
        (("columnar", "count", "--engine", "spark"), 2),
        (("columnar", "query", "--engine", "native", "SELECT 1"), 2),
        (("columnar", "query", "SELEC nonsense"), 2),
    ):
        code, _, err = _cli(colcc, tmp_path, monkeypatch, capsys, *args)
        assert code == code_want, (args, err)
        assert err.startswith("ccrawl: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_db_load_sql_path_shell(colcc: FakeCCServer, colroot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    rows = oracle.all_rows(colroot)
    monkeypatch.setenv("CCRAWL_DB_PATH", str(tmp_path / "my.duckdb"))
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "db", "path")
    assert code == 0 and out.strip() == str(tmp_path / "my.duckdb")
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "db", "load", "-c", "all", "--tld", "de",
                        "--table", "de_pages", "-o", "json")
    want = sum(1 for r in rows if r["url_host_tld"] == "de")
    assert code == 0 and json.loads(out)["rows"] == want
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "db", "sql", "-o", "jsonl",
                        "SELECT COUNT(*) AS n, COUNT(DISTINCT crawl) AS crawls, MIN(url_host_tld) AS t FROM de_pages")
    got = json.loads(out)
    assert got["n"] == want and got["t"] == "de" and got["crawls"] == len({r["crawl"] for r in rows
                                                                          if r["url_host_tld"] == "de"})
    monkeypatch.setenv("PATH", str(tmp_path))  # no duckdb shell on PATH
    code, _, err = _cli(colcc, tmp_path, monkeypatch, capsys, "db", "shell")
    assert code == 2 and "duckdb command-line shell" in err
    code, _, err = _cli(colcc, tmp_path, monkeypatch, capsys, "db", "load", "--table", "1bad")
    assert code == 2


@pytest.mark.parametrize("engine", ["native", "duckdb"])
def test_host_cdx_and_sched_diff(engine: str, colcc: FakeCCServer, colroot: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "host", ("ccrawl.cli.columnar_extra:host", "Hosts"))
    monkeypatch.setitem(cli_main.COMMANDS, "sched", ("ccrawl.cli.columnar_extra:sched", "Scheduling"))
    rows = oracle.all_rows(colroot)
    newest, older = colcc.site.crawls[0], colcc.site.crawls[1]
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "host", "cdx", "--filter", "example.com", "-c", newest,
                        "--engine", engine, "-o", "json")
    mine = [r for r in rows if r["crawl"] == newest and r["url_host_name"] == "example.com"]
    got = json.loads(out)
    assert code == 0 and got["host"] == "example.com" and got["captures"] == len(mine)
    assert got["urls"] == len({r["url"] for r in mine})
    assert got["status_2xx"] + got["status_4xx"] + got["status_3xx"] == len(mine)
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "host", "cdx", "-n", "3", "-c", newest, "--engine",
                        engine, "-o", "jsonl")
    top = [json.loads(line) for line in out.splitlines()]
    assert len(top) == 3 and top[0]["captures"] >= top[1]["captures"] >= top[2]["captures"]
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "sched", "diff", "--crawl-a", older, "--crawl-b", newest,
                        "--engine", engine, "-o", "jsonl")
    diff = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and diff
    expected = _diff(rows, older, newest)
    assert {d["host"]: (d["urls"], d["changed"]) for d in diff} == expected


def _diff(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, tuple[int, int]]:
    def side(crawl: str) -> dict[str, tuple[str, str | None]]:
        out: dict[str, tuple[str, str | None]] = {}
        for r in rows:
            if r["crawl"] == crawl and r["fetch_status"] == 200:
                old = out.get(r["url"])
                d = r["content_digest"]
                out[r["url"]] = (r["url_host_name"], min(d, old[1]) if old and old[1] else d)
        return out

    sa, sb = side(a), side(b)
    res: dict[str, list[int]] = {}
    for url, (host, digest) in sa.items():
        if url in sb:
            acc = res.setdefault(host, [0, 0])
            acc[0] += 1
            acc[1] += int(digest != sb[url][1])
    return {h: (n, c) for h, (n, c) in res.items()}


def test_nothing_matched_exits_3_but_a_zero_count_is_an_answer(colcc: FakeCCServer, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(colcc, tmp_path, monkeypatch, capsys, "columnar", "urls", "--host", "absent.example")
    assert code == 3 and out == "" and err.startswith("ccrawl: no captures match")
    code, out, _ = _cli(colcc, tmp_path, monkeypatch, capsys, "columnar", "count", "--host", "absent.example",
                        "-o", "json")
    assert code == 0 and json.loads(out) == {"count": 0}
