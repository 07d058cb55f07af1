"""news.search yields record batches (the index's columns, computed by Arrow; the scan's rows a chunk at a
time): every output format is the per-record renderer's bytes over the rows the per-row search gave, on the
published fake month and on a shard of hostile values."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccrawl import ops, rowbatch
from ccrawl.commoncrawl.news.schema import arrow_schema, cdx_row
from ccrawl.commoncrawl.news.search import SearchReport, host_matches
from ccrawl.hub.localhub import LocalRepo
from ccrawl.ops.context import OpContext
from ccrawl.ops.news import SEARCH_COLUMNS, news_search, news_search_batches
from ccrawl.testing.fakecc import FakeCCServer
from ccrawl.testing.fakecc.news import NewsSite
from tests.batchparity import assert_same_ndjson, assert_same_output

from .conftest import MONTH, Published, cli_env, client_options, run_cli


def _per_row(hub: Path, repo: str, host: str) -> list[dict[str, Any]]:
    """The rows as the per-row search made them: each shard's matches, sorted by archive and offset, as CDX."""
    out: list[dict[str, Any]] = []
    for shard in sorted((LocalRepo(hub, repo).snapshot_dir() / "data/2026/07").glob("*.parquet")):
        rows = [r for r in pq.read_table(shard).to_pylist() if host_matches(r["url_host_name"], host)]
        out += [cdx_row(r) for r in sorted(rows, key=lambda r: (r["warc_filename"], r["warc_record_offset"]))]
    return out


def _batches(server: FakeCCServer, tmp: Path, hub: Path, repo: str, host: str, **kw: Any) -> list[pa.RecordBatch]:
    ctx = OpContext.of(client_options(server, tmp), notice=lambda _m: None)
    return list(news_search_batches(host=host, year=2026, month=7, repo=repo, hub=str(hub), report=SearchReport(),
                                    ctx=ctx, **kw))


def _top_host(site: NewsSite) -> str:
    return Counter(r["url"].split("/")[2] for r in site.responses(MONTH)).most_common(1)[0][0]


@pytest.mark.parametrize("no_index", [False, True], ids=["index", "scan"])
def test_every_format_is_the_per_record_renderers(published: Published, news_server: FakeCCServer,
                                                  news_site: NewsSite, tmp_path: Path, no_index: bool) -> None:
    host = _top_host(news_site)
    want = _per_row(published.hub, published.repo, host)
    got = _batches(news_server, tmp_path, published.hub, published.repo, host, no_index=no_index)
    assert want and sum(b.num_rows for b in got) == len(want)
    assert all(b.schema.types == [pa.string()] * len(SEARCH_COLUMNS) for b in got)
    assert assert_same_output(lambda: want, lambda: got, SEARCH_COLUMNS,
                              fields=((), ("url", "offset", "timestamp"))) == len(want)
    assert_same_ndjson(want, got)


def test_a_shard_of_hostile_values_renders_as_its_rows_do(published: Published, news_server: FakeCCServer,
                                                          tmp_path: Path) -> None:
    src = sorted((published.snapshot / "data/2026/07").glob("*.parquet"))[0]
    table = pq.read_table(src)
    base = table.slice(0, 1).to_pylist()[0]
    odd = [
        {"url": 'https://hostile.example/a,"b"\tc\né中😀\u2028', "content_mime_type": None, "fetch_redirect": None},
        {"url": "https://www.hostile.example/x", "fetch_time": None, "fetch_status": None, "content_digest": ""},
        {"url": "https://hostile.example/y", "content_languages": "eng,fra", "content_charset": "utf-8\x85",
         "warc_record_offset": 2**63 - 1, "warc_record_length": 0},
        {"url": "https://hostile.example/z", "warc_record_offset": 5, "warc_filename": "zzz/a\tb.warc.gz"},
        {"url": "https://hostile.example/z", "warc_record_offset": 5, "warc_filename": "zzz/a\tb.warc.gz",
         "fetch_status": 404},  # the same archive and offset: the per-row sort keeps them in file order
    ]
    rows = [{**base, **o, "url_host_name": o["url"].split("/")[2], "url_surtkey": "example,hostile)/" + str(i)}
            for i, o in enumerate(odd)]
    shard = pa.concat_tables([table, pa.Table.from_pylist(rows, schema=arrow_schema())])
    hub = tmp_path / "hub"
    repo = LocalRepo(hub, published.repo)
    repo.create()
    from ccrawl.hub.repo import Add

    pq.write_table(shard, tmp_path / src.name)
    repo.commit([Add(f"data/2026/07/{src.name}", tmp_path / src.name)], message="hostile")
    want = _per_row(hub, published.repo, "hostile.example")
    got = _batches(news_server, tmp_path, hub, published.repo, "hostile.example")
    assert len(want) == 5 and sum(b.num_rows for b in got) == 5
    assert assert_same_output(lambda: want, lambda: got, SEARCH_COLUMNS, fields=((), ("status", "url"))) == 5
    assert_same_ndjson(want, got)
    ctx = OpContext.of(client_options(news_server, tmp_path), notice=lambda _m: None)
    args = {"host": "hostile.example", "year": 2026, "month": 7, "repo": published.repo, "hub": str(hub), "ctx": ctx}
    assert list(news_search(**args)) == want  # type: ignore[arg-type]
    assert list(ops.get("news.search")(**args)) == want
    limited = list(news_search_batches(**args, limit=3))  # type: ignore[arg-type]
    assert [r for b in limited for r in rowbatch.batch_rows(b)] == want[:3]


def test_the_cli_writes_the_per_record_renderers_bytes(published: Published, news_server: FakeCCServer,
                                                      news_site: NewsSite, tmp_path: Path) -> None:
    from ccrawl.output import OutputOptions, emit

    host = _top_host(news_site)
    want_rows = _per_row(published.hub, published.repo, host)
    env = cli_env(news_server, tmp_path)
    for fmt in ("jsonl", "csv", "tsv", "table"):
        done = run_cli(["-o", fmt, "news", "search", host, "--year", "2026", "--month", "7", "--repo", published.repo,
                        "--hub", str(published.hub)], env)
        assert done.returncode == 0, done.stderr.decode()
        want = io.StringIO()
        emit(want_rows, OutputOptions(fmt=fmt), columns=SEARCH_COLUMNS, stream=want)
        assert done.stdout == want.getvalue().encode("utf-8")
        if fmt == "jsonl":
            assert [json.loads(x)["url"] for x in done.stdout.decode().splitlines()] == [r["url"] for r in want_rows]
