"""The url.* operations: one record per URL, error records instead of a stopped stream, shard filtering."""

from __future__ import annotations

import pytest

from ccrawl import ops
from ccrawl.errors import UsageError
from ccrawl.url.canon import canonicalize, url_key
from ccrawl.url.domain import shard_of
from ccrawl.url.surt import surt

URLS = ["https://www.Example.co.uk/a?utm_source=1&id=2", "", "ftp://files.example.com/x", "http://foo.github.io/"]


def run(name: str, **params: object) -> list[dict[str, object]]:
    return [dict(r) for r in ops.get(name)(urls=iter(URLS), **params)]


def test_url_operations_are_registered_with_their_columns() -> None:
    registry = ops.load_all()
    assert registry["url.surt"].columns == ("url", "surt")
    assert registry["url.canon"].columns == ("url", "canonical")
    assert registry["url.key"].columns == ("url", "url_key", "canonical")
    assert registry["url.domain"].columns == ("url", "host", "registered_domain", "shard_key")
    assert registry["url.shard"].columns == ("url", "shard", "shard_key")
    assert not any(registry[n].writes for n in ("url.surt", "url.canon", "url.key", "url.domain", "url.shard"))
    assert [p.name for p in registry["url.shard"].params] == ["urls", "shards", "shard"]


def test_surt_yields_a_record_per_url_and_an_error_record_for_an_empty_one() -> None:
    records = run("url.surt")
    assert len(records) == len(URLS)
    assert records[0] == {"url": URLS[0], "surt": surt(URLS[0])}
    assert records[1]["url"] == "" and "empty URL" in str(records[1]["error"])
    assert records[3] == {"url": URLS[3], "surt": "io,github,foo)/"}


def test_canon_and_key_report_uncrawlable_urls_and_carry_on() -> None:
    canon_records = run("url.canon")
    key_records = run("url.key")
    assert canon_records[0] == {"url": URLS[0], "canonical": "https://www.example.co.uk/a?id=2"}
    assert "scheme 'ftp'" in str(canon_records[2]["error"])
    assert key_records[0]["url_key"] == url_key(canonicalize(URLS[0]))
    assert "error" in key_records[1] and "error" in key_records[2]
    assert key_records[3]["canonical"] == "http://foo.github.io/"


def test_domain_gives_host_registered_domain_and_shard_key() -> None:
    records = run("url.domain")
    assert records[0] == {
        "url": URLS[0],
        "host": "www.example.co.uk",
        "registered_domain": "example.co.uk",
        "shard_key": "example.co.uk",
    }
    assert "no host" in str(records[1]["error"])
    assert records[3]["registered_domain"] == "foo.github.io"
    icann = [dict(r) for r in ops.get("url.domain")(urls=["http://foo.github.io/"], include_private=False)]
    assert icann[0]["registered_domain"] == "github.io"


def test_shard_matches_shard_of_and_filters_to_one_shard() -> None:
    records = run("url.shard", shards=3)
    assert [r["shard"] for r in records] == [shard_of(u, 3) for u in URLS]
    assert records[1] == {"url": "", "shard": 0, "shard_key": ""}
    for only in range(3):
        kept = run("url.shard", shards=3, shard=only)
        assert [r["url"] for r in kept] == [u for u in URLS if shard_of(u, 3) == only]


@pytest.mark.parametrize(("shards", "shard"), [(0, None), (3, 3), (3, -1)])
def test_shard_rejects_impossible_partitions_before_reading_input(shards: int, shard: int | None) -> None:
    def never() -> object:
        raise AssertionError("input was read")
        yield

    with pytest.raises(UsageError):
        ops.get("url.shard")(urls=never(), shards=shards, shard=shard)
