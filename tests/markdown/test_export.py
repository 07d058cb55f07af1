"""markdown export against the fake Common Crawl: schema, layout, engines, filters, locations, resume."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccrawl.cli.main import main
from ccrawl.markdown.schema import COLUMN_NAMES, provenance_of
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc import FakeCCServer
from tests.markdown.conftest import CRAWL, SHARDS, warc_path, wet_text

REPO = Path(__file__).resolve().parents[2]


def _export(out: Path, *args: str) -> int:
    return main(["-c", CRAWL, "markdown", "export", "--push=false", "--out", str(out), *args])


def _table(out: Path, shard: int = 0, name: str | None = None) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(out / "data" / f"crawl={CRAWL}" / (name or f"{shard:06d}.parquet"))


def _html_pages(shard: int) -> list[Any]:
    return [p for p in SHARDS[shard] if p.html]


def test_export_writes_the_seed_schema_and_layout_zstd_with_provenance(cc_env: dict[str, str], tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "md"
    assert _export(out, "--shards", "all") == 0
    files = sorted(p.relative_to(out).as_posix() for p in (out / "data").rglob("*.parquet"))
    assert files == [f"data/crawl={CRAWL}/000000.parquet", f"data/crawl={CRAWL}/000001.parquet"]
    table = _table(out, 0)
    assert tuple(table.column_names) == COLUMN_NAMES
    types = {f.name: str(f.type) for f in table.schema}
    assert types["crawl_date"] == "timestamp[ms, tz=UTC]" and types["simhash"] == "int64"
    assert types["language_confidence"] == "double" and types["html_length"] == "int64"
    meta = pq.ParquetFile(out / files[0]).metadata
    assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == {"ZSTD"}
    rows = table.to_pylist()
    pages = _html_pages(0)
    assert [r["url"] for r in rows] == [p.url for p in pages]  # the PDF is not HTML: skipped
    for row, page in zip(rows, pages, strict=True):
        assert row["html_length"] == len(page.body)
        assert row["markdown_length"] == len(row["markdown"].encode())
        assert row["extractor"] == "h2m@9"
        assert row["host"] == page.url.split("/")[2]
        assert row["warc_record_id"].startswith("<urn:uuid:") and row["doc_id"] in row["warc_record_id"]
        assert row["crawl_date"] is not None and row["crawl_date"].year == 2099
    by_url = {r["url"]: r for r in rows}
    assert by_url["https://vi.example.vn/ha-noi"]["language"] == "vie"
    assert "Hà Nội" in by_url["https://vi.example.vn/ha-noi"]["markdown"]
    short = by_url["https://short.example.com/"]
    assert short["simhash"] is None and short["markdown_length"] < 512  # too short to fingerprint
    assert _table(out, 1).to_pylist()[2]["simhash"] is not None  # the doubled English page
    prov = provenance_of(out / files[0])
    assert prov["ccrawl.extractor"] == "h2m@9" and prov["ccrawl.crawl"] == CRAWL
    assert prov["ccrawl.canon"] == "canon/1" and prov["ccrawl.source"] == warc_path(0)
    assert "markdown export" in prov["ccrawl.command"]
    captured = capsys.readouterr()
    assert "markdown export: 2 of 2 shards written, 0 already done, 0 failed; 7 rows" in captured.err
    # how far it got, as shards end (the last one always): done/total, percentage, rate, ETA
    assert re.search(r"markdown export: 2/2 shards \(100\.0%\), [0-9.]+/min, ETA 0s, \S+ elapsed", captured.err)
    assert "language: detected " in captured.err and "vie=2" in captured.err


@pytest.mark.parametrize(("args", "message"), [
    (["--source-kind", "wet", "--extractor", "h2m"],
     "Extractor h2m reads warc shards, so it cannot be used with --source-kind wet."),
    (["--source-kind", "warc", "--extractor", "wet"],
     "Extractor wet reads wet shards, so it cannot be used with --source-kind warc."),
    (["--extractor", "readability", "--source-kind", "wet"],
     "Extractor readability reads warc shards, so it cannot be used with --source-kind wet."),
    (["--extractor", "bogus"], "--extractor 'bogus'"),
    (["--lang", "vietnamese"], "ISO 639-3"),
    (["--min-lang-confidence", "1.5"], "--min-lang-confidence"),
])
def test_incompatible_flags_are_usage_errors(cc_env: dict[str, str], tmp_path: Path, args: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert _export(tmp_path / "md", "--shards", "0", *args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "md" / "data").exists()


def test_locations_with_the_wet_extractor_and_missing_repo_are_usage_errors(
        cc_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locs = tmp_path / "l.jsonl"
    locs.write_text("")
    assert _export(tmp_path / "md", "--locations", str(locs), "--extractor", "wet") == 2
    assert "WET files have no record offsets" in capsys.readouterr().err
    assert main(["-c", CRAWL, "markdown", "export", "--shards", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--repo" in capsys.readouterr().err
    assert _export(tmp_path / "md", "--shards", "5") == 2
    assert "shard 5 does not exist, the manifest lists 2" in capsys.readouterr().err


def test_wet_engine_passes_the_wet_text_through_and_picks_the_wet_manifest(cc_env: dict[str, str],
                                                                         tmp_path: Path) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "0", "--extractor", "wet") == 0  # --source-kind defaults to wet
    rows = _table(out).to_pylist()
    pages = _html_pages(0)
    assert [r["markdown"] for r in rows] == [wet_text(p) for p in pages]
    assert {r["extractor"] for r in rows} == {"wet@9"}
    assert provenance_of(out / "data" / f"crawl={CRAWL}" / "000000.parquet")["ccrawl.source"] == warc_path(0, "wet")


@pytest.mark.parametrize("engine", ["readability", "raw"])
def test_other_engines_label_their_rows(cc_env: dict[str, str], tmp_path: Path, engine: str) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "1", "--extractor", engine) == 0
    rows = _table(out, 1).to_pylist()
    assert {r["extractor"] for r in rows} == {f"{engine}@9"} and len(rows) == 3
    if engine == "raw":  # raw keeps the navigation the others drop
        assert all("Home" in r["markdown"] for r in rows)


def test_lang_filter_keeps_one_language_drops_unknown_and_prints_the_mix(
        cc_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "all", "--lang", "vie") == 0
    urls = sorted(r["url"] for s in (0, 1) for r in _table(out, s).to_pylist())
    assert urls == ["https://vi.example.vn/ha-noi", "https://vi.example.vn/mua-thu"]
    err = capsys.readouterr().err
    assert "language: --lang vie kept 2 of 7 documents, dropped 5 (71.4%)" in err
    assert "unknown=1" in err and "eng=3" in err and "deu=1" in err


def test_lang_threshold_and_unknown() -> None:
    from ccrawl.markdown.convert import ConvertedDoc
    from ccrawl.markdown.export import passes_lang

    doc = ConvertedDoc("d", "u", "h", None, "r", 1, language="vie", language_confidence=0.85)
    assert passes_lang(doc, "vie", 0.8) and passes_lang(doc, "vie", 0.85)
    assert not passes_lang(doc, "vie", 0.9) and not passes_lang(doc, "eng", 0.0)
    assert not passes_lang(ConvertedDoc("d", "u", "h", None, "r", 1), "vie", 0.0)  # unknown is never kept


def test_dedup_digest_skips_a_payload_seen_before_in_the_shard(cc_env: dict[str, str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    plain, dedup = tmp_path / "a", tmp_path / "b"
    assert _export(plain, "--shards", "0") == 0
    assert _export(dedup, "--shards", "0", "--dedup-digest") == 0
    urls = [r["url"] for r in _table(dedup).to_pylist()]
    assert "https://en.example.com/library-copy" not in urls and "https://en.example.com/library" in urls
    assert _table(plain).num_rows - _table(dedup).num_rows == 1
    assert "1 duplicate digests skipped" in capsys.readouterr().err


def test_limit_caps_documents_per_shard_and_a_full_run_rebuilds(cc_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "all", "--limit", "2") == 0
    assert [_table(out, s).num_rows for s in (0, 1)] == [2, 2]
    assert _export(out, "--shards", "all") == 0  # entries made under --limit do not count as done
    assert [_table(out, s).num_rows for s in (0, 1)] == [4, 3]


def test_rerun_resumes_from_the_ledger(cc_env: dict[str, str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str], fakecc: FakeCCServer) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "0") == 0
    assert _export(out, "--shards", "0-1") == 0
    err = capsys.readouterr().err
    assert "1 of 2 shards written, 1 already done" in err
    keys = [json.loads(line)["key"] for line in (out / ".committed").read_text().splitlines()]
    assert keys == [f"crawl={CRAWL}/000000", f"crawl={CRAWL}/000001"]
    warc_gets = [r for r in fakecc.faults.requests(r"/warc/.*\.warc\.gz$")]
    assert len(warc_gets) == 2  # shard 0 was not downloaded again
    # Another engine into the same --out would mix two corpora at the same paths: refused.
    assert _export(out, "--shards", "0", "--extractor", "raw") == 2
    assert "was built with h2m@9, not raw@9" in capsys.readouterr().err


def test_parallel_and_worker_pool_give_the_same_rows(cc_env: dict[str, str], tmp_path: Path) -> None:
    serial, pooled = tmp_path / "a", tmp_path / "b"
    assert _export(serial, "--shards", "all") == 0
    assert _export(pooled, "--shards", "all", "--parallel", "2", "--workers", "2") == 0
    threads = tmp_path / "c"
    assert _export(threads, "--shards", "all", "--parallel", "2") == 0  # two shards, one inline engine
    for s in (0, 1):
        assert _table(serial, s).to_pylist() == _table(pooled, s).to_pylist() == _table(threads, s).to_pylist()


def test_journal_records_the_run(cc_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "md"
    assert _export(out, "--shards", "all") == 0
    events = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()]
    names = [e["event"] for e in events]
    assert names[0] == "start" and names[-1] == "end" and names.count("unit_written") == 2
    assert events[-1]["rows"] == 7 and events[-1]["written"] == 2
    journal = tmp_path / "elsewhere.jsonl"
    assert main(["-c", CRAWL, "--journal", str(journal), "markdown", "export", "--push=false", "--out",
                 str(tmp_path / "md2"), "--shards", "0"]) == 0
    assert json.loads(journal.read_text().splitlines()[-1])["event"] == "end"


def _locations(fakecc: FakeCCServer, shard: int) -> list[dict[str, Any]]:
    from ccrawl.warc.reader import iter_records

    path = Path(fakecc.site.root) / warc_path(shard)
    return [{"filename": warc_path(shard), "offset": r.offset, "length": r.length, "url": r.url}
            for r in iter_records(path) if r.warc_type == "response"]


def test_locations_file_parts_coalesced_reads_and_unfetchable_skipped(
        cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer, capsys: pytest.CaptureFixture[str]) -> None:
    locs = _locations(fakecc, 0) + _locations(fakecc, 1)
    bad = [{"filename": warc_path(0), "offset": 3, "length": 50},  # not where a record starts
           {"filename": f"crawl-data/{CRAWL}/segments/x/warc/missing.warc.gz", "offset": 0, "length": 10}]
    stream = tmp_path / "locs.jsonl"
    stream.write_text("".join(json.dumps(x) + "\n" for x in [*locs, *bad]) + "not json\n")
    out = tmp_path / "md"
    assert _export(out, "--locations", str(stream), "--part-size", "5") == 0
    parts = sorted(p.name for p in (out / "data" / f"crawl={CRAWL}").iterdir())
    # 11 good lines in parts of 5: part 2 holds the two bad locations and nothing else of this crawl
    assert parts[:2] == ["part-000000.parquet", "part-000001.parquet"]
    rows = [r for name in parts for r in _table(out, name=name).to_pylist()]
    expected = [p.url for s in (0, 1) for p in _html_pages(s)]
    assert [r["url"] for r in rows] == expected
    err = capsys.readouterr().err
    assert "2 locations unfetchable" in err and "not valid JSON" in err
    gets = fakecc.faults.requests(r"/warc/CC-MAIN-2099.*\.warc\.gz$")
    assert len(gets) <= 4  # part 0 and part 1 each cost one or two coalesced GETs, not one per record
    assert all(r.range for r in gets)


def test_gap_and_max_span_shape_the_ranged_reads(cc_env: dict[str, str], tmp_path: Path,
                                                  fakecc: FakeCCServer) -> None:
    locs = _locations(fakecc, 0)
    stream = tmp_path / "locs.jsonl"
    stream.write_text("".join(json.dumps(x) + "\n" for x in locs))
    before = len(fakecc.faults.requests(r"/warc/CC-MAIN-2099.*\.warc\.gz$"))
    assert _export(tmp_path / "a", "--locations", str(stream)) == 0
    coalesced = len(fakecc.faults.requests(r"/warc/CC-MAIN-2099.*\.warc\.gz$")) - before
    assert _export(tmp_path / "b", "--locations", str(stream), "--gap", "0", "--max-span", "1") == 0
    single = len(fakecc.faults.requests(r"/warc/CC-MAIN-2099.*\.warc\.gz$")) - before - coalesced
    assert coalesced == 1 and single == len(locs)  # one GET for the file, or one per record
    assert _table(tmp_path / "a", name="part-000000.parquet").to_pylist() == \
        _table(tmp_path / "b", name="part-000000.parquet").to_pylist()
    assert _export(tmp_path / "c", "--locations", str(stream), "--gap", "-1") == 2


def test_ledger_flag_moves_the_ledger_and_the_journal(cc_env: dict[str, str], tmp_path: Path) -> None:
    out, ledger = tmp_path / "md", tmp_path / "state" / "done.jsonl"
    assert _export(out, "--shards", "0", "--ledger", str(ledger)) == 0
    assert json.loads(ledger.read_text())["key"] == f"crawl={CRAWL}/000000"
    assert (tmp_path / "state" / "run.jsonl").exists() and not (out / ".committed").exists()
    assert _export(out, "--shards", "0", "--ledger", str(ledger)) == 0
    assert len(ledger.read_text().splitlines()) == 1


def test_empty_location_stream_exits_3(cc_env: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "ccrawl", "markdown", "export", "--locations", "-", "--push=false",
                           "--out", str(tmp_path / "md")], input="", capture_output=True, text=True, env=cc_env,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 3 and "held no locations" in proc.stderr and "Traceback" not in proc.stderr


def test_locations_from_stdin_in_a_subprocess(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer) -> None:
    locs = "".join(json.dumps(x) + "\n" for x in _locations(fakecc, 1))
    out = tmp_path / "md"
    proc = subprocess.run([sys.executable, "-m", "ccrawl", "markdown", "export", "--locations", "-", "--push=false",
                           "--out", str(out), "--dedup-digest", "--lang", "eng", "--min-lang-confidence", "0.5"],
                          input=locs, capture_output=True, text=True, env=cc_env, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = _table(out, name="part-000000.parquet").to_pylist()
    assert [r["url"] for r in rows] == ["https://en.example.com/more"]
    assert "language: --lang eng kept 1 of 3 documents" in proc.stderr


def test_datasets_and_duckdb_load_the_export(cc_env: dict[str, str], tmp_path: Path) -> None:
    import duckdb
    from datasets import load_dataset

    out = tmp_path / "md"
    assert _export(out, "--shards", "all") == 0
    ds = load_dataset("parquet", data_files=str(out / "data" / "*" / "*.parquet"), split="train",
                      cache_dir=str(tmp_path / "hf-cache"))
    assert ds.num_rows == 7 and set(ds.column_names) == set(COLUMN_NAMES)
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    glob = str(out / "data" / "*" / "*.parquet")
    got = con.execute(f"SELECT language, count(*) FROM read_parquet('{glob}', hive_partitioning=true) "
                      "WHERE crawl = ? GROUP BY 1 ORDER BY 1", [CRAWL]).fetchall()
    assert dict(got)["vie"] == 2 and sum(n for _, n in got) == 7


def test_the_export_operation(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer) -> None:
    from ccrawl import ops

    locs = _locations(fakecc, 0)
    records = list(ops.get("markdown.export")(out=str(tmp_path / "md"), locations=locs, part_size=100,
                                              ctx=OpContext.of(fakecc.client_options())))
    assert [r["rows"] for r in records] == [4] and records[0]["file"].endswith("part-000000.parquet")


def test_the_summary_goes_to_the_contexts_info_else_to_its_notice(cc_env: dict[str, str], tmp_path: Path,
                                                                 fakecc: FakeCCServer) -> None:
    from ccrawl import ops

    def summaries(lines: list[str]) -> list[str]:  # the progress line and the closing summary
        return [line for line in lines if line.startswith("markdown export: ")]

    notices: list[str] = []
    infos: list[str] = []
    ctx = OpContext.of(fakecc.client_options(), notice=notices.append, info=infos.append)
    list(ops.get("markdown.export")(out=str(tmp_path / "a"), locations=_locations(fakecc, 0), ctx=ctx))
    assert len(summaries(infos)) == 2 and summaries(notices) == []
    assert "1/1 shards (100.0%)" in summaries(infos)[0] and " parts written, " in summaries(infos)[1]
    # a network front end hands every line to its one notice (a frame to the client)
    framed: list[str] = []
    list(ops.get("markdown.export")(out=str(tmp_path / "b"), locations=_locations(fakecc, 0),
                                    ctx=ctx.with_notice(framed.append)))
    assert len(summaries(framed)) == 2 and len(summaries(infos)) == 2


def test_quiet_silences_the_summary_but_not_warnings(cc_env: dict[str, str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _export(tmp_path / "loud", "--shards", "1") == 0
    assert "markdown export: " in capsys.readouterr().err
    assert main(["-q", "-c", CRAWL, "markdown", "export", "--shards", "1", "--push=false",
                 "--out", str(tmp_path / "quiet")]) == 0
    assert capsys.readouterr().err == ""


def test_links_engine_is_accepted_and_labels_its_rows(cc_env: dict[str, str], tmp_path: Path) -> None:
    # The fake crawl's articles hold no links once pruned, so the Markdown is the same; how a
    # link renders is tested on the engine (tests/extract/test_precision_rules.py).
    assert _export(tmp_path / "keep", "--shards", "1") == 0
    assert _export(tmp_path / "text", "--shards", "1", "--extractor", "h2m+links") == 0
    keep, text = _table(tmp_path / "keep", 1).to_pylist(), _table(tmp_path / "text", 1).to_pylist()
    assert {r["extractor"] for r in text} == {"h2m@9+links"} and len(text) == len(keep) == 3
    assert [(r["doc_id"], r["markdown"]) for r in text] == [(r["doc_id"], r["markdown"]) for r in keep]


def test_a_cli_export_never_imports_pandas(cc_env: dict[str, str], tmp_path: Path) -> None:
    # pa.array() on a Python list imports pandas on its first call (0.3-0.9 s of CPU): the export's
    # table is built from buffers instead, so a one-shard run must finish without pandas loaded.
    code = ("import sys; from ccrawl.cli.main import main; "
            f"rc = main(['-c', {CRAWL!r}, 'markdown', 'export', '--shards', 'all', '--push=false', "
            f"'--out', {str(tmp_path / 'md')!r}]); "
            "print(rc, 'pandas' in sys.modules, 'pyarrow' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cc_env, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].split() == ["0", "False", "True"]
    assert _table(tmp_path / "md", 1).num_rows > 0


def test_one_process_export_converts_the_shard_as_it_arrives_without_writing_it(
        cc_env: dict[str, str], fakecc: FakeCCServer, tmp_path: Path) -> None:
    streamed, pooled = tmp_path / "a", tmp_path / "b"
    fakecc.faults.add("truncate", path=r"/warc/.*-00000\.warc\.gz$", times=1)  # a drop part way: resumed
    assert _export(streamed, "--shards", "all") == 0
    assert not (streamed / ".download").exists()  # nothing of the shard touched the disk
    ranged = [r.range for r in fakecc.faults.requests(r"/warc/.*-00000\.warc\.gz$")]
    assert ranged[0] is None and ranged[1] and ranged[1].startswith("bytes=")
    assert _export(pooled, "--shards", "all", "--workers", "2") == 0  # downloaded, then read in parts
    for s in (0, 1):
        assert _table(streamed, s).to_pylist() == _table(pooled, s).to_pylist()
    events = [json.loads(line) for line in (streamed / "run.jsonl").read_text().splitlines()]
    assert all(e["download_seconds"] > 0 for e in events if e["event"] == "unit_written")
