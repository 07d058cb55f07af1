"""The fake CDX API answers like Common Crawl's pywb index: paging, filters, 404s and its faults."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from ccrawl.testing.fakecc import FakeCCServer, SiteSpec
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer, answer, search_range
from ccrawl.url.surt import surt

CRAWL = "CC-MAIN-2024-10"


def _row(url: str, ts: str, status: str = "200", mime: str = "text/html", lang: str = "eng") -> dict[str, str]:
    return {"urlkey": surt(url), "timestamp": ts, "url": url, "mime": mime, "status": status,
            "digest": "D", "length": "10", "offset": "0", "filename": "f.warc.gz", "languages": lang}


ROWS = [
    _row("http://example.com/", "20240101000000"),
    _row("http://example.com/a", "20240102000000", status="404"),
    _row("http://example.com/a/b", "20240103000000", mime="application/pdf"),
    _row("http://www.example.com/c", "20240104000000", lang="deu,eng"),
    _row("http://sub.example.com/d", "20240105000000"),
    _row("http://other.org/", "20240106000000"),
]


@pytest.fixture
def index() -> CdxIndex:
    return CdxIndex({CRAWL: [dict(r) for r in ROWS]}, lines_per_block=2)


def ask(index: CdxIndex, **params: Any) -> tuple[int, Any]:
    query = {k: v if isinstance(v, list) else [v] for k, v in params.items()}
    status, ctype, body = answer(index, CRAWL, query)
    if ctype == "application/json" and "showNumPages" not in params and status == 200:
        return status, [json.loads(line) for line in body.splitlines()]
    return status, json.loads(body) if ctype == "application/json" and body.startswith("{") else body


def urls(rows: list[dict[str, str]]) -> list[str]:
    return [r["url"] for r in rows]


def test_match_types_follow_pywb_key_ranges() -> None:
    assert search_range("http://example.com/path/", "prefix") == ("com,example)/path/", "com,example)/path0")
    assert search_range("http://example.com/x", "host") == ("com,example)/", "com,example*")
    assert search_range("http://example.com/x", "domain") == ("com,example)/", "com,example-")
    assert search_range("com", "domain") == ("com,", "com-")


def test_domain_host_prefix_and_exact(index: CdxIndex) -> None:
    _, rows = ask(index, url="*.example.com", output="json")
    assert urls(rows) == urls(ROWS[:5])
    _, rows = ask(index, url="example.com", matchType="host", output="json")
    assert urls(rows) == urls(ROWS[:4])  # www. folds into the host's SURT, sub. does not
    _, rows = ask(index, url="example.com/a*", output="json")
    assert urls(rows) == ["http://example.com/a", "http://example.com/a/b"]
    _, rows = ask(index, url="example.com/a", output="json")
    assert urls(rows) == ["http://example.com/a"]


def test_show_num_pages_counts_blocks_of_the_range(index: CdxIndex) -> None:
    status, info = ask(index, url="*.example.com", showNumPages="true")
    assert status == 200 and info == {"pages": 1, "pageSize": 5, "blocks": 3}
    _, info = ask(index, url="*.example.com", showNumPages="true", pageSize="1")
    assert info["pages"] == 3


def test_pages_split_the_rows_and_a_page_past_the_end_is_a_400(index: CdxIndex) -> None:
    got = []
    for page in range(3):
        _, rows = ask(index, url="*.example.com", output="json", pageSize="1", page=str(page))
        got += rows
    assert urls(got) == urls(ROWS[:5])
    status, body = ask(index, url="*.example.com", output="json", pageSize="1", page="3")
    assert status == 400 and "Page 3 invalid" in body["message"]


def test_nothing_on_the_page_is_common_crawls_404(index: CdxIndex) -> None:
    status, body = ask(index, url="nothing.example.net/", output="json")
    assert status == 404 and body == {"message": "No Captures found for: nothing.example.net/"}
    status, body = ask(index, url="*.example.com", output="json", filter="=status:500")
    assert status == 404 and body["message"].startswith("No Captures found")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("=status:404", ["http://example.com/a"]),
        ("!=status:200", ["http://example.com/a"]),
        ("~url:.*/a", ["http://example.com/a", "http://example.com/a/b"]),
        ("~url:/a", []),  # a regex matches from the start of the value
        ("mime:pdf", ["http://example.com/a/b"]),  # no prefix: substring
        ("!~languages:(?:.*,)?deu(?:,|$)", [u for u in urls(ROWS[:5]) if u != "http://www.example.com/c"]),
        ("mimetype:application", ["http://example.com/a/b"]),  # pywb's alternative field names
        ("example.com/a/b", ["http://example.com/a/b"]),  # no field: the whole line
    ],
)
def test_filter_rules(index: CdxIndex, expr: str, expected: list[str]) -> None:
    status, rows = ask(index, url="*.example.com", output="json", filter=expr)
    assert (urls(rows) if status == 200 else []) == expected


def test_filters_combine_fields_pick_and_limit(index: CdxIndex) -> None:
    _, rows = ask(index, url="*.example.com", output="json", filter=["=status:200", "~url:.*www"], fl="url,status")
    assert rows == [{"url": "http://www.example.com/c", "status": "200"}]
    _, rows = ask(index, url="*.example.com", output="json", limit="2")
    assert len(rows) == 2


def test_from_and_to_are_inclusive_and_padded(index: CdxIndex) -> None:
    _, rows = ask(index, url="*.example.com", output="json", **{"from": "20240102", "to": "20240104"})
    assert [r["timestamp"][:8] for r in rows] == ["20240102", "20240103", "20240104"]


def test_without_output_json_the_lines_are_cdxj(index: CdxIndex) -> None:
    status, body = ask(index, url="example.com/")
    assert status == 200
    key, ts, obj = body.splitlines()[0].split(" ", 2)
    assert (key, ts) == ("com,example)/", "20240101000000") and json.loads(obj)["url"] == "http://example.com/"


@pytest.fixture
def served(index: CdxIndex) -> Iterator[CdxServer]:
    with CdxServer(index) as srv:
        yield srv


def _get(srv: CdxServer, **params: str) -> bytes:
    with urllib.request.urlopen(f"{srv.url}/{CRAWL}-index?{urlencode(params)}") as resp:
        return bytes(resp.read())


def test_a_truncated_page_ends_cleanly_mid_line(served: CdxServer) -> None:
    whole = _get(served, url="*.example.com", output="json")
    served.index.fail(CRAWL, 0, "truncate", times=1)
    cut = _get(served, url="*.example.com", output="json")  # no error: the body just stops
    assert whole.startswith(cut) and len(cut) < len(whole) and not cut.endswith(b"\n")
    assert _get(served, url="*.example.com", output="json") == whole  # times=1: the next read is whole


def test_a_dropped_page_breaks_the_connection_and_a_503_page_says_so(served: CdxServer) -> None:
    served.index.fail(CRAWL, 0, "drop", times=1)
    with pytest.raises((http.client.IncompleteRead, ConnectionError, urllib.error.URLError)):
        _get(served, url="*.example.com", output="json")
    served.index.fail(CRAWL, 0, "503", times=1)
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(served, url="*.example.com", output="json")
    assert err.value.code == 503
    assert served.index.requests[-1].startswith(f"/{CRAWL}-index?")


def test_the_fake_common_crawl_serves_an_index_built_from_its_warc_files(tmp_path: Path) -> None:
    with FakeCCServer(tmp_path / "cc", SiteSpec(records=12, files=2)) as cc:
        crawl = cc.site.crawls[0]
        with urllib.request.urlopen(f"{cc.url}/{crawl}-index?url=*.example.com&output=json") as resp:
            rows = [json.loads(line) for line in resp.read().splitlines()]
        want = {(c["filename"], c["offset"], c["length"]) for c in cc.site.captures_of(crawl)
                if c["urlkey"].startswith("com,example)")}
        assert rows and {(r["filename"], r["offset"], r["length"]) for r in rows} == want
