"""Run options: robots on, progress and metrics, routing a host to one fetch process, queue budget."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ccrawl.errors import UsageError
from ccrawl.recrawl import run_recrawl
from ccrawl.recrawl.extractproc import _TitleTextEngine, render_row
from ccrawl.recrawl.feeder import route
from ccrawl.recrawl.messages import CaptureRow, RowHeader
from ccrawl.recrawl.params import MB, RunParams
from ccrawl.recrawl.pipeline import ring_sizes
from ccrawl.recrawl.telemetry import Telemetry
from ccrawl.testing.synthweb import SynthWeb


def test_robots_on_turns_disallowed_urls_into_skip_rows(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, read_captures: Any
) -> None:
    cat = web.catalog()
    urls = cat["robots-disallow"] + web.page_urls()[:3]
    wl = write_worklist(tmp_path / "wl", urls, parts=1)
    out = tmp_path / "out"
    s = run_recrawl(str(wl), column="url", out=str(out), robots=True, delay=0, workers=8, timeout=5,
                    robots_timeout=3, resolve=web.resolve)
    rows = {r["url"]: r for r in read_captures(out).to_pylist()}
    assert all(rows[u]["error"] == "skip" and rows[u]["status"] == 0 for u in cat["robots-disallow"])
    assert all(rows[u]["status"] == 200 for u in web.page_urls()[:3])
    assert s.robots["enabled"] and s.robots["disallowed_urls"] == 2
    assert any(line.startswith("robots: ") for line in s.lines())


def test_json_progress_ticks_go_to_stderr(
    web: SynthWeb, tmp_path: Path, write_worklist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:30], parts=1)
    run_recrawl(str(wl), column="url", delay=0.3, workers=8, resolve=web.resolve, progress="json",
                tick_seconds=0.2)
    err = capsys.readouterr().err.splitlines()
    ticks = [json.loads(line) for line in err if line.startswith("{")]
    assert ticks and all(t["event"] == "tick" and "queue_bytes" in t and "row" in t for t in ticks)


def test_metrics_are_served_for_prometheus(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tel = Telemetry(metrics_addr=f"127.0.0.1:{port}", journal=str(tmp_path / "j.jsonl"))
    try:
        tel.tick(fetched=5, durable=4, failed=1, bytes=100, part=0, row=9, queue_bytes=0, files=1)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        tel.close()
    assert "ccrawl_recrawl_rows 4.0" in body and "ccrawl_recrawl_row 9.0" in body
    assert json.loads((tmp_path / "j.jsonl").read_text())["event"] == "tick"


def test_every_url_of_a_registered_domain_goes_to_the_same_fetch_process() -> None:
    urls = [f"https://{sub}.example{i}.co.uk/p/{n}" for i in range(40) for sub in ("a", "www") for n in range(3)]
    by_domain: dict[str, set[int]] = {}
    for u in urls:
        by_domain.setdefault(u.split(".", 1)[1].split("/")[0], set()).add(route(u, 3))
    assert all(len(v) == 1 for v in by_domain.values())
    assert {next(iter(v)) for v in by_domain.values()} == {0, 1, 2}, "domains spread over all processes"


def test_queue_budget_is_split_across_stages_and_rings_but_holds_one_largest_row() -> None:
    p = RunParams(source="x", queue_mb=1024, extractors=2, writers=4, workers=16).validate()
    x_ring, w_ring, bound = ring_sizes(p)
    assert x_ring == 256 * MB and w_ring == 128 * MB and bound == 1024 * MB
    small = RunParams(source="x", queue_mb=8, extractors=1, workers=16).validate()
    x_ring, w_ring, bound = ring_sizes(small)
    assert x_ring >= 14 * MB and bound == x_ring + w_ring
    warc = RunParams(source="x", queue_mb=512, format="warc", writers=2, workers=16).validate()
    assert ring_sizes(warc) == (0, 256 * MB, 512 * MB)


def test_fallback_engine_renders_title_and_text_and_leaves_non_html_alone() -> None:
    base = {"error": "", "unchanged": False, "content_type": "text/html", "url": "http://a.test/",
            "final_url": "", "meta_json": "{}"}
    row = CaptureRow(RowHeader(1), dict(base))
    render_row(_TitleTextEngine(), row, b"<html><title>T</title><body><p>one two</p><script>x</script></body>")
    meta = row.columns
    assert meta["title"] == "T" and meta["text"] == "one two" and meta["extractor"] == "selectolax-text@1"
    pdf = CaptureRow(RowHeader(2), {**base, "content_type": "application/pdf"})
    render_row(_TitleTextEngine(), pdf, b"%PDF-1.4")
    assert pdf.columns == {**base, "content_type": "application/pdf"}, "a non-HTML row is not rendered"
    bad = CaptureRow(RowHeader(3, content_encoding="gzip"), dict(base))
    render_row(_TitleTextEngine(), bad, b"not gzip")
    assert "extract_error" in json.loads(bad.columns["meta_json"])


@pytest.mark.parametrize(("kwargs", "flag"), [
    ({"format": "arc"}, "--format"), ({"workers": 0}, "--workers"), ({"shards": 0}, "--shards"),
    ({"prefix": "a/b"}, "--prefix"), ({"progress": "loud"}, "--progress"), ({"no_such_flag": 1}, "no_such_flag"),
])
def test_bad_values_are_usage_errors_naming_the_flag(kwargs: dict[str, Any], flag: str) -> None:
    with pytest.raises(UsageError, match=flag):
        run_recrawl("nowhere", **kwargs)


def test_work_list_from_a_hub_release_through_the_real_client(
    web: SynthWeb, tmp_path: Path, read_captures: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccrawl.hub.repo import Add
    from ccrawl.testing.fakehub import FakeHub

    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    urls = web.page_urls()[:9]
    with FakeHub(tmp_path / "hub") as hub:
        repo = hub.local_repo("open-index/wl")
        repo.create()
        adds = []
        for rel, chunk in (("data/2026-01", urls[:2]), ("data/2026-05", urls)):
            for i in range(2):
                buf = io.BytesIO()
                pq.write_table(pa.table({"url": chunk[i::2]}), buf, row_group_size=2)
                adds.append(Add(f"{rel}/part-{i:05d}.parquet", buf.getvalue()))
        repo.commit(adds, message="two releases")
        out, state = tmp_path / "out", tmp_path / "s.json"
        s = run_recrawl("open-index/wl", column="urls", hub="hf", hub_endpoint=hub.url, out=str(out),
                        state=str(state), delay=0, workers=8, resolve=web.resolve)
    assert s.done and s.fetched == len(urls), "the newest release is the one walked"
    assert sorted(read_captures(out).column("url").to_pylist()) == sorted(urls)
    assert json.loads(state.read_text())["worklist"]["source"] == "hub:open-index/wl/data/2026-05"


def test_profile_dir_writes_cpu_and_heap_profiles_for_every_process(
    web: SynthWeb, tmp_path: Path, write_worklist: Any
) -> None:
    wl = write_worklist(tmp_path / "wl", web.page_urls()[:20], parts=1)
    prof = tmp_path / "prof"
    run_recrawl(str(wl), column="url", out=str(tmp_path / "out"), delay=0, workers=8, resolve=web.resolve,
                profile_dir=str(prof), profile_name="base")
    manifest = json.loads((prof / "base.manifest.json").read_text())
    roles = {r["role"] for r in manifest["roles"]}
    assert {"feeder", "fetch-0", "write-0", "extract-0"} <= roles
    for role in ("feeder", "fetch-0", "write-0", "extract-0"):
        assert (prof / f"base.{role}.pb.gz").stat().st_size > 0
        assert (prof / f"base.{role}.memray").stat().st_size > 0
