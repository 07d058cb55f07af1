"""The CDX client against the fake index on loopback: paging, push-down, explain, faults, locations."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccrawl.commoncrawl.cdx import CdxQuery, SearchStats, estimate, human_bytes, search
from ccrawl.errors import CcrawlError, NothingMatched, TemporaryFailure, UsageError
from ccrawl.ops.context import OpContext
from ccrawl.testing.fakecc.cdx import CdxIndex, CdxServer, index_warc_tree
from ccrawl.testing.fakecc.site import SiteSpec, build_site
from ccrawl.warc.reader import iter_records

BLOCK = 5  # lines per ZipNum block: small, so a query spans several pages


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cdxsite")
    build_site(root, SiteSpec(records=160, files=4, older_records=20, older_files=1))
    return root


@pytest.fixture(scope="module")
def crawls_rows(site_root: Path) -> dict[str, list[dict[str, str]]]:
    crawls = index_warc_tree(site_root)
    for rows in crawls.values():
        rows.sort(key=lambda r: (r["urlkey"], r["timestamp"]))
    return crawls


@pytest.fixture
def server(crawls_rows: dict[str, list[dict[str, str]]]) -> Iterator[CdxServer]:
    index = CdxIndex({k: list(v) for k, v in crawls_rows.items()}, lines_per_block=BLOCK)
    with CdxServer(index) as srv:
        yield srv


@pytest.fixture
def newest(crawls_rows: dict[str, list[dict[str, str]]]) -> str:
    return max(crawls_rows, key=lambda c: len(crawls_rows[c]))


def options(srv: CdxServer, **extra: Any) -> dict[str, Any]:
    opts: dict[str, Any] = {"cdx_endpoint": srv.url, "global_rate": 0, "backoff": 0.001, "backoff_max": 0.01,
                            "retries": 2}
    opts.update(extra)
    return opts


Result = tuple[list[dict[str, Any]], list[str], SearchStats]


def run(srv: CdxServer, query: CdxQuery, crawls: list[str], **kw: Any) -> Result:
    lines: list[str] = []
    stats = SearchStats()
    rows = list(search(query, crawls, client_options=options(srv, **kw.pop("opts", {})), notice=lines.append,
                       stats=stats, **kw))
    return rows, lines, stats


def expected(rows: list[dict[str, str]], pred: Any = lambda r: True) -> list[tuple[str, str, str]]:
    return [(r["urlkey"], r["timestamp"], r["offset"]) for r in rows if pred(r)]


def keys(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(r["urlkey"], r["timestamp"], str(r["offset"])) for r in rows]


def test_a_wide_query_reads_every_page_in_index_order(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    rows, _, stats = run(server, CdxQuery("*.example.com"), [newest])
    want = expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)"))
    assert keys(rows) == want
    assert stats.pages_read > 1  # the query really spanned several pages
    assert all(r["crawl"] == newest and isinstance(r["offset"], int) for r in rows)


def test_status_is_pushed_as_an_exact_filter(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    rows, _, _ = run(server, CdxQuery("*.example.com", status="200"), [newest])
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)")
                                  and r.get("status") == "200")
    assert all("filter==status:200" in _unquote(q) for q in server.index.requests)


def test_mime_is_pushed_as_a_prefix_regex(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    rows, _, _ = run(server, CdxQuery("*.example.com", mime="text/"), [newest])
    assert rows and all(r["mime"].startswith("text/") for r in rows)
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)")
                                  and r["mime"].startswith("text/"))
    assert any("filter=~mime:text/" in _unquote(q) for q in server.index.requests)


def test_lang_matches_one_of_the_record_languages(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    from collections import Counter

    langs = Counter(r.get("languages", "") for r in crawls_rows[newest] if r["urlkey"].startswith("com,example)"))
    lang = next(code for code, _ in langs.most_common() if code)
    rows, _, _ = run(server, CdxQuery("*.example.com", lang=lang), [newest])
    want = expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)")
                    and lang in r.get("languages", "").split(","))
    assert want and keys(rows) == want


def test_a_raw_negated_filter_goes_to_the_server_verbatim(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    rows, _, _ = run(server, CdxQuery("*.example.com", filters=("!=status:200",)), [newest])
    assert rows and all(r["status"] != 200 for r in rows)
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)")
                                  and r.get("status") != "200")
    assert any("filter=!=status:200" in _unquote(q) for q in server.index.requests)


def test_url_substrings_are_pushed_as_regex_filters_and_rechecked(server: CdxServer, crawls_rows: Any,
                                                                  newest: str) -> None:
    word = _common_word(crawls_rows[newest])
    q = CdxQuery("*.example.com", url_contains=(word,), url_not_contains=("?",))
    rows, _, _ = run(server, q, [newest])
    want = expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)") and word in r["url"]
                    and "?" not in r["url"])
    assert want and keys(rows) == want
    sent = [_unquote(x) for x in server.index.requests if "page=" in x]
    assert all(f"filter=~url:.*{word}.*" in s and "filter=!~url:.*\\?.*" in s for s in sent)


def test_no_push_filters_keeps_url_substrings_off_the_wire_with_the_same_answer(
    server: CdxServer, crawls_rows: Any, newest: str
) -> None:
    word = _common_word(crawls_rows[newest])
    pushed, _, pushed_stats = run(server, CdxQuery("*.example.com", url_contains=(word,)), [newest])
    server.index.requests.clear()
    local, _, local_stats = run(server, CdxQuery("*.example.com", url_contains=(word,), push_filters=False), [newest])
    assert keys(local) == keys(pushed)
    assert not any("url" in _unquote(q).split("filter=")[-1] for q in server.index.requests if "filter=" in q)
    # The push-down saving, in bytes read from the index.
    assert pushed_stats.bytes_read * 3 < local_stats.bytes_read


def test_explain_prints_the_request_the_split_and_the_bytes(server: CdxServer, crawls_rows: Any,
                                                            newest: str) -> None:
    word = _common_word(crawls_rows[newest])
    rows, lines, stats = run(server, CdxQuery("*.example.com", url_contains=(word,)), [newest], explain=True)
    assert lines[0] == f"search: 1 crawl: {newest}"
    prefix = "search: the index server answers "
    assert lines[1].startswith(prefix)
    url = lines[1][len(prefix):]
    assert url == (f"{server.url}/{newest}-index?filter=~url%3A.%2A{word}.%2A&matchType=domain&output=json"
                   "&url=example.com")
    assert lines[2] == f"search: pushed to the server: --url-contains {word}"
    assert lines[3] == f"search: applied here: --url-contains {word} (again, on what the server sent)"
    assert lines[-1] == f"search: read {human_bytes(stats.bytes_read)} from the index ({stats.bytes_read} bytes)"
    assert stats.bytes_read > 0
    # Pasted into another client, the URL (page by page) answers the rows the command read.
    with urllib.request.urlopen(url + "&showNumPages=true") as resp:
        pages = json.loads(resp.read())["pages"]
    pasted = []
    for page in range(pages):
        with urllib.request.urlopen(f"{url}&page={page}") as resp:
            pasted += [json.loads(line) for line in resp.read().splitlines()]
    assert rows and keys(pasted) == keys(rows)


def test_a_page_that_never_reads_is_skipped_and_the_run_says_it_is_incomplete(
    server: CdxServer, crawls_rows: Any, newest: str
) -> None:
    server.index.fail(newest, 1, "503")
    rows, lines, stats = run(server, CdxQuery("*.example.com"), [newest])
    assert f"search: {newest}: CDX page 1: HTTP 503, skipping the page" in lines
    assert lines[-1] == ("search: the result is incomplete, 1 index page could not be read; "
                         "run it again or pass --strict to fail instead")
    full = expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)"))
    assert 0 < len(rows) < len(full) and set(keys(rows)) < set(full)
    assert stats.skipped == [(newest, 1, "HTTP 503")]


def test_strict_fails_on_the_first_page_that_never_reads(server: CdxServer, newest: str) -> None:
    server.index.fail(newest, 1, "503")
    with pytest.raises(TemporaryFailure, match=rf"{newest}: CDX page 1: HTTP 503"):
        run(server, CdxQuery("*.example.com"), [newest], strict=True)


def test_a_truncated_page_is_read_again(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    server.index.fail(newest, 0, "truncate", times=1)
    rows, lines, stats = run(server, CdxQuery("*.example.com"), [newest])
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)"))
    assert stats.rereads == 1 and not stats.skipped and not lines


def test_a_page_truncated_on_every_read_is_skipped(server: CdxServer, newest: str) -> None:
    server.index.fail(newest, 0, "truncate")
    _, lines, stats = run(server, CdxQuery("*.example.com"), [newest], opts={"retries": 1})
    assert stats.skipped and stats.skipped[0][:2] == (newest, 0)
    assert any("CDX page 0: the body was cut short on all 2 reads, skipping the page" in x for x in lines)


def test_a_dropped_connection_is_retried(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    server.index.fail(newest, 0, "drop", times=1)
    rows, _, stats = run(server, CdxQuery("*.example.com"), [newest])
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)"))
    assert not stats.skipped


def test_no_captures_found_is_zero_rows_and_the_op_says_nothing_matched(server: CdxServer, newest: str) -> None:
    rows, lines, _ = run(server, CdxQuery("nothing-here.example.invalid/"), [newest])
    assert rows == [] and not lines
    # A query whose pages exist but whose filter leaves nothing: the server's 404 per page.
    rows, _, _ = run(server, CdxQuery("*.example.com", status="599"), [newest])
    assert rows == []
    from ccrawl.ops.search import cc_search

    with pytest.raises(NothingMatched):
        list(cc_search(url="*.example.com", crawl=newest, status="599", ctx=OpContext.of(options(server),
                                                                                         notice=lambda _: None)))


def test_an_unknown_crawl_is_an_error_not_an_empty_result(server: CdxServer) -> None:
    with pytest.raises(UsageError, match="no such crawl"):
        run(server, CdxQuery("example.com"), ["CC-MAIN-1999-01"])


def test_a_bad_regex_is_a_usage_error_before_any_request(server: CdxServer, newest: str) -> None:
    with pytest.raises(UsageError, match="regex"):
        run(server, CdxQuery("example.com", filters=("~url:(",)), [newest])
    assert server.index.requests == []


def test_locations_point_at_the_records_in_the_warc_files(server: CdxServer, site_root: Path, newest: str) -> None:
    rows, _, _ = run(server, CdxQuery("*.example.com"), [newest], locations=True)
    assert rows and set(rows[0]) == {"filename", "offset", "length"}
    full, _, _ = run(server, CdxQuery("*.example.com"), [newest])
    for loc, row in list(zip(rows, full, strict=True))[:10]:
        data = (site_root / loc["filename"]).read_bytes()[loc["offset"] : loc["offset"] + loc["length"]]
        import io

        records = list(iter_records(io.BytesIO(data), name=loc["filename"]))
        assert len(records) == 1 and records[0].url == row["url"]


def test_limit_stops_reading_pages(server: CdxServer, newest: str) -> None:
    rows, _, stats = run(server, CdxQuery("*.example.com"), [newest], limit=3, workers=1)
    assert len(rows) == 3
    assert stats.pages_read == 1


def test_from_and_to_are_pushed_and_bound_the_timestamps(server: CdxServer, crawls_rows: Any, newest: str) -> None:
    stamps = sorted(r["timestamp"] for r in crawls_rows[newest])
    lo, hi = stamps[len(stamps) // 4], stamps[3 * len(stamps) // 4]
    rows, _, _ = run(server, CdxQuery("*.example.com", from_ts=lo, to_ts=hi), [newest])
    assert keys(rows) == expected(crawls_rows[newest], lambda r: r["urlkey"].startswith("com,example)")
                                  and lo <= r["timestamp"] <= hi)
    assert any(f"from={lo}" in q and f"to={hi}" in q for q in server.index.requests)


def test_estimate_reports_pages_and_blocks(server: CdxServer, newest: str) -> None:
    (row,) = estimate(CdxQuery("*.example.com"), [newest], client_options=options(server), lines_per_block=BLOCK)
    assert row["crawl"] == newest and row["pages"] >= 2 and row["blocks"] >= 5
    assert row["max_captures"] == row["blocks"] * BLOCK


def test_several_crawls_come_in_crawl_order(server: CdxServer, crawls_rows: Any) -> None:
    crawls = sorted(crawls_rows)[:3]
    rows, lines, _ = run(server, CdxQuery("*.example.com"), crawls, explain=True)
    assert [r["crawl"] for r in rows] == sorted((r["crawl"] for r in rows), key=crawls.index)
    assert lines[0] == f"search: 3 crawls: {', '.join(crawls)}"
    assert sum(1 for x in lines if x.startswith("search: the index server answers")) == 3


def test_an_unreachable_index_is_exit_8(newest: str) -> None:
    from ccrawl.errors import Unreachable

    opts = {"cdx_endpoint": "http://127.0.0.1:9", "global_rate": 0, "backoff": 0.001, "backoff_max": 0.01,
            "retries": 1}
    with pytest.raises(Unreachable):
        list(search(CdxQuery("example.com"), [newest], client_options=opts, notice=lambda _: None))


def test_server_errors_other_than_paging_are_reported_not_skipped(server: CdxServer, newest: str) -> None:
    with pytest.raises(CcrawlError):
        run(server, CdxQuery("example.com", match="exact", filters=("~url:[",)), [newest])


def _unquote(q: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(q)


def _common_word(rows: list[dict[str, str]]) -> str:
    """A path word that some but not most example.com URLs hold."""
    from collections import Counter

    words = Counter(w for r in rows if r["urlkey"].startswith("com,example)")
                    for w in set(r["url"].split("/", 3)[-1].replace("?", "/").split("/")) if len(w) > 3)
    total = sum(1 for r in rows if r["urlkey"].startswith("com,example)"))
    for word, n in words.most_common():
        if n <= total // 4:
            return word
    raise AssertionError("no selective word in the fake site's URLs")
