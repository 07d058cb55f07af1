"""What a CDX query sends: the seed's request URL, each flag's filter, and what stays local."""

from __future__ import annotations

import pytest

from ccrawl.commoncrawl.cdx import human_bytes
from ccrawl.commoncrawl.cdx_query import CdxQuery
from ccrawl.errors import UsageError

SEED_URL = (
    "https://index.commoncrawl.org/CC-MAIN-2026-30-index?filter=~url%3A.%2A%2Fbudget.%2A&matchType=domain"
    "&output=json&url=senate.gov"
)


def test_the_seed_example_gives_the_seed_request_url() -> None:
    q = CdxQuery("*.senate.gov", url_contains=("/budget",))
    assert q.request_url("https://index.commoncrawl.org/CC-MAIN-2026-30-index") == SEED_URL
    assert q.pushed() == ["--url-contains /budget"]
    assert q.rechecked() == ["--url-contains /budget"]


def test_the_seed_byte_count_is_printed_the_seed_way() -> None:
    assert human_bytes(50576) == "49.4 KB"
    assert human_bytes(75 * 1024 * 1024) == "75.0 MB"
    assert human_bytes(512) == "512 B"


@pytest.mark.parametrize(
    ("pattern", "url", "match"),
    [("*.example.com", "example.com", "domain"), ("example.com/*", "example.com/", "prefix"),
     ("example.com/a", "example.com/a", "exact")],
)
def test_patterns_become_url_and_match_type(pattern: str, url: str, match: str) -> None:
    assert CdxQuery(pattern).target() == (url, match)


def test_explicit_match_wins_over_the_pattern() -> None:
    assert CdxQuery("example.com", match="host").target() == ("example.com", "host")


def test_each_flag_becomes_its_filter() -> None:
    q = CdxQuery("example.com", status="200", mime="text/html", lang="eng", filters=("!=status:404",),
                 url_not_contains=("?",), from_ts="2023-06", to_ts="2024")
    params = q.params()
    filters = [v for k, v in params if k == "filter"]
    assert filters == ["=status:200", "~mime:text/html", "~languages:(?:.*,)?eng(?:,|$)", "!=status:404",
                       "!~url:.*\\?.*"]
    assert ("from", "202306") in params and ("to", "2024") in params
    assert [k for k, _ in params] == sorted(k for k, _ in params)


def test_no_push_filters_keeps_only_the_url_substrings_here() -> None:
    q = CdxQuery("example.com", status="200", url_contains=("a.b",), push_filters=False)
    assert [v for k, v in q.params() if k == "filter"] == ["=status:200"]
    assert q.local_only() == ["--url-contains a.b"]
    # The substring is literal: a dot is a dot.
    assert q.keeps({"url": "http://example.com/a.b", "status": "200", "timestamp": "2024"})
    assert not q.keeps({"url": "http://example.com/axb", "status": "200", "timestamp": "2024"})


def test_local_recheck_drops_rows_a_lax_server_let_through() -> None:
    q = CdxQuery("example.com", status="200", lang="eng", url_contains=("/x",), from_ts="2024")
    good = {"url": "http://example.com/x", "status": "200", "languages": "deu,eng", "timestamp": "20240101000000"}
    assert q.keeps(good)
    assert not q.keeps({**good, "status": "404"})
    assert not q.keeps({**good, "languages": "english"})
    assert not q.keeps({**good, "url": "http://example.com/y"})
    assert not q.keeps({**good, "timestamp": "20231231235959"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"url": ""}, "needs a URL"), ({"url": "x", "match": "fuzzy"}, "--match"),
     ({"url": "x", "status": "ok"}, "--status"), ({"url": "x", "lang": "English"}, "--lang"),
     ({"url": "x", "filters": ("~url:(",)}, "regex"), ({"url": "x", "from_ts": "yesterday"}, "--from")],
)
def test_bad_flags_are_usage_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        CdxQuery(**kwargs).params()  # type: ignore[arg-type]
