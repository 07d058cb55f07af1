"""End-to-end Parquet runs against the synthetic web: rows, failures, extraction, sealing, provenance."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccrawl.errors import UsageError
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.schema import CAPTURE_SCHEMA
from ccrawl.testing.synthweb import SynthWeb

FAST = {"delay": 0, "workers": 16, "timeout": 5, "tick_seconds": 0.2}


def mixed_urls(web: SynthWeb) -> list[str]:
    cat = web.catalog()
    urls = web.page_urls()[:60]
    for kind in ("unknown-host", "refused", "non-html", "status", "encoding", "redirect-chain"):
        urls += cat[kind]
    return urls


def test_parquet_run_writes_one_row_per_url_with_failures_as_rows(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = mixed_urls(web)
    wl = write_worklist(tmp_path / "wl", urls, parts=3)
    out, state, journal = tmp_path / "out", tmp_path / "state.json", tmp_path / "journal.jsonl"
    summary = run_recrawl(str(wl), column="url", out=str(out), state=str(state), writers=2,
                          shard_size=60_000, resolve=web.resolve, journal=str(journal), **FAST)
    assert summary.done and summary.stopped_by == "end"
    assert summary.fetched == len(urls)
    t = read_captures(out).to_pylist()
    assert Counter(r["url"] for r in t) == Counter(urls), "every URL exactly once"
    assert not list(out.glob("*.tmp"))
    assert len(summary.files) >= 3, f"a small --shard-size seals several times: {len(summary.files)} files"
    by_url = {r["url"]: r for r in t}
    page = by_url[urls[0]]
    assert page["status"] == 200 and page["error"] == "" and page["body"] and page["digest"]
    assert page["extractor"].startswith("h2m@") and page["markdown"] and page["title"]
    assert page["markdown_length"] == len(page["markdown"].encode()) and page["word_count"] > 0
    assert json.loads(page["resp_headers"]) and json.loads(page["req_headers"])
    dns = by_url["http://no-such-host.invalid/"]
    assert dns["status"] == 0 and dns["error"] == "dns" and dns["body"] == b"" and dns["digest"] == ""
    assert json.loads(dns["meta_json"])["error_detail"]
    refused = [r for r in t if r["error"] == "refused"]
    assert len(refused) == 1 and refused[0]["resp_headers"] == ""
    pdf = next(r for r in t if r["url"].endswith("/fault/pdf"))
    assert pdf["status"] == 200 and pdf["body"] and pdf["extractor"] == ""
    gz = next(r for r in t if r["url"].endswith("/fault/encoding/gzip"))
    assert gz["body"][:2] == b"\x1f\x8b", "the body is stored as served, content coding kept"
    assert gz["text"], "the rendered copy was decoded"
    cp = json.loads(state.read_text())
    assert cp["done"] and cp["fetched"] == len(urls) and cp["part"] == 3 and cp["row"] == 0
    events = [json.loads(line)["event"] for line in journal.read_text().splitlines()]
    assert events[0] == "start" and events[-1] == "end" and "shard_sealed" in events and "checkpoint" in events


def test_every_shard_carries_provenance_and_the_exact_schema(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:10], parts=1)
    out = tmp_path / "out"
    run_recrawl(str(wl), column="url", out=str(out), resolve=web.resolve, command_line="ccrawl recrawl run x",
                prefix="cap", **FAST)
    files = list(out.glob("cap-*.parquet"))
    assert len(files) == 1
    schema = pq.read_schema(files[0])
    assert schema.remove_metadata() == CAPTURE_SCHEMA
    meta = {k.decode(): v.decode() for k, v in schema.metadata.items() if k.startswith(b"ccrawl.")}
    assert meta["ccrawl.canon"] == "canon/1" and meta["ccrawl.command"] == "ccrawl recrawl run x"
    assert meta["ccrawl.extractor"].startswith("h2m@") and meta["ccrawl.version"]
    assert pq.ParquetFile(files[0]).metadata.row_group(0).column(0).compression == "ZSTD"


def test_max_pages_is_exact_and_resume_finishes_without_gaps_or_duplicates(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()[:45]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out, state = tmp_path / "out", tmp_path / "s.json"
    first = run_recrawl(str(wl), column="url", out=str(out), state=str(state), max_pages=17, resolve=web.resolve,
                        **FAST)
    assert first.stopped_by == "max_pages" and not first.done and first.fetched == 17
    assert read_captures(out).num_rows == 17
    second = run_recrawl(str(wl), column="url", out=str(out), state=str(state), resolve=web.resolve, **FAST)
    assert second.done and second.fetched == 28
    assert Counter(read_captures(out).column("url").to_pylist()) == Counter(urls)
    third = run_recrawl(str(wl), column="url", out=str(out), state=str(state), resolve=web.resolve, **FAST)
    assert third.stopped_by == "nothing" and third.fetched == 0


def test_shards_split_the_list_disjointly_and_count_what_they_drop(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    from ccrawl.url.domain import shard_of

    urls = web.page_urls()[:48]
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    seen = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        s = run_recrawl(str(wl), column="url", out=str(out), shard=i, shards=2, resolve=web.resolve, **FAST)
        got = read_captures(out).column("url").to_pylist()
        assert all(shard_of(u, 2) == i for u in got)
        assert s.rows_read == len(urls) and s.dropped_not_owned == len(urls) - len(got)
        seen += got
    assert sorted(seen) == sorted(urls)


def test_checkpoint_of_another_shard_or_list_is_refused(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:4], parts=1)
    state = tmp_path / "s.json"
    run_recrawl(str(wl), column="url", state=str(state), resolve=web.resolve, shard=0, shards=2, **FAST)
    with pytest.raises(UsageError, match="--shard 0 --shards 2"):
        run_recrawl(str(wl), column="url", state=str(state), resolve=web.resolve, shard=1, shards=2, **FAST)
    other = write_worklist(tmp_path / "wl2", web.page_urls()[4:9], parts=1)
    with pytest.raises(UsageError, match="another work list"):
        run_recrawl(str(other), column="url", state=str(state), resolve=web.resolve, shard=0, shards=2, **FAST)
    with pytest.raises(UsageError, match=r"--shard must be in 0\.\.1"):
        run_recrawl(str(wl), column="url", shard=2, shards=2)


def test_conditional_refetch_stores_304_as_unchanged_row_without_body(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    urls = web.page_urls()[:8]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    first = tmp_path / "pass1"
    run_recrawl(str(wl), column="url", out=str(first), resolve=web.resolve, **FAST)
    assert all(r["etag"] for r in read_captures(first).to_pylist())
    second = tmp_path / "pass2"
    s = run_recrawl(str(wl), column="url", out=str(second), previous=str(first), resolve=web.resolve, **FAST)
    rows = read_captures(second).to_pylist()
    assert s.not_modified == len(urls)
    assert all(r["status"] == 304 and r["unchanged"] and r["body"] == b"" and r["extractor"] == "" for r in rows)


def test_run_without_out_fetches_and_writes_nothing(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:6], parts=1)
    s = run_recrawl(str(wl), column="url", resolve=web.resolve, no_extract=True, **FAST)
    assert s.fetched == 6 and s.ok == 6 and s.files == [] and s.extract_shares == {}
    assert "robots off" in "\n".join(s.lines())


def test_every_fault_of_the_synthetic_web_becomes_exactly_one_classified_row(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    cat = web.catalog()
    urls = [u for kind, us in cat.items() if kind not in ("page", "home") for u in us]
    urls = list(dict.fromkeys(urls))  # a URL may be listed under two kinds
    wl = write_worklist(tmp_path / "wl", urls, parts=2)
    out = tmp_path / "out"
    s = run_recrawl(str(wl), column="url", out=str(out), delay=0, workers=32, timeout=2, robots_timeout=1,
                    resolve=web.resolve, max_body=2_000_000, robots=True)
    rows = read_captures(out).to_pylist()
    assert Counter(r["url"] for r in rows) == Counter(urls)
    assert {r["error"] for r in rows} <= {"", "dns", "timeout", "refused", "tls", "skip", "other"}
    by = {r["url"]: r for r in rows}
    big = by[cat["big-body"][0]]
    assert big["body_length"] == 2_000_000 and json.loads(big["meta_json"])["body_truncated"]
    assert by[cat["slow-ttfb"][0]]["error"] == "timeout"
    assert by[cat["refused"][0]]["error"] == "refused"
    assert by[cat["robots-disallow"][0]]["error"] == "skip"
    assert all(r["status"] == 0 and r["body"] == b"" for r in rows if r["error"])
    assert s.fetched == len(urls) and sum(s.errors.values()) == s.failed
