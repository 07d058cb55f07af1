"""Redirects are followed by hand: chains recorded, loops and overlong chains become 'other' rows."""

from __future__ import annotations

from ccrawl.testing.synthweb import SynthWeb


def test_redirect_chain_is_followed_and_final_url_and_hops_recorded(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/redirect/3"))
    assert (r.status, r.error) == (200, "")
    assert r.final_url == synth.url("site0.test", "/fault/redirect/0")
    assert r.redirects == [synth.url("site0.test", f"/fault/redirect/{n}") for n in (2, 1, 0)]
    assert r.meta()["redirects"] == r.redirects
    assert r.target_url == r.final_url


def test_url_that_does_not_move_has_an_empty_final_url(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/p/1"))
    assert r.final_url == "" and r.redirects == [] and r.target_url == r.url


def test_exactly_max_redirects_hops_is_allowed(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_redirects=3), synth.url("site0.test", "/fault/redirect/3"))
    assert (r.status, r.error) == (200, "")


def test_one_hop_more_than_max_redirects_is_an_other_row(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(max_redirects=2), synth.url("site0.test", "/fault/redirect/3"))
    assert (r.status, r.error) == (0, "other")
    assert "more than 2 redirects" in r.error_detail
    assert len(r.redirects) == 2


def test_redirect_loop_is_an_other_row_naming_the_loop(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/loop/a"))
    assert (r.status, r.error) == (0, "other")
    assert "loop" in r.error_detail and "/fault/loop/a" in r.error_detail
    assert r.redirects == [synth.url("site0.test", "/fault/loop/b")]


def test_redirect_to_itself_is_a_loop(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/self-redirect"))
    assert (r.status, r.error) == (0, "other")
    assert "loop" in r.error_detail


def test_cross_host_redirect_lands_on_the_other_host(synth: SynthWeb, config, fetch_one) -> None:
    r = fetch_one(config(), synth.url("site0.test", "/fault/redirect-cross"))
    assert r.status == 200
    assert r.final_url == synth.url("site1.test", "/p/1")
    assert b"site1.test" in r.body
