"""Conditional refetch: validators from an earlier pass are sent, and a 304 is a row with no body."""

from __future__ import annotations

from ccrawl.testing.synthweb import LAST_MODIFIED, SynthWeb


def test_first_pass_stores_the_validators_the_server_sent(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    r = fetch_one(config(), synth.url(fresh_host(), "/p/2"))
    assert r.status == 200 and not r.unchanged
    assert r.etag.startswith('"') and r.last_modified == LAST_MODIFIED


def test_etag_from_an_earlier_pass_gets_a_304_row_with_no_body_and_no_digest(
    synth: SynthWeb, config, fetch_one, fresh_host
) -> None:
    host = fresh_host()
    url = synth.url(host, "/p/2")
    first = fetch_one(config(), url)
    second = fetch_one(config(), url, etag=first.etag)
    assert (second.status, second.error, second.unchanged) == (304, "", True)
    assert second.body == b"" and second.digest == ""
    assert second.etag == first.etag
    sent = [hdrs for _, name, path, hdrs in synth.stats.log if name == host and path == "/p/2"]
    assert sent[-1]["If-None-Match"] == first.etag
    assert ("If-None-Match", first.etag) in second.req_headers


def test_last_modified_alone_gets_a_304_through_if_modified_since(
    synth: SynthWeb, config, fetch_one, fresh_host
) -> None:
    host = fresh_host()
    r = fetch_one(config(), synth.url(host, "/p/3"), last_modified=LAST_MODIFIED)
    assert (r.status, r.unchanged) == (304, True)
    sent = [hdrs for _, name, _, hdrs in synth.stats.log if name == host]
    assert sent[-1]["If-Modified-Since"] == LAST_MODIFIED and "If-None-Match" not in sent[-1]


def test_stale_etag_gets_the_full_body_again(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    r = fetch_one(config(), synth.url(fresh_host(), "/p/3"), etag='"not-the-current-one"')
    assert (r.status, r.unchanged) == (200, False)
    assert r.body and r.digest


def test_no_validators_means_no_conditional_headers_are_sent(synth: SynthWeb, config, fetch_one, fresh_host) -> None:
    host = fresh_host()
    fetch_one(config(), synth.url(host, "/p/1"))
    sent = [hdrs for _, name, _, hdrs in synth.stats.log if name == host]
    assert "If-None-Match" not in sent[-1] and "If-Modified-Since" not in sent[-1]


def test_not_modified_rows_are_counted_in_the_stats(synth: SynthWeb, config, fetch_many, fresh_host) -> None:
    host = fresh_host()
    first = fetch_many(config(), [synth.url(host, "/p/0")])[0]
    stats: dict = {}
    fetch_many(config(), [synth.url(host, "/p/0")], stats=stats, etag=first.etag)
    assert stats["not_modified"] == 1 and stats["body_bytes"] == 0
