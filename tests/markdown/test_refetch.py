"""markdown refetch: a shard's URLs fetched live from the synthetic web through the recrawl engine."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccrawl.cli.main import main
from ccrawl.markdown.export import ExportOptions
from ccrawl.markdown.refetch import Refetcher, RefetchOptions
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.synthweb import SynthWeb, SynthWebThread
from tests.markdown.conftest import CRAWL

REFETCH_CRAWL = "CC-MAIN-2099-10"


@pytest.fixture(scope="module")
def web() -> Iterator[SynthWeb]:
    with SynthWebThread(hosts=3, pages=4, page_bytes=3000) as w:
        yield w


def _shard(root: Path, urls: list[str]) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    for url in [*urls, urls[0]]:  # the first URL captured twice: fetched once
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(b"<p>old</p>"),
                                                      http_headers=headers))
    rel = f"crawl-data/{REFETCH_CRAWL}/segments/1/warc/CC-MAIN-r-00000.warc.gz"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(buf.getvalue())
    (root / f"crawl-data/{REFETCH_CRAWL}/warc.paths.gz").write_bytes(gzip.compress(rel.encode()))


def test_refetch_fetches_every_url_live_and_keeps_failures_as_rows(
        cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer, web: SynthWeb) -> None:
    import pyarrow.parquet as pq

    pages = web.page_urls()[:4]
    dead = web.catalog()["unknown-host"][0]
    _shard(Path(fakecc.site.root), [*pages, dead])
    out = tmp_path / "md"
    opts = ExportOptions(out=out, crawl=REFETCH_CRAWL, shards="0", push=False, client_options=fakecc.client_options(),
                         command_line="test")
    refetcher = Refetcher(opts, RefetchOptions(fetch_workers=8, delay=0.0, timeout=5.0, resolve=web.resolve))
    records = list(refetcher.run())
    assert [r["file"] for r in records] == [f"data/crawl={REFETCH_CRAWL}/000000.parquet"]
    table = pq.read_table(out / records[0]["file"])
    names = table.column_names
    assert names[:2] == ["doc_id", "crawl_date"] and "body" not in names
    assert {"url", "status", "error", "markdown", "language", "simhash", "extractor", "fetched_at"} <= set(names)
    rows = {r["url"]: r for r in table.to_pylist()}
    assert sorted(rows) == sorted([*pages, dead])  # every URL once, the failure included
    assert rows[dead]["status"] == 0 and rows[dead]["error"] == "dns"
    page = rows[pages[0]]
    assert page["status"] == 200 and page["markdown"] and page["extractor"] == "h2m@9" and page["doc_id"]
    assert "old" not in page["markdown"]  # the live page, not the archived payload
    lines = refetcher.phase_lines()
    assert lines[0].startswith("phase totals: download ") and "5 URLs fetched" in lines[0]
    assert lines[1] == "failures: 1 of 5 fetches (dns=1)"
    assert (out / ".warc-cache").exists()  # kept for the next run
    again = Refetcher(opts, RefetchOptions(resolve=web.resolve))
    assert list(again.run()) == [] and again.stats.already == 1


def test_refetch_fetch_only_and_usage_errors(cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer,
                                             web: SynthWeb, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    _shard(Path(fakecc.site.root), web.page_urls()[:2])
    out = tmp_path / "md"
    opts = ExportOptions(out=out, crawl=REFETCH_CRAWL, shards="0", push=False, client_options=fakecc.client_options())
    refetcher = Refetcher(opts, RefetchOptions(fetch_only=True, delay=0.0, resolve=web.resolve, no_warc_cache=True))
    (record,) = list(refetcher.run())
    rows = pq.read_table(out / record["file"]).to_pylist()
    assert len(rows) == 2 and all(r["status"] == 200 and not r["markdown"] for r in rows)
    assert not list((out / ".warc-cache").rglob("*.warc.gz"))
    base = ["-c", CRAWL, "markdown", "refetch", "--shards", "0", "--push=false", "--out", str(tmp_path / "x")]
    assert main([*base, "--fetch-only", "--lang", "vie"]) == 2
    assert "--lang cannot be combined with markdown refetch --fetch-only" in capsys.readouterr().err
    assert main([*base, "--extractor", "wet"]) == 2
    assert "use h2m, readability or raw" in capsys.readouterr().err
    events = [json.loads(line)["event"] for line in (out / "run.jsonl").read_text().splitlines()]
    assert events[0] == "start" and "unit_written" in events


def test_refetch_max_redirects_fails_a_longer_chain_as_a_row(
        cc_env: dict[str, str], tmp_path: Path, fakecc: FakeCCServer, web: SynthWeb,
        capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    host = web.page_urls()[0].split("/")[2]
    two, three = f"http://{host}/fault/redirect/2", f"http://{host}/fault/redirect/3"
    _shard(Path(fakecc.site.root), [two, three])
    out = tmp_path / "md"
    # the CLI has no resolver override, so the library call fetches; the CLI's flag is checked on refusal
    args = ["-c", REFETCH_CRAWL, "markdown", "refetch", "--shards", "0", "--push=false", "--out", str(tmp_path / "x")]
    opts = ExportOptions(out=out, crawl=REFETCH_CRAWL, shards="0", push=False, client_options=fakecc.client_options(),
                         command_line="test")
    refetcher = Refetcher(opts, RefetchOptions(fetch_only=True, delay=0.0, max_redirects=2, resolve=web.resolve))
    (record,) = list(refetcher.run())
    rows = {r["url"]: r for r in pq.read_table(out / record["file"]).to_pylist()}
    assert rows[two]["status"] == 200 and rows[two]["final_url"].endswith("/fault/redirect/0")
    failed = rows[three]
    assert failed["status"] == 0 and failed["error"] == "other"
    assert json.loads(failed["meta_json"])["error_detail"].startswith("more than 2 redirects (next: ")
    assert refetcher.phase_lines()[1] == "failures: 1 of 2 fetches (other=1)"
    assert main([*args, "--max-redirects", "-1"]) == 2
    assert "--max-redirects must be 0 or more" in capsys.readouterr().err
