"""fetch: one at a time vs --batch byte for byte, coalescing, orders, the ledger, errors, --dry-run."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.fetch import file_bytes, record_file_name
from ccrawl.commoncrawl.records import CONTENT, location_from
from ccrawl.errors import CcrawlError, NothingMatched, UsageError
from ccrawl.ops.commoncrawl import cc_fetch, dry_run_line, fetch_results
from ccrawl.ops.context import OpContext
from ccrawl.output import render_to_string
from ccrawl.testing.fakecc import FakeCCServer


def _rows(fakecc: FakeCCServer, **kw: Any) -> list[dict[str, Any]]:
    return list(cc_fetch(ctx=OpContext.of(fakecc.client_options()), **kw))


def _shuffled(fakecc: FakeCCServer, seed: int = 7) -> list[dict[str, Any]]:
    caps = list(fakecc.site.captures)
    random.Random(seed).shuffle(caps)
    return caps


@pytest.mark.parametrize("content", CONTENT)
def test_batch_in_input_order_is_byte_for_byte_one_at_a_time(fakecc: FakeCCServer, content: str) -> None:
    caps = _shuffled(fakecc)
    one = _rows(fakecc, locations=caps, content=content)
    singles = len(fakecc.faults.requests(r"\.warc\.gz$"))
    batch = _rows(fakecc, locations=caps, content=content, batch=True, order="input")
    batched = len(fakecc.faults.requests(r"\.warc\.gz$")) - singles
    assert singles == len(caps)
    files = {c["filename"] for c in caps}
    assert batched == len(files)  # default gap: every file is one GET
    for fmt in ("jsonl", "raw") if content in ("body", "text", "markdown") else ("jsonl",):
        assert render_to_string(batch, fmt) == render_to_string(one, fmt)
    assert one  # something was really compared


def test_batch_in_file_order_matches_one_at_a_time_on_sorted_input(fakecc: FakeCCServer) -> None:
    caps = sorted(fakecc.site.captures, key=lambda c: (c["filename"], int(c["offset"])))
    one = _rows(fakecc, locations=caps)
    batch = _rows(fakecc, locations=list(reversed(caps)), batch=True, order="file")
    assert [r["body"] for r in batch] == [r["body"] for r in one]


def test_body_is_the_http_payload(fakecc: FakeCCServer) -> None:
    cap = next(c for c in fakecc.site.captures if c["status"] == "200")
    (row,) = _rows(fakecc, locations=[cap])
    assert row["url"] == cap["url"] and row["status"] == 200
    assert row["body"].startswith(b"<!DOCTYPE html>") and row["body"].rstrip().endswith(b"</html>")


def test_small_gap_and_max_span_split_groups(fakecc: FakeCCServer) -> None:
    caps = [c for c in fakecc.site.captures if c["filename"] == fakecc.site.captures[0]["filename"]]
    assert len(caps) >= 3
    _rows(fakecc, locations=caps, batch=True, gap=0)
    assert len(fakecc.faults.requests(r"\.warc\.gz$")) == len(caps)  # request+metadata records sit between
    fakecc.faults.clear()
    _rows(fakecc, locations=caps, batch=True, max_span=1)
    assert len(fakecc.faults.requests(r"\.warc\.gz$")) == len(caps)


def test_dry_run_reports_the_trade_and_fetches_nothing(fakecc: FakeCCServer) -> None:
    caps = fakecc.site.captures
    files = len({c["filename"] for c in caps})
    line = dry_run_line(caps)
    assert line.startswith(f"{len(caps)} locations in {files} requests, ")
    assert "x fewer than one at a time; " in line and line.endswith("x amplification")
    assert fakecc.faults.log == []


def test_ledger_resume_skips_what_is_done(fakecc: FakeCCServer, tmp_path: Path) -> None:
    ledger = tmp_path / "fetched.txt"
    caps = _shuffled(fakecc)
    first = caps[: len(caps) // 2]
    done = _rows(fakecc, locations=first, batch=True, ledger=str(ledger))
    lines = ledger.read_text().splitlines()
    assert sorted(lines) == sorted(f"{c['filename']}@{c['offset']}" for c in first)
    fakecc.faults.clear()
    rest = _rows(fakecc, locations=caps, batch=True, ledger=str(ledger), order="input")
    assert len(done) + len(rest) == len(caps)
    assert {r["offset"] for r in rest} == {int(c["offset"]) for c in caps[len(caps) // 2 :]}
    assert len(ledger.read_text().splitlines()) == len(caps)
    # A third run has nothing left to do, and says so by ending cleanly.
    assert _rows(fakecc, locations=caps, batch=True, ledger=str(ledger)) == []


def test_a_bad_location_is_named_and_the_rest_carry_on(fakecc: FakeCCServer) -> None:
    good = fakecc.site.captures[0]
    bad = {**good, "offset": str(int(good["offset"]) + 3)}  # not the start of a gzip member
    missing = {**good, "filename": "crawl-data/nope.warc.gz"}
    lines: list[str] = []
    for batch in (False, True):
        lines.clear()
        rows = list(cc_fetch(locations=[bad, good, missing, {"url": "x"}], batch=batch,
                             ctx=OpContext.of(fakecc.client_options(), notice=lines.append)))
        assert [r["url"] for r in rows] == [good["url"]]
        assert len(lines) == 3, lines
        assert any("nope.warc.gz" in line and "404" in line for line in lines)


def test_every_location_failing_is_exit_1_and_empty_input_exit_3(fakecc: FakeCCServer) -> None:
    missing = {**fakecc.site.captures[0], "filename": "crawl-data/nope.warc.gz"}
    with pytest.raises(CcrawlError, match="every location failed") as info:
        list(cc_fetch(locations=[missing], ctx=OpContext.of(fakecc.client_options(), notice=lambda m: None)))
    assert info.value.exit_code == 1
    with pytest.raises(NothingMatched):
        list(cc_fetch(locations=[], ctx=OpContext.of(fakecc.client_options())))


def test_a_503_group_is_retried_inside_the_batch(fakecc: FakeCCServer) -> None:
    fakecc.faults.add("status", path=r"\.warc\.gz$", times=2, status=503)
    caps = fakecc.site.captures[:5]
    assert len(_rows(fakecc, locations=caps, batch=True)) == 5


def test_bad_batch_flags_are_usage_errors(fakecc: FakeCCServer) -> None:
    for kw in ({"gap": -1}, {"max_span": 0}, {"order": "random"}, {"lookahead": 0}):
        with pytest.raises(UsageError):
            _rows(fakecc, locations=fakecc.site.captures[:1], batch=True, **kw)
    with pytest.raises(UsageError):
        _rows(fakecc, locations=fakecc.site.captures[:1], content="pdf")


def test_columnar_location_names_are_accepted() -> None:
    loc = location_from({"warc_filename": "f.warc.gz", "warc_record_offset": 10, "warc_record_length": 5})
    assert loc.triple == ("f.warc.gz", 10, 5) and loc.key == "f.warc.gz@10"


def test_record_files_are_named_by_warc_and_offset(fakecc: FakeCCServer) -> None:
    cap = next(c for c in fakecc.site.captures if c["status"] == "200")
    (result,) = list(fetch_results([cap], content="markdown", ctx=OpContext.of(fakecc.client_options())))
    name = record_file_name(result.location, "markdown", result.rows)
    stem = cap["filename"].rsplit("/", 1)[1].removesuffix(".warc.gz")
    assert name == f"{stem}-{cap['offset']}.md"
    assert file_bytes("markdown", result.rows).startswith(b"# ")


def test_a_server_that_says_slow_down_still_gets_every_record(fakecc: FakeCCServer) -> None:
    fakecc.faults.max_inflight = 1
    fakecc.faults.latency = 0.02
    caps = fakecc.site.captures
    rows = list(cc_fetch(locations=caps, batch=True, gap=0,
                         ctx=OpContext.of(fakecc.client_options(retries=8, backoff_max=0.1))))
    assert len(rows) == len(caps)
    assert any(r.status == 503 for r in fakecc.faults.log)  # the limit really bit


def test_source_s3_reads_the_same_records_through_the_s3_endpoint(fakecc: FakeCCServer) -> None:
    caps = fakecc.site.captures[:3]
    opts = fakecc.client_options(data_endpoint="http://127.0.0.1:9", source="s3")
    assert [r["url"] for r in cc_fetch(locations=caps, ctx=OpContext.of(opts))] == [c["url"] for c in caps]
